"""Per-subscription API keys: made once, shown once, stored as a SHA-256 (docs/leads.md).

A key is ``mk_<key id>_<secret>``: the id finds the row, then the whole key's hash is
compared with the stored one in constant time, so neither an index lookup on a
secret-derived value nor an early-exit comparison tells a caller how close a guess was."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
import uuid
from collections.abc import Callable

KEY_PREFIX = "mk_"


def new_key(key_id: uuid.UUID) -> str:
    """A fresh key for ``key_id``: ``mk_``, the id, and 43 URL-safe characters (256 bits)."""
    return f"{KEY_PREFIX}{key_id.hex}_{secrets.token_urlsafe(32)}"


def key_id_of(presented: str) -> uuid.UUID | None:
    """The key id a presented key names, or ``None`` when it is not shaped like a key."""
    if not presented.startswith(KEY_PREFIX):
        return None
    key_id, separator, secret = presented[len(KEY_PREFIX) :].partition("_")
    if not separator or not secret or len(key_id) != 32:
        return None
    try:
        return uuid.UUID(hex=key_id)
    except ValueError:
        return None


def key_hash(key: str) -> str:
    """What the database stores; the key itself is never stored or logged."""
    return hashlib.sha256(key.encode()).hexdigest()


def same_hash(stored: str, presented: str) -> bool:
    """Constant-time comparison, so timing tells nothing about how much of a key matched."""
    return hmac.compare_digest(stored.encode(), presented.encode())


Found = tuple[uuid.UUID, str] | None  # (subscription id, stored hash), or unknown/revoked


class KeyCache:
    """Recent answers of the lookup by key id, for ``ttl_seconds``: a key revoked with
    ``morpheus api-key revoke`` stops working within that time (docs/leads.md). Unknown ids
    are remembered too, so a caller retrying a bad key does not cost a query each time."""

    def __init__(self, ttl_seconds: float = 1.0, *, clock: Callable[[], float] = time.monotonic):
        self._ttl = ttl_seconds
        self._clock = clock
        self._entries: dict[str, tuple[float, Found]] = {}
        self._lock = threading.Lock()

    def get(self, digest: str) -> tuple[bool, Found]:
        with self._lock:
            entry = self._entries.get(digest)
        if entry is None or entry[0] < self._clock():
            return False, None
        return True, entry[1]

    def put(self, digest: str, found: Found) -> None:
        with self._lock:
            if len(self._entries) > 10_000:  # bounded: bad keys cannot grow it without end
                self._entries.clear()
            self._entries[digest] = (self._clock() + self._ttl, found)
