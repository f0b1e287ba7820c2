"""The cyclic garbage collector and a process's long-lived heap.

A full collection walks every object the collector tracks. A process that has imported
Dagster, pandas and the code location holds a few hundred thousand of them, none of which
will ever be garbage, and work that allocates many short-lived containers (the tuples
``json.dumps(sort_keys=True)`` builds, an HTTP client's dictionaries per request) sets off
collections that walk them all again: serialising the routing rules' inputs took 0.36 s
instead of 0.08 s, and the first day's enrichment at 1,000,000 tenants about 3 s more
(docs/decisions/0061). Freezing the heap takes those objects out of the collector's sight;
what the work leaves behind afterwards is still collected, and freed objects are still freed.

The code location itself is built with the collector paused and is left out of the
interpreter's collections at exit (:func:`built_for_the_process`).
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager


def freeze_heap() -> None:
    """Collect what is garbage now, then move every object still alive out of the cyclic
    collector's sight for good (:func:`gc.freeze`): for a process whose heap, once built,
    lives as long as it does."""
    gc.collect()
    gc.freeze()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Run the block (or, as a decorator, the function) with the heap as it is on entry out of
    the cyclic collector's sight, and give it back on exit, however the block ends. Nothing
    is collected on entry: garbage frozen with the heap waits for the first full collection
    after the thaw. A heap already frozen (an enclosing block, :func:`freeze_heap`) is left
    as it is, and not given back on exit."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


_frozen_at_exit = False


@contextmanager
def built_for_the_process() -> Iterator[None]:
    """Build what lives as long as the process (the code location: Dagster, the ORM, every
    asset and job) with the cyclic collector paused, and, once it is built, freeze the heap
    at exit before the interpreter's own collections run.

    None of it is ever garbage, so collections while it is built walk a growing heap for
    nothing; and when the process exits, the collections that run while its modules are torn
    down walk it all again. Every process that loads the code location pays both: a command,
    the code server, each run worker. The exit handler freezes every object alive at exit,
    the code location's and the run's alike (docs/decisions/0071). Objects are still freed by
    reference counting; only objects in reference cycles at exit go without their
    finalizers, which Python never promised at exit, and the resources this code opens are
    closed by their own ``with`` blocks. A collector the caller has paused stays paused; the
    handler is registered once per process, however often the code location is rebuilt.
    """
    global _frozen_at_exit
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
    if not _frozen_at_exit:
        atexit.register(gc.freeze)
        _frozen_at_exit = True
