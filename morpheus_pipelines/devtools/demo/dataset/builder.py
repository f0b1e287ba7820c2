"""The builder: one generated data set, step by step, each step on its own random stream."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import numpy as np

from .companies import CompanySteps
from .expectations import TruthSteps
from .model import DemoDataset
from .planted import PlantSteps
from .tenants import TenantSteps
from .vocabulary import (
    _APAC_SALES_PEOPLE,
    _DAY_US,
    _OTHER_SALES_PEOPLE,
    _US,
    CST,
    MIN_COMPANIES,
    MIN_TENANTS,
    SALES_DOMAIN,
)


def generate_dataset(
    *,
    tenants: int = 10_000,
    companies: int = 500,
    seed: int = 7,
    partition_day: date,
    sales_emails: int = 6,
    forced_ids: int = 3,
) -> DemoDataset:
    """Generate a deterministic APAC data set (see the package docstring).

    Args:
        tenants: number of source tenants (at least 100).
        companies: number of HubSpot companies, all in the target list (at least 20).
        seed: random seed; the same arguments always give identical data.
        partition_day: the CST day whose signups the pipeline selects.
        sales_emails: size of the APAC Sales list (0 to 12).
        forced_ids: number of existing APAC tenants to force Sales-owned (0 or more).
    """
    if tenants < MIN_TENANTS:
        raise ValueError(f"tenants must be at least {MIN_TENANTS}, got {tenants}")
    if companies < MIN_COMPANIES:
        raise ValueError(f"companies must be at least {MIN_COMPANIES}, got {companies}")
    if not 0 <= sales_emails <= len(_APAC_SALES_PEOPLE):
        raise ValueError(f"sales_emails must be between 0 and {len(_APAC_SALES_PEOPLE)}")
    if forced_ids < 0:
        raise ValueError("forced_ids must be >= 0")
    return _Builder(tenants, companies, seed, partition_day, sales_emails, forced_ids).build()


class _Builder(TenantSteps, CompanySteps, PlantSteps, TruthSteps):
    """Builds one data set; every step draws from its own child random stream."""

    def __init__(self, n: int, c: int, seed: int, day: date, n_sales: int, n_forced: int) -> None:
        self.n, self.c, self.seed, self.day = n, c, seed, day
        self.n_sales, self.n_forced = n_sales, n_forced
        streams = np.random.SeedSequence([seed, 20_260_714]).spawn(12)
        (
            self.rng_time,
            self.rng_status,
            self.rng_email,
            self.rng_pool,
            self.rng_names,
            self.rng_sales,
            self.rng_plan,
            self.rng_company,
            self.rng_plant,
            self.rng_intel,
            self.rng_token,
            self.rng_misc,
        ) = (np.random.default_rng(s) for s in streams)
        start = datetime.combine(day, time(0), tzinfo=CST).astimezone(UTC)
        self.start_us = int(start.timestamp()) * _US
        self.end_us = self.start_us + _DAY_US

    def token(self) -> str:
        h = self.rng_token.bytes(16).hex()
        return f"pat-na1-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    def build(self) -> DemoDataset:
        self.timeline()
        self.regions_statuses()
        self.email_kinds()
        self.pool()
        self.emails()
        self.names()
        self.custom_ids()
        self.sales_owners()
        self.plans()
        self.companies()
        self.plants()
        self.root_owners()
        self.domain_intel()
        self.truth()
        owners = [
            {
                "id": str(500 + i),
                "email": email,
                "firstName": email.split("@")[0].split(".")[0].title(),
                "lastName": email.split("@")[0].split(".")[-1].title(),
                "userId": 7000 + i,
                "archived": False,
            }
            for i, email in enumerate(
                [f"{p}@{SALES_DOMAIN}" for p in _APAC_SALES_PEOPLE + _OTHER_SALES_PEOPLE]
            )
        ]
        membership = datetime.combine(self.day - timedelta(days=30), time(2), tzinfo=UTC)
        return DemoDataset(
            tenants=self.tenants_frame(),
            companies=self.company_list,
            domain_intel=self.intel,
            sales_emails=list(self.sales_list),
            forced_ids=[str(self.ids[r]) for r in self.forced_rows],
            token=self.token(),
            expected=self.expected_counts,
            truth=self.truth_frame,
            partition_day=self.day,
            seed=self.seed,
            owners=owners,
            membership_timestamp=membership.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        )
