"""``BaseRepository[ModelT]``: the generic data-access contract of docs/data-layer.md.

Rules every repository follows:

* stateless: instantiate once at module level and reuse;
* the caller owns the transaction: every method takes the ``Session`` first and positionally,
  and no method commits, rolls back, opens a session or swallows a database error;
* the record argument (``record_id``, ``data``, ``rows``, ``record``) is positional, every
  option is keyword-only;
* there is no delete and no count here: a concrete repository adds the scalar query it needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import Table, UniqueConstraint, insert, inspect, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.model_base import Base

ModelT = TypeVar("ModelT", bound=Base)


@cache
def _attribute_keys(model_class: type[Base]) -> dict[str, str]:
    """Column name → mapped attribute name, once per model."""
    mapper = inspect(model_class)
    return {c.name: mapper.get_property_by_column(c).key for c in mapper.local_table.columns}


class RepositoryError(ValueError):
    """A repository was called with arguments that cannot be right (never a database error)."""


class BaseRepository(Generic[ModelT]):
    """Generic repository bound to one model through ``model_class``."""

    model_class: ClassVar[type[Base]]

    # -- introspection ------------------------------------------------------------------------

    @property
    def table(self) -> Table:
        return self.model_class.__table__  # type: ignore[return-value]

    @property
    def columns(self) -> frozenset[str]:
        return frozenset(self.table.columns.keys())

    def _attributes(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` keyed by mapped attribute instead of column name. They are the same but
        where SQLAlchemy reserves a name (``activities.metadata`` is the attribute
        ``metadata_``); callers always speak column names."""
        keys = _attribute_keys(self.model_class)
        return {keys[name]: value for name, value in data.items()}

    def _check_columns(self, names: Iterable[str], purpose: str) -> None:
        unknown = sorted(set(names) - self.columns)
        if unknown:
            raise RepositoryError(f"{self.table.name}: unknown column(s) {unknown} in {purpose}")

    def unique_column_sets(self) -> list[frozenset[str]]:
        """Column sets of the primary key, unique constraints and unique indexes."""
        sets = [frozenset(c.name for c in self.table.primary_key.columns)]
        sets += [
            frozenset(c.name for c in constraint.columns)
            for constraint in self.table.constraints
            if isinstance(constraint, UniqueConstraint)
        ]
        sets += [frozenset(c.name for c in i.columns) for i in self.table.indexes if i.unique]
        return sets

    def _check_conflict_columns(self, conflict_columns: Sequence[str]) -> None:
        if frozenset(conflict_columns) not in self.unique_column_sets():
            available = sorted(sorted(s) for s in self.unique_column_sets())
            raise RepositoryError(
                f"upsert into {self.table.name}: conflict columns {list(conflict_columns)} "
                f"match no unique constraint or unique index; unique column sets are {available}"
            )

    # -- reads --------------------------------------------------------------------------------

    def get_by_id(self, session: Session, record_id: Any) -> ModelT | None:
        """Primary-key lookup; ``None`` when absent."""
        return session.get(self.model_class, record_id)  # type: ignore[return-value]

    def get_many_by_ids(self, session: Session, record_ids: Iterable[Any]) -> list[ModelT]:
        """``WHERE pk IN (…)``; raises ``ValueError`` on a composite primary key."""
        primary_key = inspect(self.model_class).primary_key
        if len(primary_key) != 1:
            raise RepositoryError(
                f"{self.table.name} has a composite primary key "
                f"{[c.name for c in primary_key]}; get_many_by_ids needs a single-column key"
            )
        ids = list(record_ids)
        if not ids:
            return []
        statement = select(self.model_class).where(primary_key[0].in_(ids))
        return list(session.scalars(statement))

    def get_all(self, session: Session, *, limit: int = 100, offset: int = 0) -> list[ModelT]:
        """A page of the full table in primary-key order."""
        order = list(inspect(self.model_class).primary_key)
        statement = select(self.model_class).order_by(*order).limit(limit).offset(offset)
        return list(session.scalars(statement))

    def filter_by(self, session: Session, **filters: Any) -> list[ModelT]:
        """Equality filters on mapped attributes."""
        self._check_columns(filters, "filter_by")
        statement = select(self.model_class).filter_by(**self._attributes(filters))
        return list(session.scalars(statement))

    def first_by(self, session: Session, **filters: Any) -> ModelT | None:
        """The first row matching the equality filters, or ``None``."""
        self._check_columns(filters, "first_by")
        order = list(inspect(self.model_class).primary_key)
        statement = (
            select(self.model_class)
            .filter_by(**self._attributes(filters))
            .order_by(*order)
            .limit(1)
        )
        return session.scalars(statement).first()

    # -- writes -------------------------------------------------------------------------------

    def insert(self, session: Session, data: Mapping[str, Any]) -> ModelT:
        """Add, flush and refresh; the caller commits."""
        self._check_columns(data, "insert")
        record = self.model_class(**self._attributes(data))
        session.add(record)
        session.flush()
        session.refresh(record)
        return record  # type: ignore[return-value]

    def bulk_insert(self, session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
        """One multi-row ``INSERT``; no ORM instances are returned."""
        if not rows:
            return
        self._check_columns({key for row in rows for key in row}, "bulk_insert")
        # Rows with different key sets go in separate statements, so an omitted key keeps its
        # column default instead of becoming NULL.
        groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
        for row in rows:
            groups.setdefault(tuple(sorted(row)), []).append(row)
        for group in groups.values():
            session.execute(insert(self.table), group)

    def upsert(
        self,
        session: Session,
        data: Mapping[str, Any],
        *,
        conflict_columns: Sequence[str],
        update_columns: Sequence[str] | None = None,
    ) -> ModelT:
        """``INSERT … ON CONFLICT (conflict_columns) DO UPDATE … RETURNING *``.

        ``conflict_columns`` must be exactly the columns of a primary key, unique constraint or
        unique index. ``update_columns`` defaults to every key of ``data`` except the conflict
        columns; a column named there but absent from ``data`` is an error, not a silent NULL.
        """
        self._check_columns(data, "upsert data")
        self._check_columns(conflict_columns, "conflict_columns")
        self._check_conflict_columns(conflict_columns)
        if update_columns is None:
            update_columns = [key for key in data if key not in conflict_columns]
        self._check_columns(update_columns, "update_columns")
        missing = sorted(set(update_columns) - set(data))
        if missing:
            raise RepositoryError(
                f"upsert into {self.table.name}: update_columns {missing} are not in data"
            )
        statement = pg_insert(self.table).values(dict(data))
        if update_columns:
            assignments: dict[str, Any] = {
                name: statement.excluded[name] for name in update_columns
            }
            # ON CONFLICT DO UPDATE does not run a column's ``onupdate`` (``updatedAt``): an
            # updated row is stamped here unless the caller wrote the column itself.
            for column in self.table.columns:
                if column.onupdate is not None and column.name not in assignments:
                    assignments[column.name] = column.onupdate.arg
            statement = statement.on_conflict_do_update(
                index_elements=list(conflict_columns), set_=assignments
            )
        else:
            # Nothing to update: touch a conflict column so RETURNING still yields the row.
            first = conflict_columns[0]
            statement = statement.on_conflict_do_update(
                index_elements=list(conflict_columns), set_={first: statement.excluded[first]}
            )
        orm_statement = (
            select(self.model_class)
            .from_statement(statement.returning(*self.table.columns))
            .execution_options(populate_existing=True)
        )
        return session.scalars(orm_statement).one()  # type: ignore[return-value]

    def update(self, session: Session, record: ModelT, data: Mapping[str, Any]) -> ModelT:
        """Set each attribute, flush and refresh."""
        self._check_columns(data, "update")
        for key, value in self._attributes(data).items():
            setattr(record, key, value)
        session.flush()
        session.refresh(record)
        return record

    def update_by_id(
        self, session: Session, record_id: Any, data: Mapping[str, Any]
    ) -> ModelT | None:
        """Fetch by primary key then update; ``None`` when the row does not exist."""
        record = self.get_by_id(session, record_id)
        if record is None:
            return None
        return self.update(session, record, data)
