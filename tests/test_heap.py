"""The heap taken out of the cyclic collector's sight around heavy work, and given back; the
collector paused while the code location is built (platform/heap.py)."""

from __future__ import annotations

import atexit
import gc
import weakref
from collections.abc import Callable

import pytest

from morpheus_pipelines.platform import heap
from morpheus_pipelines.platform.heap import built_for_the_process, frozen_heap


def test_a_frozen_block_hides_the_heap_and_gives_it_back() -> None:
    before = gc.get_freeze_count()
    with frozen_heap():
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == 0


def test_the_heap_is_given_back_when_the_block_fails() -> None:
    @frozen_heap()
    def fails() -> None:
        assert gc.get_freeze_count() > 0
        raise RuntimeError("stopped half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        fails()
    assert gc.get_freeze_count() == 0


class Node:
    """A cycle's member the collector can be asked about (through a weak reference)."""

    def __init__(self) -> None:
        self.itself = self


def test_what_the_block_leaves_behind_is_still_collected_as_it_goes() -> None:
    """The collector still runs on its own inside the block (frozen, not switched off): a
    cycle made there is gone once enough allocations have set off a collection."""
    with frozen_heap():
        made_inside = weakref.ref(Node())
        for _ in range(10 * gc.get_threshold()[0]):
            Node()
        assert made_inside() is None


def test_a_heap_frozen_before_the_block_stays_frozen_after_it() -> None:
    gc.freeze()
    try:
        with frozen_heap():
            pass
        # Not given back: whoever froze it gives it back.
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_collector_is_paused_while_the_process_s_heap_is_built_and_given_back() -> None:
    with built_for_the_process():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_given_back_when_the_build_fails() -> None:
    with pytest.raises(ImportError, match="no such slice"), built_for_the_process():
        raise ImportError("no such slice")
    assert gc.isenabled()


def test_a_collector_the_caller_paused_stays_paused() -> None:
    gc.disable()
    try:
        with built_for_the_process():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_heap_is_frozen_at_exit_once_after_a_build_and_not_after_a_failed_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registered: list[Callable[[], object]] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(heap, "_frozen_at_exit", False)
    with pytest.raises(ImportError), built_for_the_process():
        raise ImportError("no such slice")
    assert registered == []
    for _ in range(3):  # the code location built again (a test reloading it)
        with built_for_the_process():
            pass
    assert registered == [gc.freeze]
