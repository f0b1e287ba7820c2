"""``CrmStore`` holds the caller's session and nothing else, and carries one of every CRM
repository, so a step never needs a module-level singleton."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import morpheus_pipelines.crm.repositories as repositories
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.store.base import BaseRepository


def _repository_classes() -> list[str]:
    found = []
    for info in pkgutil.iter_modules(repositories.__path__):
        module = importlib.import_module(f"{repositories.__name__}.{info.name}")
        found += [
            f"{cls.__module__}.{cls.__qualname__}"
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, BaseRepository) and cls.__module__ == module.__name__
        ]
    return sorted(found)


def test_every_crm_repository_is_on_the_store_once() -> None:
    on_store = [
        f"{type(value).__module__}.{type(value).__qualname__}"
        for value in vars(CrmStore).values()
        if isinstance(value, BaseRepository)
    ]
    assert sorted(on_store) == _repository_classes()


def test_the_store_holds_only_the_session() -> None:
    assert [f.name for f in dataclasses.fields(CrmStore)] == ["session"]
    store = CrmStore(session=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        store.session = None
    assert store.contacts is CrmStore(session=None).contacts
