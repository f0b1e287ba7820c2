"""The keys kept results are filed under: package versions and source digests."""

from __future__ import annotations

from pathlib import Path

import pytest

from morpheus_pipelines.platform import versions
from morpheus_pipelines.platform.versions import package_version, source_digest


def test_a_package_that_is_not_installed_has_an_unknown_version() -> None:
    assert package_version("no-such-distribution-here") == "unknown"
    assert package_version("tldextract") not in ("", "unknown")


def test_any_edit_to_a_source_changes_its_digest(tmp_path: Path) -> None:
    source = tmp_path / "rules.py"
    source.write_text("ROOT = 'a'\n")
    before = source_digest(source)
    assert source_digest(source) == before
    source.write_text("ROOT = 'a'  # a comment\n")
    assert source_digest(source) != before


def test_an_unreadable_source_never_gives_the_same_digest_twice(tmp_path: Path) -> None:
    missing = tmp_path / "missing.py"
    assert source_digest(missing) != source_digest(missing)


@pytest.mark.parametrize("package", ["tldextract", "idna"])
def test_the_normalisation_names_the_source_and_the_libraries_roots_depend_on(
    monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    keys = {versions.normalisation()}
    assert versions.normalisation() in keys
    monkeypatch.setattr(versions, "_normalise_source", lambda: "an edited module")
    keys.add(versions.normalisation())
    monkeypatch.setattr(versions.unicodedata, "unidata_version", "99.0.0")
    keys.add(versions.normalisation())
    version = versions.package_version
    monkeypatch.setattr(
        versions, "package_version", lambda name: "next" if name == package else version(name)
    )
    keys.add(versions.normalisation())
    assert len(keys) == 4
