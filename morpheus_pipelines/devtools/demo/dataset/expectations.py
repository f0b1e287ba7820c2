"""What the generator planted and what routing it implies: ``truth`` per tenant, ``expected``
as counts (see the package docstring for their meaning)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .vocabulary import _EMPTY, _FREE, _IDN, _MALF, _NONE, _US, EMAIL_KINDS, HUBSPOT_MATCH_METHODS


class TruthSteps:
    """The builder's last step: the truth frame and the expected counts."""

    def truth(self) -> None:
        n = self.n
        email_root = np.where(self.dom >= 0, self.dom, -1)
        steps = []
        for company, ambiguous in (
            (self.portal_company, self.portal_ambiguous),
            (self.account_company, self.account_ambiguous),
        ):
            steps.append((company, ambiguous))
        for root in (email_root, self.web_root):
            safe = np.maximum(root, 0)
            steps.append(
                (
                    np.where(root >= 0, self.root_owner[safe], -1),
                    (root >= 0) & (self.root_count[safe] > 1),
                )
            )
        company = np.full(n, -1, dtype=np.int64)
        method = np.full(n, None, dtype=object)
        ambiguous_match = np.zeros(n, dtype=bool)
        undecided = np.ones(n, dtype=bool)
        for name, (found_company, ambiguous) in zip(HUBSPOT_MATCH_METHODS, steps, strict=True):
            ambiguous_match |= undecided & ambiguous
            hit = undecided & (found_company >= 0)
            company[hit] = found_company[hit]
            method[hit] = name
            undecided &= ~hit
        company_id = np.where(company >= 0, self.company_ids[np.maximum(company, 0)], None)
        sales_owned = self.sales_owned
        bucket = np.full(n, None, dtype=object)
        cand = self.candidate
        bucket[cand] = "active"
        bucket[cand & sales_owned & (company < 0)] = "sales_owned"
        bucket[cand & self.forced] = "sales_owned"
        self.truth_frame = pd.DataFrame(
            {
                "tenant_id": self.ids,
                "active_candidate": self.active_candidate,
                "signup_candidate": self.signup_candidate,
                "candidate": cand,
                "email_kind": pd.Categorical.from_codes(self.kind, categories=list(EMAIL_KINDS)),
                "hubspot_company_id": pd.Series(company_id, dtype=object),
                "hubspot_match_method": pd.Series(method, dtype=object),
                "ambiguous_match": ambiguous_match,
                "sales_owned": sales_owned,
                "forced": self.forced,
                "bucket": pd.Series(bucket, dtype=object),
            }
        )
        routed = cand & ~self.forced
        methods = pd.Series(method[routed], dtype=object).value_counts()
        ambiguous_roots = int((self.root_count > 1).sum())
        created = self.created_us
        self.expected_counts = {
            "tenants": n,
            "companies": self.c,
            "apac_tenants": int(self.apac.sum()),
            "active_candidates": int(self.active_candidate.sum()),
            "signup_candidates": int(self.signup_candidate.sum()),
            "candidates": int(cand.sum()),
            "candidates_in_both_queries": int(
                (self.active_candidate & self.signup_candidate).sum()
            ),
            "signups_in_day": int(self.in_day.sum()),
            "boundary": {
                "at_day_start": int((created == self.start_us).sum()),
                "at_day_last_second": int((created == self.end_us - _US).sum()),
                "at_day_last_microsecond": int((created == self.end_us - 1).sum()),
                "inside": int(self.boundary_inside.sum()),
                "just_outside": int(self.boundary_outside.sum()),
            },
            "matches": {m: int(methods.get(m, 0)) for m in HUBSPOT_MATCH_METHODS},
            "matched": int((routed & (company >= 0)).sum()),
            "unmatched": int((routed & (company < 0)).sum()),
            "ambiguous_unmatched": int((routed & ambiguous_match & (company < 0)).sum()),
            "ambiguous_any": int((routed & ambiguous_match).sum()),
            "planted": {
                "portal_id": self.n_portal_planted,
                "account_id": self.n_account_planted,
                "email_domain_companies": self.n_email_companies,
                "official_website": self.web_planted,
                "official_website_after_ambiguity": self.web_planted_after_ambiguity,
                "ambiguous_root_pairs": len(self.amb_company_roots),
                "ambiguous_portal_ids": 1,
                "ambiguous_account_ids": 1,
                "free_mail_companies": 3,
            },
            "ambiguous_roots": ambiguous_roots,
            "free_mail_tenants": int((self.kind == _FREE).sum()),
            "free_mail_candidates": int((cand & (self.kind == _FREE)).sum()),
            "idn_email_tenants": int((self.kind == _IDN).sum()),
            "malformed_emails": int(np.isin(self.kind, [_NONE, _EMPTY, _MALF]).sum()),
            "sales_owner_apac": int(sales_owned.sum()),
            "hubspot_and_sales_candidates": int((routed & sales_owned & (company >= 0)).sum()),
            "forced": int(self.forced.sum()),
            "buckets": {
                "active": int((bucket == "active").sum()),
                "sales_owned": int((bucket == "sales_owned").sum()),
            },
        }
