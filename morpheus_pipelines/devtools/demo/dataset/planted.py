"""The planted HubSpot matches: ids on companies, forced ids, Sales ownership overlaps, and the
Domain Intelligence data whose ``official_website`` matches (see docs/pipeline.md for the
matching order)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .sampling import _choice, _normalised, _objects
from .vocabulary import _BAD_WEBSITES, _FREE


class PlantSteps:
    """The builder's steps that plant matches and build the Domain Intelligence data."""

    def plants(self) -> None:
        """Point company ids at tenants; pick forced ids; overlap HubSpot and Sales ownership."""
        rng, c = self.rng_plant, self.c
        companies = self.company_list
        eligible = np.flatnonzero(self.plantable)
        eligible = eligible[rng.permutation(len(eligible))]
        n_portal = max(2, round(0.18 * c))
        n_account = max(2, round(0.14 * c))
        used = np.zeros(self.n, dtype=bool)

        def take(count: int, where: np.ndarray | None = None) -> np.ndarray:
            """The next ``count`` unused eligible rows (in random order), marked used."""
            free = ~used[eligible]
            if where is not None:
                free &= where[eligible]
            picked = eligible[free][:count]
            used[picked] = True
            return picked

        company_order = rng.permutation(c)
        portal_rows = take(n_portal)
        self.portal_company = np.full(self.n, -1, dtype=np.int64)
        self.portal_ambiguous = np.zeros(self.n, dtype=bool)
        self.account_company = np.full(self.n, -1, dtype=np.int64)
        self.account_ambiguous = np.zeros(self.n, dtype=bool)
        slots = iter(company_order.tolist())
        for j, row in enumerate(portal_rows.tolist()):
            pos = next(slots)
            shape = rng.random()
            value: Any = str(self.ids[row])
            if shape < 0.1:
                value = int(value)
            elif shape < 0.2:
                value = f" {value} "
            companies[pos]["portal_id__c"] = value
            self.portal_company[row] = pos
            if j == 0:  # the same portal id on a second company: ambiguous, never matches
                twin = next(slots)
                companies[twin]["portal_id__c"] = str(self.ids[row])
                self.portal_company[row] = -1
                self.portal_ambiguous[row] = True
        has_custom = np.zeros(self.n, dtype=bool)
        normalised = pd.Series(self.custom_id, dtype=object).str.strip()
        has_custom[:] = normalised.fillna("").to_numpy(dtype=object) != ""
        forced_rows = take(max(self.n_forced - 1, 0))
        near_miss_rows = take(1, has_custom)
        account_rows = take(n_account, has_custom)
        account_slots = iter(company_order[::-1].tolist())
        for j, row in enumerate(account_rows.tolist()):
            pos = next(account_slots)
            value = str(normalised.iloc[row])
            companies[pos]["account_id__c"] = f"  {value}" if rng.random() < 0.15 else value
            self.account_company[row] = pos
            if j == 0:
                twin = next(account_slots)
                companies[twin]["account_id__c"] = value
                self.account_company[row] = -1
                self.account_ambiguous[row] = True
        for row in near_miss_rows.tolist():
            companies[next(account_slots)]["account_id__c"] = str(normalised.iloc[row]).lower()
        # Ids on other companies that match no tenant.
        noise = ["N/A", "0", "", "  ", None]
        for pos in company_order[len(portal_rows) + 1 : len(portal_rows) + 1 + c // 10].tolist():
            if companies[pos]["portal_id__c"] is None:
                pick = int(rng.integers(0, len(noise) + 3))
                companies[pos]["portal_id__c"] = (
                    noise[pick]
                    if pick < len(noise)
                    else str(rng.integers(900_000_000, 999_999_999))
                )
        for pos in company_order[::-1][len(account_rows) + 2 : len(account_rows) + 2 + c // 10]:
            if companies[pos]["account_id__c"] is None:
                pick = int(rng.integers(0, len(noise) + 3))
                companies[pos]["account_id__c"] = (
                    noise[pick]
                    if pick < len(noise)
                    else f"ACC-ZZ-{int(rng.integers(9_000_000, 9_999_999))}"
                )

        # Forced Sales-owned: a HubSpot-matched tenant (forced wins), one with an APAC Sales
        # owner, then plain candidates.
        forced: list[int] = []
        if self.n_forced:
            forced.append(int(portal_rows[1]))
            forced += forced_rows.tolist()
        if len(forced) >= 2 and self.sales_list:
            self.owner[forced[1]] = self.sales_list[0]
            self.sales_owned[forced[1]] = True
        # A HubSpot match whose owner is also APAC Sales: HubSpot wins (docs/pipeline.md).
        if len(portal_rows) > 2 and self.sales_list:
            self.owner[portal_rows[2]] = self.sales_list[-1].upper()
            self.sales_owned[portal_rows[2]] = True
        self.forced_rows = np.array(forced[: self.n_forced], dtype=np.int64)
        self.forced = np.zeros(self.n, dtype=bool)
        self.forced[self.forced_rows] = True
        self.id_planted = (self.portal_company >= 0) | (self.account_company >= 0)
        self.id_planted |= self.portal_ambiguous | self.account_ambiguous
        self.n_portal_planted = int((self.portal_company >= 0).sum())
        self.n_account_planted = int((self.account_company >= 0).sum())
        self.eligible_rest = eligible[~used[eligible]]

    # ---------------------------------------------------------------- Domain Intelligence

    def root_owners(self) -> None:
        pairs = np.unique(self.company_root_pairs, axis=0)
        size = len(self.p.ascii)
        count = np.bincount(pairs[:, 1], minlength=size)
        owner = np.full(size, -1, dtype=np.int64)
        owner[pairs[:, 1]] = pairs[:, 0]
        self.root_count = count
        self.root_owner = np.where(count == 1, owner, -1)

    def domain_intel(self) -> None:
        rng, n, p = self.rng_intel, self.n, self.p
        kind = self.kind
        corporate = self.dom >= 0
        roll = rng.random(n)
        has = self.apac & np.where(
            corporate, roll < 0.85, np.where(kind == _FREE, roll < 0.25, roll < 0.1)
        )
        web = np.full(n, -1, dtype=np.int64)
        text = np.full(n, None, dtype=object)
        pick = rng.random(n)
        own = has & corporate & (pick < 0.92)
        web[own] = self.dom[own]
        parent = has & corporate & (pick >= 0.92) & (pick < 0.97)
        parent_pool = np.arange(p.tenant_start, p.row_start)
        web[parent] = parent_pool[rng.integers(0, len(parent_pool), int(parent.sum()))]
        guess = has & ~corporate & (pick < 0.55)
        web[guess] = p.tenant_start + rng.integers(
            0, p.extra_start - p.tenant_start, int(guess.sum())
        )
        free_site = has & ~corporate & (pick >= 0.55) & (pick < 0.60)
        free_sites = ["https://www.gmail.com", "qq.com", "http://www.163.com/"]
        text[free_site] = _choice(rng, free_sites, int(free_site.sum()))
        bad_site = has & ~corporate & (pick >= 0.60) & (pick < 0.63)
        text[bad_site] = _choice(rng, _BAD_WEBSITES, int(bad_site.sum()))

        # Planted official_website matches: candidates that match nothing earlier get the site
        # of a company no tenant email uses. Every web-only company gets at least one.
        email_unmatched = (self.dom < 0) | (self.root_owner[np.maximum(self.dom, 0)] < 0)
        rest = self.eligible_rest
        rest = rest[email_unmatched[rest] & ~self.forced[rest] & ~self.id_planted[rest]]
        rest_dom = self.dom[rest]
        ambiguous_email = rest[(rest_dom >= 0) & (self.root_count[np.maximum(rest_dom, 0)] > 1)][:2]
        rest = rest[~np.isin(rest, ambiguous_email)]
        n_plant = max(len(self.web_roots), round(0.004 * n))
        plant_rows = np.concatenate([ambiguous_email, rest[:n_plant]])
        web_roots = np.array(self.web_roots, dtype=np.int64)
        planted_roots = web_roots[np.arange(len(plant_rows)) % len(web_roots)]
        has[plant_rows] = True
        web[plant_rows] = planted_roots
        text[plant_rows] = None
        self.web_planted = len(plant_rows)
        self.web_planted_after_ambiguity = len(ambiguous_email)

        with_site = np.flatnonzero(web >= 0)
        site_root = web[with_site]
        site = np.where(site_root < p.idn_count, p.display[site_root], p.ascii[site_root])
        # URL shapes as Domain Intelligence returns them: (prefix, suffix, weight).
        shapes = (("https://www.", "", 45), ("https://", "", 18), ("http://", "/", 15),
                  ("www.", "", 10), ("", "", 8), ("https://www.", "/en/home", 4))  # fmt: skip
        shape = rng.choice(len(shapes), len(with_site), p=_normalised([w for *_, w in shapes]))
        prefix = _objects([a for a, _, _ in shapes])[shape]
        suffix = _objects([b for _, b, _ in shapes])[shape]
        text[with_site] = prefix + site + suffix
        self.web_root = web

        rows = np.flatnonzero(has)
        safe = np.maximum(web[rows], 0)
        known = web[rows] >= 0
        company_name = np.where(known, p.name[safe], None).astype(object)
        by_name = ~known & (rng.random(len(rows)) < 0.2)
        company_name[by_name] = self.name[rows][by_name]
        industry = np.where(known, p.industry[safe], None).astype(object)
        employees = np.round(np.exp(rng.normal(4.0, 1.6, len(rows)))).astype(np.int64) + 1
        employee_count = employees.astype(object)
        employee_count[~known | (rng.random(len(rows)) < 0.1)] = None
        country = np.where(known, p.country[safe], self.country[rows]).astype(object)
        country[rng.random(len(rows)) < 0.05] = None
        records = zip(
            self.ids[rows].tolist(),
            text[rows].tolist(),
            company_name.tolist(),
            industry.tolist(),
            employee_count.tolist(),
            country.tolist(),
            strict=True,
        )
        tenants = {
            tid: {
                "official_website": site_text,
                "company_name": cname,
                "industry": ind,
                "employee_count": count,
                "country": ctry,
            }
            for tid, site_text, cname, ind, count, ctry in records
        }
        # A small fallback by email domain: the site is the domain itself, so it never changes
        # which company a tenant matches.
        domains = {}
        for root in range(p.tenant_start, min(p.extra_start, p.tenant_start + 200)):
            domain = str(p.ascii[root])
            domains[domain] = {
                "official_website": f"https://www.{domain}",
                "company_name": str(p.name[root]),
                "industry": str(p.industry[root]),
                "employee_count": None,
                "country": str(p.country[root]),
            }
        self.intel = {"tenants": tenants, "domains": domains}
