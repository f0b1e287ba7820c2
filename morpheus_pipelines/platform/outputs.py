"""Where reports and per-tenant event files go: ``MORPHEUS_REPORTS_URL`` (docs/reports.md,
"Where reports go"), through fsspec (s3fs for ``s3://``).

Steps write their files on local disk under ``staging_home/reports/`` (atomically, as
before), then :meth:`ReportOutputs.publish` puts each one under the URL and says where a
reader finds it:

* unset (the default): ``$MORPHEUS_HOME/reports`` itself. The files are written in place, so
  publishing copies nothing; the link is their ``file://`` URL.
* another local folder (a path or ``file://``): written in ``$MORPHEUS_HOME/spool/…``, then
  copied into the folder, a temporary name renamed into place.
* ``s3://bucket/prefix`` (any fsspec protocol): written in the spool, then uploaded (one PUT
  replaces an object whole, so a reader never sees half a file). Credentials and endpoint are
  the standard AWS ones (``AWS_ACCESS_KEY_ID``…, an instance role, ``AWS_ENDPOINT_URL_S3`` for
  an S3-compatible server).

The link is ``MORPHEUS_REPORTS_PUBLIC_URL`` + the file's key when that is set (a web server,
CloudFront, or the S3 console's object URL in front of the bucket), else the stored URL
itself. Never a presigned URL: it expires (seven days at most), so a link in the UI or in a
manager's mailbox would go dead, and while it lives anyone it is forwarded to can open it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit
from urllib.request import url2pathname

REPORTS = "reports"


@dataclass(frozen=True)
class Published:
    """One file under ``MORPHEUS_REPORTS_URL``: ``key`` relative to it, ``stored`` its full
    URL (``file://…`` or ``s3://…``), ``link`` what a reader opens."""

    key: str
    stored: str
    link: str


def _local_folder(url: str) -> Path | None:
    """The folder a local URL names (a plain path or ``file://``), else ``None``."""
    if "://" not in url:
        return Path(url).expanduser().resolve()
    parts = urlsplit(url)
    if parts.scheme == "file":
        return Path(url2pathname(parts.path)).resolve()
    return None


class ReportOutputs:
    """``MORPHEUS_REPORTS_URL`` as seen by one process (see the module)."""

    def __init__(self, url: str, *, home: str | Path, public_url: str = "") -> None:
        self.home = Path(home).expanduser().resolve()
        default = self.home / REPORTS
        folder = default if not url else _local_folder(url)
        self.local_folder = folder
        self.in_place = folder == default
        if folder is not None:
            self.url = folder.as_uri()
        else:
            self.url = url.rstrip("/")
        self.public_url = public_url.rstrip("/")
        if self.in_place:
            self.staging_home = self.home
        else:
            digest = hashlib.sha256(self.url.encode()).hexdigest()[:12]
            self.staging_home = self.home / "spool" / digest
        self._fs: Any = None

    def __repr__(self) -> str:
        return f"ReportOutputs({self.url!r})"

    @property
    def staging_root(self) -> Path:
        """Where a step writes a file whose key is its path below this folder."""
        return self.staging_home / REPORTS

    def key_of(self, path: str | Path) -> str:
        """The key of a file written under :attr:`staging_root`."""
        return Path(path).resolve().relative_to(self.staging_root.resolve()).as_posix()

    def path_of(self, key: str) -> Path:
        return self.staging_root / key

    def stored_url(self, key: str) -> str:
        if self.local_folder is not None:
            return (self.local_folder / key).as_uri()
        return f"{self.url}/{key}"

    def link(self, key: str) -> Published:
        stored = self.stored_url(key)
        link = f"{self.public_url}/{quote(key)}" if self.public_url else stored
        return Published(key=key, stored=stored, link=link)

    def _filesystem(self) -> Any:
        if self._fs is None:
            import fsspec  # s3fs and its AWS client load only for a remote URL

            protocol = urlsplit(self.url).scheme
            # A new instance, not fsspec's cached one: it would keep the endpoint and
            # credentials of whichever test or process made it first.
            self._fs = fsspec.filesystem(protocol, skip_instance_cache=True)
        return self._fs

    def _remote_path(self, key: str) -> str:
        return self.stored_url(key).split("://", 1)[1]

    def publish(self, path: str | Path) -> Published:
        """Put a file written under :attr:`staging_root` under the URL; where it is now."""
        key = self.key_of(path)
        if self.in_place:
            return self.link(key)
        if self.local_folder is not None:
            target = self.local_folder / key
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
            with os.fdopen(handle, "wb") as out, Path(path).open("rb") as source:
                while chunk := source.read(1 << 20):
                    out.write(chunk)
            os.replace(temporary, target)
        else:
            self._filesystem().put_file(str(path), self._remote_path(key))
        return self.link(key)

    def publish_all(self, files: dict[str, Path]) -> dict[str, Published]:
        return {name: self.publish(path) for name, path in files.items()}

    def read_bytes(self, key: str) -> bytes:
        """A published file's content, from wherever it is stored (another host wrote it)."""
        if self.local_folder is not None:
            return (self.local_folder / key).read_bytes()
        return self._filesystem().cat_file(self._remote_path(key))

    def fetch(self, key: str) -> Path:
        """The published file copied to its staging path, to be appended to and published
        again; no published file → no staging file either. Local stores: nothing to do."""
        path = self.path_of(key)
        if self.in_place:
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        if self.local_folder is not None:
            if (self.local_folder / key).exists():
                path.write_bytes((self.local_folder / key).read_bytes())
            return path
        fs = self._filesystem()
        remote = self._remote_path(key)
        fs.invalidate_cache()
        if fs.exists(remote):
            fs.get_file(remote, str(path))
        return path
