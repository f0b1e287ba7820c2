"""The tenant rows of the source table: signup timeline, regions and statuses, emails, names,
custom ids, Sales owners and plans."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .domains import _ascii_domains, _corporate_locals, _free_locals, _Pool
from .sampling import (
    _allocate,
    _choice,
    _counts,
    _isin,
    _normalised,
    _objects,
    _punycode,
    _texts,
    _upper,
)
from .vocabulary import (
    _AMER_COUNTRIES,
    _APAC_COUNTRIES,
    _APAC_SALES_PEOPLE,
    _APAC_SUFFIXES,
    _CJK_NAMES,
    _CORP,
    _DAY_US,
    _DISP,
    _DISPOSABLE,
    _EMEA_COUNTRIES,
    _EMPTY,
    _FIRST,
    _FREE,
    _FREE_APAC,
    _FREE_ROW,
    _IDN,
    _INDUSTRIES,
    _LAST,
    _MALF,
    _MALFORMED_EMAILS,
    _ODD_NAMES,
    _OTHER_SALES_PEOPLE,
    _PLANS,
    _REGIONS,
    _ROW_SUFFIXES,
    _STATUSES,
    _TEAMS,
    _US,
    SALES_DOMAIN,
    TENANT_COLUMNS,
    _idn_domains,
)


class TenantSteps:
    """The builder's steps that make the tenant rows (run in the order of
    :meth:`~.builder._Builder.build`)."""

    def timeline(self) -> None:
        """created_at for all rows, sorted; which rows are day signups / boundary rows."""
        rng, n = self.rng_time, self.n
        inside = np.array(
            [0, 0, 86_399 * _US, 86_399 * _US, _DAY_US - 1, 30 * 60 * _US, 12 * 3600 * _US],
            dtype=np.int64,
        )
        outside = np.array(
            [-_US, -1, _DAY_US, _DAY_US + 3600 * _US, -30 * 60 * _US, _DAY_US + _US],
            dtype=np.int64,
        )
        n_signup = max(20, round(n * 0.006))
        n_near = max(10, round(n * 0.002))
        n_hist = n - len(inside) - len(outside) - n_signup - n_near
        micros = rng.integers(0, _US, n_signup)
        micros[rng.random(n_signup) < 0.7] = 0  # most at whole seconds
        signup = rng.integers(0, 86_400, n_signup) * _US + micros
        near_before = rng.random(n_near) < 0.5
        near = np.where(
            near_before,
            -rng.integers(1, 6 * 3600, n_near) * _US,
            _DAY_US + rng.integers(0, 6 * 3600, n_near) * _US,
        )
        span = 4 * 365 * _DAY_US
        age = (span * rng.random(n_hist) ** 1.6).astype(np.int64) // _US * _US + _US
        hist = -age  # whole seconds before the day
        offsets = np.concatenate([inside, outside, signup, near, hist])
        group = np.repeat(
            np.arange(5, dtype=np.int8), [len(inside), len(outside), n_signup, n_near, n_hist]
        )
        order = np.argsort(offsets, kind="stable")
        self.created_us = self.start_us + offsets[order]
        self.group = group[order]
        self.in_day = (self.created_us >= self.start_us) & (self.created_us < self.end_us)
        self.boundary_inside = self.group == 0
        self.boundary_outside = self.group == 1
        self.as_of_us = self.end_us + 8 * 3600 * _US

    def regions_statuses(self) -> None:
        rng, n, g = self.rng_status, self.n, self.group
        region_code = rng.choice(3, n, p=[0.85, 0.09, 0.06]).astype(np.int8)
        region_code[g <= 1] = 0  # boundary rows are APAC, so they are signup candidates
        self.region = _REGIONS[region_code]
        self.apac = region_code == 0
        # Status codes index _STATUSES: active, paid, free_trial, new_user, closing, suspended.
        code = np.empty(n, dtype=np.int8)
        boundary = g <= 1
        code[boundary] = np.where(np.arange(int(boundary.sum())) % 2 == 0, 3, 2)
        fresh = (g == 2) | (g == 3)
        code[fresh] = rng.choice([3, 2, 0], int(fresh.sum()), p=[0.55, 0.38, 0.07])
        young = (g == 4) & (self.created_us > self.start_us - 14 * _DAY_US)
        code[young] = rng.choice([3, 2, 0, 1], int(young.sum()), p=[0.35, 0.35, 0.22, 0.08])
        old = (g == 4) & ~young
        code[old] = rng.choice(6, int(old.sum()), p=[0.46, 0.22, 0.10, 0.06, 0.07, 0.09])
        self.status_code = code
        self.status = _STATUSES[code]
        excluded = (code >= 2) & (code <= 4)  # free_trial, new_user, closing
        self.active_candidate = self.apac & ~excluded
        self.signup_candidate = self.apac & self.in_day
        self.candidate = self.active_candidate | self.signup_candidate
        # Planted rows need an unambiguous candidate: active/paid or a day signup.
        self.plantable = self.apac & ((code <= 1) | self.in_day)
        steps = self.rng_misc.integers(1, 4, n)
        self.ids = _texts(1_000_000 + np.cumsum(steps))

    def email_kinds(self) -> None:
        rng, n = self.rng_email, self.n
        kind = np.empty(n, dtype=np.int8)
        apac = np.flatnonzero(self.apac)
        row = np.flatnonzero(~self.apac)
        weights = [0.589, 0.012, 0.36, 0.008, 0.02, 0.005, 0.006]
        minimum = [0, 8, 0, 4, 4, 3, len(_MALFORMED_EMAILS)]
        kind[apac] = _allocate(rng, _counts(len(apac), weights, minimum))
        row_counts = _counts(len(row), [0.70, 0, 0.27, 0.005, 0.015, 0.004, 0.006])
        kind[row] = _allocate(rng, row_counts)
        self.kind = kind

    def pool(self) -> None:
        """Build the domain pool and give every corporate/IDN tenant its domain index."""
        rng = self.rng_pool
        idn = _idn_domains()
        apac_corp = np.flatnonzero(self.apac & (self.kind == _CORP))
        row_corp = np.flatnonzero(~self.apac & (self.kind == _CORP))
        n_tenant_domains = max(40, len(apac_corp) // 3)
        # Company domains no tenant email uses: about one per company is needed (web-only,
        # unused, additional domains); three per company leaves a wide margin.
        n_extra = 3 * self.c + 64
        n_row = max(20, len(row_corp) // 3)
        apac_text, apac_country, apac_name, apac_industry = _ascii_domains(
            rng, n_tenant_domains + n_extra, _APAC_SUFFIXES
        )
        row_text, row_country, row_name, row_industry = _ascii_domains(rng, n_row, _ROW_SUFFIXES)
        k = len(idn)
        idn_display = _objects([d for d, _, _ in idn])
        idn_ascii = _objects([_punycode(d) for d, _, _ in idn])
        self.p = _Pool(
            ascii=np.concatenate([idn_ascii, apac_text, row_text]),
            display=np.concatenate([idn_display, apac_text, row_text]),
            country=np.concatenate([_objects([c for _, c, _ in idn]), apac_country, row_country]),
            name=np.concatenate([_objects([m for _, _, m in idn]), apac_name, row_name]),
            industry=np.concatenate([_choice(rng, _INDUSTRIES, k), apac_industry, row_industry]),
            idn_count=k,
            tenant_start=k,
            extra_start=k + n_tenant_domains,
            row_start=k + n_tenant_domains + n_extra,
        )
        dom = np.full(self.n, -1, dtype=np.int64)
        # Skewed sizes: a few domains have many tenants, most have one or two.
        for rows, start, size in (
            (apac_corp, k, n_tenant_domains),
            (row_corp, self.p.row_start, n_row),
        ):
            weights = 1.0 / (np.arange(size, dtype=float) + 8.0) ** 1.05
            dom[rows] = start + rng.choice(size, len(rows), p=weights / weights.sum())
        idn_rows = np.flatnonzero(self.kind == _IDN)
        dom[idn_rows] = rng.integers(0, k, len(idn_rows))
        self.dom = dom
        country = np.empty(self.n, dtype=object)
        corporate = dom >= 0
        country[corporate] = self.p.country[dom[corporate]]
        for region, countries in (
            ("APAC", _APAC_COUNTRIES),
            ("EMEA", _EMEA_COUNTRIES),
            ("AMER", _AMER_COUNTRIES),
        ):
            rows = ~corporate & (self.region == region)
            country[rows] = _choice(rng, countries, int(rows.sum()))
        self.country = country

    def emails(self) -> None:
        rng, n, kind, p = self.rng_email, self.n, self.kind, self.p
        email = np.full(n, None, dtype=object)

        corp = np.flatnonzero((kind == _CORP) | (kind == _IDN))
        m = len(corp)
        dom = self.dom[corp]
        unicode_form = (kind[corp] == _IDN) & (rng.random(m) < 0.5)
        host = np.where(unicode_form, p.display[dom], p.ascii[dom])
        variant = rng.random(m)
        for low, high, prefix, suffix in ((0, 0.02, "mail.", ""), (0.02, 0.03, "www.", ""),
                                          (0.03, 0.035, "", ".")):  # fmt: skip
            rows = (variant >= low) & (variant < high)
            host[rows] = prefix + host[rows] + suffix
        out = _corporate_locals(rng, m) + "@" + host
        upper = (variant >= 0.035) & (variant < 0.055)
        out[upper] = _objects([_upper(e) for e in out[upper].tolist()])
        padded = (variant >= 0.055) & (variant < 0.06)
        out[padded] = " " + out[padded] + " "
        email[corp] = out

        for region_rows, choices in ((self.apac, _FREE_APAC), (~self.apac, _FREE_ROW)):
            rows = np.flatnonzero(region_rows & (kind == _FREE))
            hosts = [d for d, _ in choices]
            host_code = rng.choice(len(hosts), len(rows), p=_normalised([w for _, w in choices]))
            local = _free_locals(rng, len(rows))
            qq = _isin(_objects(hosts)[host_code], ("qq.com", "vip.qq.com"))
            local[qq] = _texts(rng.integers(10_000, 3_000_000_000, int(qq.sum())))
            email[rows] = local + _objects(["@" + h for h in hosts])[host_code]

        disposable = np.flatnonzero(kind == _DISP)
        email[disposable] = _free_locals(rng, len(disposable)) + _choice(
            rng, ["@" + d for d in _DISPOSABLE], len(disposable)
        )
        email[kind == _EMPTY] = ""
        malformed = np.flatnonzero(kind == _MALF)
        bad = _objects(_MALFORMED_EMAILS)
        email[malformed] = bad[np.arange(len(malformed)) % len(bad)]
        self.email = email

    def names(self) -> None:
        rng, n = self.rng_names, self.n
        name = np.empty(n, dtype=object)
        corp = np.flatnonzero(self.dom >= 0)
        name[corp] = self.p.name[self.dom[corp]]
        team = corp[rng.random(len(corp)) < 0.1]
        name[team] = name[team] + _choice(rng, [" - " + t for t in _TEAMS], len(team))
        personal = np.flatnonzero(self.dom < 0)
        style = rng.random(len(personal))
        people = _objects([f"{f.title()} {v.title()}" for f in _FIRST for v in _LAST])
        workspaces = _objects([f"{f}'s workspace" for f in _FIRST])
        choice = people[rng.integers(0, len(people), len(personal))]
        cjk = style < 0.25
        choice[cjk] = _choice(rng, _CJK_NAMES, int(cjk.sum()))
        workspace = (style >= 0.25) & (style < 0.40)
        choice[workspace] = _choice(rng, workspaces, int(workspace.sum()))
        odd = (style >= 0.40) & (style < 0.42)
        choice[odd] = _choice(rng, _ODD_NAMES, int(odd.sum()))
        name[personal] = choice
        self.name = name

    def custom_ids(self) -> None:
        rng, n = self.rng_names, self.n
        roll = rng.random(n)
        rows = np.flatnonzero(roll < 0.30)
        custom = np.full(n, None, dtype=object)
        custom[rows] = _objects(
            [
                f"ACC-{country}-{serial:07d}"
                for country, serial in zip(self.country[rows].tolist(), rows.tolist(), strict=True)
            ]
        )
        padded = rows[rng.random(len(rows)) < 0.02]
        custom[padded] = custom[padded] + " "
        custom[(roll >= 0.30) & (roll < 0.31)] = ""
        custom[(roll >= 0.31) & (roll < 0.315)] = "   "
        self.custom_id = custom

    def sales_owners(self) -> None:
        rng, n = self.rng_sales, self.n
        self.sales_list = [f"{person}@{SALES_DOMAIN}" for person in _APAC_SALES_PEOPLE][
            : self.n_sales
        ]
        other = [f"{person}@{SALES_DOMAIN}" for person in _OTHER_SALES_PEOPLE]
        first_sales = f"{_APAC_SALES_PEOPLE[0]}@{SALES_DOMAIN}"
        near = [
            first_sales.replace("@", "+apac@"),
            first_sales + ".cn",
            first_sales.replace("morpheus.example.com", "morpheus.example"),
            first_sales.replace(".", "", 1),
            first_sales + ",",
            f"{first_sales}; {_APAC_SALES_PEOPLE[1]}@{SALES_DOMAIN}",
        ]
        # Codes: 0 none, 1 APAC Sales, 2 other sales person, 3 near miss, 4 empty/blank.
        counts = _counts(
            n,
            [0.775, 0.08 if self.sales_list else 0, 0.12, 0.002, 0.008],
            [0, 0, 0, len(near), 2],
        )
        codes = _allocate(rng, counts)
        owner = np.full(n, None, dtype=object)
        apac = np.flatnonzero(codes == 1)
        if self.sales_list:
            owner[apac] = self._sales_variants(rng, len(apac))
        other_rows = codes == 2
        owner[other_rows] = _choice(rng, other, int(other_rows.sum()))
        near_rows = np.flatnonzero(codes == 3)
        owner[near_rows] = _objects(near)[np.arange(len(near_rows)) % len(near)]
        empty_rows = codes == 4
        owner[empty_rows] = _choice(rng, ["", "   "], int(empty_rows.sum()))
        self.owner = owner
        self.sales_owned = codes == 1

    def _sales_variants(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """APAC Sales addresses as people type them: mostly exact, some case/space variants."""
        variants = _objects(
            [
                form
                for email in self.sales_list
                for form in (
                    email,
                    email.title(),
                    email.upper(),
                    f"  {email} ",
                    f" {email.upper()}",
                )
            ]
        )
        style = rng.choice(5, size, p=[0.6, 0.15, 0.1, 0.1, 0.05])
        person = rng.integers(0, len(self.sales_list), size)
        return variants[person * 5 + style]

    def plans(self) -> None:
        rng, n, status = self.rng_plan, self.n, self.status_code
        # Plan codes index _PLANS: None, free, trial, starter, team, business, enterprise.
        plan = np.zeros(n, dtype=np.int8)
        per_status = {
            0: ([1, 3, 4, 5], [0.35, 0.3, 0.25, 0.1]),  # active
            1: ([4, 5, 6], [0.5, 0.35, 0.15]),  # paid
            2: ([2], [1.0]),  # free_trial
            3: ([1, 0], [0.4, 0.6]),  # new_user
            4: ([3, 4, 5], [0.4, 0.4, 0.2]),  # closing
            5: ([1, 3, 4], [0.5, 0.3, 0.2]),  # suspended
        }
        for value, (choices, weights) in per_status.items():
            rows = status == value
            plan[rows] = rng.choice(choices, int(rows.sum()), p=weights)
        low = np.array([1, 1, 1, 2, 5, 20, 100])
        high = np.array([1, 3, 10, 10, 50, 300, 5000])
        seats = low[plan] + (rng.random(n) * (high[plan] - low[plan] + 1)).astype(np.int64)
        seats_missing = (plan == 0) & (rng.random(n) < 0.5)
        usage = np.array([0.6, 0.75, 0.4, 0.3, 0.15, 0.0])  # by status code
        active_users = rng.binomial(seats, usage[status])
        users_missing = (
            seats_missing | (rng.random(n) < 0.05) | ((status == 3) & (rng.random(n) < 0.5))
        )
        self.seats = pd.array(seats, dtype="Int64")
        self.seats[seats_missing] = pd.NA
        self.active_users = pd.array(active_users, dtype="Int64")
        self.active_users[users_missing] = pd.NA
        never_rate = np.array([0.02, 0.02, 0.02, 0.4, 0.02, 0.1])  # by status code
        never = rng.random(n) < never_rate[status]
        gap = np.maximum(self.as_of_us - self.created_us, _US)
        last = self.created_us + (gap * rng.random(n) ** 0.3).astype(np.int64)
        self.last_active_us = np.where(never, np.iinfo(np.int64).min, last)
        self.plan_values = _PLANS[plan]

    def tenants_frame(self) -> pd.DataFrame:
        def timestamps(micros: np.ndarray) -> pd.Series:
            values = micros.astype("datetime64[us]")
            return pd.Series(values).dt.tz_localize("UTC")

        last = timestamps(self.last_active_us.clip(min=0))
        last[self.last_active_us < 0] = pd.NaT
        return pd.DataFrame(
            {
                "id": pd.Series(self.ids, dtype=object),
                "custom_id": pd.Series(self.custom_id, dtype=object),
                "name": pd.Series(self.name, dtype=object),
                "email": pd.Series(self.email, dtype=object),
                "sales_owner_email": pd.Series(self.owner, dtype=object),
                "status": pd.Series(self.status, dtype=object),
                "region": pd.Series(self.region, dtype=object),
                "plan": pd.Series(self.plan_values, dtype=object),
                "seats": pd.Series(self.seats, dtype="Int64"),
                "active_users_30d": pd.Series(self.active_users, dtype="Int64"),
                "created_at": timestamps(self.created_us),
                "last_active_at": last,
            },
            columns=list(TENANT_COLUMNS),
        )
