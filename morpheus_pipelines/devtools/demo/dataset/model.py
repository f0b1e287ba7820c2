"""The generated data set and its serialisation: PostgreSQL-style CSV, emulator JSON and the
environment to run with."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from morpheus_pipelines.devtools.emulators.hubspot import build_data as build_hubspot_data

from .vocabulary import DEFAULT_LIST_ID


@dataclass(eq=False)
class DemoDataset:
    """A generated data set (see the package docstring for what it contains)."""

    tenants: pd.DataFrame
    companies: list[dict[str, Any]]
    domain_intel: dict[str, Any]
    sales_emails: list[str]
    forced_ids: list[str]
    token: str
    expected: dict[str, Any]
    truth: pd.DataFrame
    partition_day: date
    seed: int
    owners: list[dict[str, Any]] = field(default_factory=list)
    membership_timestamp: str = ""

    def hubspot_data(self, list_id: str = DEFAULT_LIST_ID) -> dict[str, Any]:
        """HubSpot emulator data: every company a member of ``list_id``, the token required."""
        return build_hubspot_data(
            self.companies,
            list_id=list_id,
            token=self.token,
            owners=self.owners,
            membership_timestamp=self.membership_timestamp,
        )

    def environment(self, list_id: str = DEFAULT_LIST_ID) -> dict[str, str]:
        """Settings this data set is meant to run with (the variables of README,
        "Configuration")."""
        return {
            "APAC_SALES_EMAILS": ",".join(self.sales_emails),
            "FORCED_SALES_OWNED_TENANT_IDS": ",".join(self.forced_ids),
            "HUBSPOT_PRIVATE_APP_TOKEN": self.token,
            "HUBSPOT_TARGET_LIST_ID": str(list_id),
        }

    def write(self, directory: str | Path, list_id: str = DEFAULT_LIST_ID) -> dict[str, Path]:
        """Write ``tenants.csv``, ``hubspot.json`` and ``domain_intel.json`` into ``directory``.

        Returns their paths keyed ``tenants``/``hubspot``/``domain_intel``. The CSV has a header
        and follows PostgreSQL's CSV conventions (unquoted empty = NULL, ``""`` = empty text;
        timestamps as ISO 8601 with offset), so ``COPY … FROM … (FORMAT csv, HEADER)`` loads it.
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "tenants": out / "tenants.csv",
            "hubspot": out / "hubspot.json",
            "domain_intel": out / "domain_intel.json",
        }
        write_tenants_csv(self.tenants, paths["tenants"])
        for key, data in (
            ("hubspot", self.hubspot_data(list_id)),
            ("domain_intel", self.domain_intel),
        ):
            with paths[key].open("w", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False)
        return paths


# A private-use sentinel standing for the empty string while pandas writes the CSV, then
# replaced by a quoted empty field (pandas writes NULL and "" alike otherwise).
_EMPTY_SENTINEL = "\ue000\ue001"


def write_tenants_csv(tenants: pd.DataFrame, path: str | Path, chunk_rows: int = 200_000) -> None:
    """Write a tenants frame as PostgreSQL-style CSV (NULL unquoted empty, ``""`` empty text)."""
    text_columns = [c for c in tenants.columns if tenants[c].dtype == object]
    with Path(path).open("w", encoding="utf-8", newline="") as handle:
        for start in range(0, max(len(tenants), 1), chunk_rows):
            chunk = tenants.iloc[start : start + chunk_rows].copy()
            for column in chunk.columns:
                if isinstance(chunk[column].dtype, pd.DatetimeTZDtype):
                    chunk[column] = _iso_utc(chunk[column])
            for column in text_columns:
                values = chunk[column].to_numpy(dtype=object)
                empty = values == ""
                if empty.any():
                    values = values.copy()
                    values[empty] = _EMPTY_SENTINEL
                    chunk[column] = pd.Series(values, index=chunk.index, dtype=object)
            buffer = io.StringIO()
            chunk.to_csv(
                buffer,
                index=False,
                header=start == 0,
                quoting=csv.QUOTE_MINIMAL,
                lineterminator="\n",
            )
            handle.write(buffer.getvalue().replace(_EMPTY_SENTINEL, '""'))


def _iso_utc(stamps: pd.Series) -> pd.Series:
    """ISO 8601 text of tz-aware timestamps in UTC (``2026-07-13T16:00:00.000000+00:00``),
    ``None`` for NaT; vectorised (``strftime`` per value is ten times slower)."""
    utc = stamps.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[us]")
    text = np.datetime_as_string(utc, unit="us").astype(object) + "+00:00"
    text[np.isnat(utc)] = None
    return pd.Series(text, index=stamps.index, dtype=object)
