"""Per-subscription API keys: made once, shown once, stored as a SHA-256 (docs/leads.md).

A secret key is ``mk_<key id>_<secret>``, a publishable one ``mpk_<key id>_<secret>`` (the
prefix says at a glance which may be put in a web page): the id finds the row, then the whole
key's hash is compared with the stored one in constant time, so neither an index lookup on a
secret-derived value nor an early-exit comparison tells a caller how close a guess was."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from typing import NamedTuple

KEY_PREFIX = "mk_"
PUBLISHABLE_KEY_PREFIX = "mpk_"


def new_key(key_id: uuid.UUID, *, publishable: bool = False) -> str:
    """A fresh key for ``key_id``: ``mk_`` (``mpk_`` for a publishable key), the id, and 43
    URL-safe characters (256 bits)."""
    prefix = PUBLISHABLE_KEY_PREFIX if publishable else KEY_PREFIX
    return f"{prefix}{key_id.hex}_{secrets.token_urlsafe(32)}"


def key_id_of(presented: str) -> uuid.UUID | None:
    """The key id a presented key names, or ``None`` when it is not shaped like a key."""
    prefix = next(
        (p for p in (KEY_PREFIX, PUBLISHABLE_KEY_PREFIX) if presented.startswith(p)), None
    )
    if prefix is None:
        return None
    key_id, separator, secret = presented[len(prefix) :].partition("_")
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


class KeyEntry(NamedTuple):
    """An active key as the directory holds it. A publishable key may only create leads, and
    only from its origins (docs/leads.md, "Browser forms")."""

    subscription_id: uuid.UUID
    key_hash: str
    publishable: bool = False
    origins: frozenset[str] = frozenset()


Found = KeyEntry | tuple[uuid.UUID, str]

# What a presented key is compared with when its id names no active key: the same hash and
# the same comparison as for a known key, so the answer takes the same time either way.
_NO_KEY_HASH = key_hash(f"{KEY_PREFIX}{uuid.UUID(int=0).hex}_none")


class KeyDirectory:
    """Every active key, held in memory and reloaded in full when older than
    ``ttl_seconds``: a key created or revoked with ``morpheus api-key`` takes effect within
    that time (docs/leads.md). Authenticating is then the same dictionary lookup and the same
    constant-time comparison whether or not the key id exists, and no request, however many
    unknown ids it tries, costs a query of its own (docs/security.md)."""

    def __init__(
        self,
        load: Callable[[], dict[uuid.UUID, Found]],
        ttl_seconds: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load
        self._ttl = ttl_seconds
        self._clock = clock
        self._entries: dict[uuid.UUID, KeyEntry] | None = None
        self._origins: frozenset[str] = frozenset()
        self._attempted_at = float("-inf")  # the last load, whether or not it succeeded
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._entries is not None

    def due(self) -> bool:
        """Whether the caller should :meth:`reload` before verifying: no view yet, or the
        last attempt is older than the TTL."""
        return self._entries is None or self._attempt_is_old()

    def _attempt_is_old(self) -> bool:
        return self._clock() - self._attempted_at > self._ttl

    def expire(self) -> None:
        """Reload before the next verification (a key was just created or revoked)."""
        self._attempted_at = float("-inf")

    def reload(self) -> None:
        """Load every active key, at most once a ``ttl_seconds`` whether or not the load
        succeeds: while the database is away, one request a second pays for trying, not
        every request. A concurrent caller goes on with the current view, or, before the
        first load, waits for the attempt under way and then takes its outcome (check
        :attr:`loaded`) instead of trying again."""
        if not self._lock.acquire(blocking=self._entries is None):
            return
        try:
            if self._attempt_is_old():
                self._attempted_at = self._clock()
                entries = {key_id: KeyEntry(*found) for key_id, found in self._load().items()}
                self._entries = entries
                self._origins = frozenset(
                    origin for entry in entries.values() for origin in entry.origins
                )
        finally:
            self._lock.release()

    def verify(self, presented: str) -> tuple[uuid.UUID, uuid.UUID] | None:
        """``(key id, subscription id)`` of an active key whose whole hash matches."""
        key_id = key_id_of(presented)
        entry = (self._entries or {}).get(key_id) if key_id is not None else None
        matches = same_hash(entry[1] if entry else _NO_KEY_HASH, key_hash(presented))
        if entry is None or not matches:
            return None
        assert key_id is not None
        return key_id, entry[0]

    def entry(self, key_id: uuid.UUID) -> KeyEntry | None:
        """What the directory holds of an active key (publishable? its origins?)."""
        return (self._entries or {}).get(key_id)

    def serves_origin(self, origin: str) -> bool:
        """Whether some active publishable key names ``origin``: a browser's preflight from it
        is answered (the preflight carries no key, so this is all it can be judged by)."""
        return origin in self._origins
