"""What the code that computed a kept result was: installed packages' versions, a source file's
digest. Whatever keeps a result computed by code under such a key computes it again when the
key changes, with no version number to bump by hand."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import unicodedata
import uuid
from functools import cache
from pathlib import Path

from morpheus_pipelines.platform.text import normalise


def package_version(name: str) -> str:
    """The installed version of the distribution ``name`` (``unknown`` when not installed)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def source_digest(path: str | Path) -> str:
    """The SHA-256 of the file at ``path``: any edit to it changes the digest. A file that
    cannot be read gives a digest of its own each call, so nothing kept under it is reused."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return f"unreadable-{uuid.uuid4().hex}"


def normalisation() -> str:
    """What a normal form and a registrable root (``platform.text.normalise``) depend on
    besides the value: that module's source (any edit to it counts, so no version is left to
    bump by hand), the public-suffix list (the one bundled with ``tldextract``), the IDNA
    codec and the Unicode tables. A result kept under another ``normalisation()`` is
    computed again."""
    return json.dumps(
        {
            "source": _normalise_source(),
            "public_suffix_list": package_version("tldextract"),
            "idna": package_version("idna"),
            "unicode": unicodedata.unidata_version,
        },
        sort_keys=True,
    )


@cache
def _normalise_source() -> str:
    return source_digest(normalise.__file__)
