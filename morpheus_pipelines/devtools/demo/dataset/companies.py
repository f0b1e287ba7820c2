"""The HubSpot companies of the target list, with the roots they share with tenants."""

from __future__ import annotations

from typing import Any

import numpy as np

from .sampling import _iso_z, _texts, _top_k, _upper
from .vocabulary import _BRAND_WORDS, _US


class CompanySteps:
    """The builder's step that makes the companies, and how a company writes a domain."""

    def companies(self) -> None:
        rng, c, p = self.rng_company, self.c, self.p
        candidate_corp = self.candidate & (self.dom >= 0) & (self.dom < p.row_start)
        per_root = np.bincount(self.dom[candidate_corp], minlength=len(p.ascii))
        idn_roots = np.flatnonzero(per_root[: p.idn_count] > 0)
        idn_roots = idn_roots[rng.permutation(len(idn_roots))]
        ascii_used = p.tenant_start + np.flatnonzero(per_root[p.tenant_start : p.extra_start] > 0)
        ascii_used = ascii_used[_top_k(rng, np.log(per_root[ascii_used]), len(ascii_used))]

        n_amb = max(1, round(0.02 * c))
        n_idn = max(2, round(0.01 * c))
        n_email = round(0.42 * c)
        n_web = max(2, round(0.10 * c))
        n_none = max(1, round(0.06 * c))
        # Ambiguous pairs: the first one on an IDN root (Unicode vs punycode), when there is one.
        amb_roots: list[int] = []
        if len(idn_roots):
            amb_roots.append(int(idn_roots[0]))
            idn_roots = idn_roots[1:]
        ascii_iter = iter(ascii_used.tolist())
        amb_roots += [r for _, r in zip(range(n_amb - len(amb_roots)), ascii_iter, strict=False)]
        idn_company_roots = idn_roots[:n_idn].tolist()
        email_roots = [r for _, r in zip(range(n_email), ascii_iter, strict=False)]
        extra = iter(range(p.extra_start, p.row_start))

        roles: list[tuple[str, Any]] = [("free", i) for i in range(3)]
        for root in amb_roots:
            roles += [("amb", (root, 0)), ("amb", (root, 1))]
        roles += [("idn", r) for r in idn_company_roots]
        roles += [("email", r) for r in email_roots]
        roles += [("web", next(extra)) for _ in range(n_web)]
        roles += [("none", None) for _ in range(n_none)]
        if len(roles) > c:
            raise ValueError(f"too few companies ({c}) for the planted cases")
        roles += [("unused", next(extra)) for _ in range(c - len(roles))]
        order = rng.permutation(c)
        roles = [roles[i] for i in order]

        ids = _texts(9_000_000_000 + np.cumsum(rng.integers(1, 5_000, c)))
        modified_us = self.start_us - rng.integers(3600, 720 * 86_400, c) * _US
        created_us = modified_us - rng.integers(0, 1500 * 86_400, c) * _US
        modified = _iso_z(modified_us + rng.integers(0, 1000, c) * 1000)
        created = _iso_z(created_us)
        pairs: list[tuple[int, int]] = []  # (company position, root index) for the truth
        out: list[dict[str, Any]] = []
        self.web_roots: list[int] = []
        self.amb_company_roots: list[int] = amb_roots
        roll = rng.random((c, 8)).tolist()
        for pos, (role, arg) in enumerate(roles):
            r = roll[pos]
            domain: str | None = None
            website: str | None = None
            additional: list[str] = []
            root: int | None = None
            name: str | None = None
            if role == "free":
                domain, website, additional = [
                    ("gmail.com", "https://www.gmail.com", []),
                    ("qq.com", None, ["163.com", "", "naver.com"]),
                    (None, "https://mail.yahoo.co.jp/", ["outlook.com"]),
                ][arg]
                name = ["Gmail Users (bad import)", "Tencent QQ", "Yahoo Japan Mail"][arg]
            elif role == "amb":
                root, which = arg
                if root < p.idn_count:
                    domain = str(p.display[root] if which == 0 else p.ascii[root])
                elif which == 0:
                    domain = self._domain_text(root, r[0])
                elif r[1] < 0.5:
                    other = next(extra)
                    domain = self._domain_text(other, r[0])
                    pairs.append((pos, other))
                    additional = [str(p.ascii[root])]
                else:
                    website = self._website_text(root, r[2])
                name = str(p.name[root]) + (" (Holdings)" if which else "")
                pairs.append((pos, root))
                root = None
            elif role == "idn":
                root = arg
                domain = str(p.display[root] if r[0] < 0.5 else p.ascii[root])
            elif role == "email":
                root = arg
                if r[1] < 0.75:
                    domain = self._domain_text(root, r[0])
                elif r[1] < 0.85:
                    website = self._website_text(root, r[2])
                else:
                    other = next(extra)
                    domain = self._domain_text(other, r[0])
                    pairs.append((pos, other))
                    additional = [self._domain_text(root, r[3])]
            elif role in ("web", "unused"):
                root = arg
                domain = self._domain_text(root, r[0])
                if role == "web":
                    self.web_roots.append(root)
            if root is not None:
                pairs.append((pos, root))
                name = str(p.name[root])
                if website is None and r[4] < 0.6:
                    website = self._website_text(root, r[2])
            if role != "none" and role != "free" and r[5] < 0.3:
                for _ in range(1 + int(r[6] * 3)):
                    other = next(extra)
                    additional.append(self._domain_text(other, r[7]))
                    pairs.append((pos, other))
            if root is not None and r[5] > 0.95:
                additional.append(str(p.ascii[root]))  # listing its own root again
            if name is None:
                name = f"{_BRAND_WORDS[pos % len(_BRAND_WORDS)].title()} Group {pos}"
            additional_text: str | None
            if additional:
                parts = list(additional)
                if r[6] < 0.5:
                    parts.insert(int(r[7] * len(parts)), "")
                if r[7] < 0.3:
                    parts.append(" ")
                additional_text = ";".join(parts)
            elif role == "none" and r[0] < 0.5:
                additional_text = ";;"
            else:
                additional_text = None
            if role == "none":
                domain = "" if r[1] < 0.3 else None
                website = "" if r[2] < 0.3 else None
            out.append(
                {
                    "id": str(ids[pos]),
                    "name": name,
                    "domain": domain,
                    "website": website,
                    "hs_additional_domains": additional_text,
                    "portal_id__c": None,
                    "account_id__c": None,
                    "account_allias__c": self._alias(name) if r[3] < 0.4 else None,
                    "hs_lastmodifieddate": modified[pos],
                    "createdAt": created[pos],
                    "updatedAt": modified[pos],
                }
            )
        self.company_ids = ids
        self.company_list = out
        self.company_roles = [role for role, _ in roles]
        self.company_root_pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        self.n_email_companies = len(email_roots) + len(idn_company_roots)

    def _domain_text(self, root: int, roll: float) -> str:
        """A company ``domain`` value for a root: mostly canonical, sometimes messy."""
        text = str(self.p.ascii[root])
        if roll < 0.70:
            return text
        if roll < 0.80:
            return "www." + text
        if roll < 0.87:
            return _upper(text)
        if roll < 0.92:
            return "app." + text
        if roll < 0.97:
            return text + "."
        return f" {text} "

    def _website_text(self, root: int, roll: float) -> str:
        """A website URL for a root, in one of the shapes people store."""
        text = str(self.p.display[root] if root < self.p.idn_count else self.p.ascii[root])
        shapes = (
            "https://www.{d}", "http://{d}/", "https://{d}/about", "www.{d}", "{d}",
            "HTTPS://WWW.{D}:443/", "https://shop.{d}/?utm_source=hubspot#top",
        )  # fmt: skip
        shape = shapes[min(int(roll * len(shapes)), len(shapes) - 1)]
        return shape.format(d=text, D=_upper(text))

    @staticmethod
    def _alias(name: str) -> str:
        words = [w for w in name.replace(",", " ").split() if w[:1].isalpha()]
        return "".join(w[0].upper() for w in words[:3]) or name[:8]
