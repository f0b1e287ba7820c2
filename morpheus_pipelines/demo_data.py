"""Deterministic generator of a realistic APAC data set for ``morpheus demo``, benchmarks and tests.

:func:`generate_dataset` returns a :class:`DemoDataset` holding, for one partition day:

* ``tenants``: rows of the DevOps source table ``{MORPHEUS_SOURCE_SCHEMA}.tenants`` with exactly
  its columns (DESIGN §2, :data:`TENANT_COLUMNS`). Text columns are ``object`` dtype with
  ``None`` for NULL (so ``""`` and NULL stay distinct), ``seats``/``active_users_30d`` are
  nullable ``Int64``, ``created_at``/``last_active_at`` are tz-aware UTC.
* ``companies``: flat HubSpot company dicts for
  :func:`~morpheus_pipelines.emulators.hubspot.build_data` (every one a member of list 19544).
* ``domain_intel``: data for the Domain Intelligence emulator (``{"tenants": {...},
  "domains": {...}}``).
* ``sales_emails``/``forced_ids``/``token``: the ``APAC_SALES_EMAILS``,
  ``FORCED_SALES_OWNED_TENANT_IDS`` and ``HUBSPOT_PRIVATE_APP_TOKEN`` to run with
  (:meth:`DemoDataset.environment`).
* ``truth``/``expected``: what the generator planted and what routing it implies, per tenant and
  as counts, so benchmarks and tests can assert on outcomes.

What it contains
    About 85 % of tenants are ``APAC`` (the rest ``EMEA``/``AMER``), with statuses ``active``,
    ``paid``, ``free_trial``, ``new_user``, ``closing`` and ``suspended``. Signups cluster on the
    partition day in Asia/Shanghai time, with rows at exactly 00:00:00, 23:59:59 and
    23:59:59.999999 CST, just outside the day (one second / microsecond before, the next
    midnight) and on the UTC-date traps (inside the CST day but on the previous UTC date, and
    outside it but on the same UTC date). Emails use corporate domains under APAC country
    suffixes (``.com.au``, ``.co.jp``, ``.com.cn``, ``.co.kr``, ``.com.sg``, ``.co.nz``,
    ``.com.hk``, ``.co.in``, …), free mail (Gmail, QQ, 163, Naver, Daum, Hanmail, Yahoo Japan,
    Outlook, …), disposable mail, internationalised domains written by some tenants in Unicode
    (``例え.jp``, ``bücher.de``, ``上海科技.中国``) and by others in punycode, ``www.``/``mail.``
    hosts, upper case, trailing dots and padding, and at a low rate missing or malformed values
    (NULL, ``""``, ``no-at-sign``, ``a@@b``, very long, odd Unicode, SQL-looking text).
    About 8 % of tenants have an APAC Sales owner (with case and padding variants), others a
    non-APAC sales person, near misses (``+tag``, other domain, two addresses) or nothing.

Planted HubSpot matches (002 §6), each present at every supported size (``tenants >= 100``,
``companies >= 20``):
    * ``portal_id``: companies whose ``portal_id__c`` is a candidate tenant's id (as text, as a
      number, or padded with spaces), one id shared by two companies (ambiguous, falls through);
    * ``account_id``: companies whose ``account_id__c`` is a candidate's ``custom_id``, one
      shared by two companies, one lower-cased near miss (identifiers are case-sensitive);
    * ``email_domain``: company ``domain``/``website``/``hs_additional_domains`` roots that
      candidates' corporate emails use (as written, as a subdomain, ``www.``, URL, IDN in either
      form);
    * ``official_website``: companies whose root no tenant email uses but that the Domain
      Intelligence data returns as the ``official_website`` of free-mail, malformed-email or
      otherwise unmatched candidates;
    * ambiguous roots shared by two companies (one pair is an IDN written in Unicode by one
      company and in punycode by the other), free-mail company domains (``gmail.com``,
      ``qq.com``, …) that must never match, companies without any domain.

``truth`` (one row per tenant, :data:`TRUTH_COLUMNS`) is computed from how the data was built
(pool indices), not by running the matcher; the test suite checks that
:func:`~morpheus_pipelines.rules.matching.match_tenants` agrees row for row (method, company,
ambiguity) when given the companies' roots and the Domain Intelligence ``official_website``.
A *candidate* is an ``APAC`` tenant whose status is not ``free_trial``/``new_user``/``closing``
(the active query) or that signed up on the partition day in CST (the signup query); a tenant
can be both. ``hubspot_match_method`` is given for every tenant regardless of the forced list;
``bucket`` (candidates only) applies 002 §2: forced → ``sales_owned``, HubSpot match →
``active``, APAC Sales owner → ``sales_owned``, else ``active``. ``expected`` counts the same
things: ``matches`` per method and ``matched``/``unmatched``/``ambiguous_*`` over non-forced
candidates, ``buckets`` over all candidates, ``planted`` what was deliberately placed.

``write()`` produces a ``tenants.csv`` in PostgreSQL ``COPY … (FORMAT csv, HEADER)`` form:
an unquoted empty field is NULL and ``""`` is the empty string.

Performance: 1,000,000 tenants x 50,000 companies in about 6 s and under 1 GB. Per-tenant work
is numpy arithmetic, indexing into small precomputed vocabularies and element-wise object-array
concatenation; Python-level loops run over companies and to build the Domain Intelligence dict.
Every step draws from its own child stream of ``numpy.random.SeedSequence(seed)``, so the same
arguments always give the same data.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import idna
import numpy as np
import pandas as pd

from morpheus_pipelines.emulators.hubspot import build_data as build_hubspot_data
from morpheus_pipelines.source import SOURCE_COLUMNS

__all__ = [
    "CST",
    "EMAIL_KINDS",
    "EXCLUDED_ACTIVE_STATUSES",
    "HUBSPOT_MATCH_METHODS",
    "TENANT_COLUMNS",
    "TRUTH_COLUMNS",
    "DemoDataset",
    "generate_dataset",
    "write_tenants_csv",
]

CST = ZoneInfo("Asia/Shanghai")
TENANT_COLUMNS: tuple[str, ...] = SOURCE_COLUMNS
"""Columns of the source table ``{MORPHEUS_SOURCE_SCHEMA}.tenants`` (DESIGN §2), in order."""

EXCLUDED_ACTIVE_STATUSES: frozenset[str] = frozenset({"free_trial", "new_user", "closing"})
"""Statuses the active-candidate query excludes (002 §1)."""

HUBSPOT_MATCH_METHODS: tuple[str, ...] = (
    "portal_id",
    "account_id",
    "email_domain",
    "official_website",
)

TRUTH_COLUMNS: tuple[str, ...] = (
    "tenant_id",
    "active_candidate",
    "signup_candidate",
    "candidate",
    "email_kind",
    "hubspot_company_id",
    "hubspot_match_method",
    "ambiguous_match",
    "sales_owned",
    "forced",
    "bucket",
)
"""Columns of :attr:`DemoDataset.truth`."""

MIN_TENANTS = 100
MIN_COMPANIES = 20
SALES_DOMAIN = "morpheus.example.com"
DEFAULT_LIST_ID = "19544"

_US = 1_000_000  # microseconds per second
_DAY_US = 86_400 * _US

# --------------------------------------------------------------------------------------------
# Vocabularies (fixed: the same for every seed).

_BRAND_WORDS = (
    "lioncity", "harbour", "sakura", "pacific", "jade", "lotus", "dragon", "kiwi", "koala",
    "banyan", "merlion", "bamboo", "fuji", "hanok", "ginkgo", "tasman", "coral", "monsoon",
    "saffron", "orchid", "kauri", "wattle", "lantern", "mekong", "yangtze", "kowloon", "marina",
    "sentosa", "bondi", "uluru", "canopy", "typhoon", "tidal", "reef", "summit", "himalaya",
    "ganges", "java", "sumatra", "borneo", "bali", "luzon", "halong", "saigon", "mandalay",
    "indigo", "crimson", "golden", "silver", "emerald", "sapphire", "pearl", "amber", "ivory",
    "onyx", "cobalt", "azure", "scarlet", "violet", "tealwave", "northstar", "southcross",
    "eastwind", "westgate", "sunrise", "moonlight", "starfield", "skyline", "blueocean",
    "greenleaf", "redbrick", "whitecloud", "blackswan", "yellowriver", "purplehill", "maple",
    "cedar", "pine", "willow", "plum", "peony", "cherry", "camellia", "hibiscus", "frangipani",
    "tamarind", "durian", "mango", "lychee", "rambutan", "pandan", "kimchi", "matcha", "yuzu",
    "wasabi", "ginseng", "teak", "rosewood", "sandalwood", "cinnamon",
)  # fmt: skip
_INDUSTRY_WORDS = (
    ("logistics", "Logistics"), ("analytics", "Software"), ("devices", "Hardware"),
    ("foods", "Food & Beverage"), ("labs", "Biotechnology"), ("systems", "Software"),
    ("tech", "Software"), ("trading", "Wholesale"), ("capital", "Financial Services"),
    ("health", "Healthcare"), ("media", "Media"), ("robotics", "Manufacturing"),
    ("energy", "Energy"), ("retail", "Retail"), ("studio", "Design"), ("cloud", "Software"),
    ("data", "Software"), ("works", "Manufacturing"), ("solutions", "IT Services"),
    ("partners", "Consulting"), ("ventures", "Financial Services"), ("networks", "Telecom"),
    ("pharma", "Pharmaceuticals"), ("motors", "Automotive"), ("textiles", "Textiles"),
    ("shipping", "Logistics"), ("games", "Gaming"), ("learning", "Education"),
    ("security", "Cybersecurity"), ("finance", "Financial Services"), ("realty", "Real Estate"),
    ("travel", "Travel"), ("fashion", "Apparel"), ("farms", "Agriculture"),
    ("bio", "Biotechnology"), ("electronics", "Electronics"), ("software", "Software"),
    ("digital", "Marketing"), ("consulting", "Consulting"), ("engineering", "Engineering"),
    ("materials", "Manufacturing"), ("chemicals", "Chemicals"), ("marine", "Maritime"),
    ("aero", "Aerospace"), ("design", "Design"), ("insights", "Market Research"),
    ("payments", "Fintech"), ("mobility", "Transportation"), ("clinic", "Healthcare"),
    ("academy", "Education"),
)  # fmt: skip

# (suffix, country or "" for a random APAC country, weight)
_APAC_SUFFIXES = (
    ("com.au", "AU", 8), ("co.jp", "JP", 8), ("com.cn", "CN", 7), ("co.kr", "KR", 6),
    ("com.sg", "SG", 8), ("co.nz", "NZ", 3), ("com.hk", "HK", 4), ("co.in", "IN", 6),
    ("com.tw", "TW", 3), ("com.my", "MY", 3), ("co.th", "TH", 2), ("co.id", "ID", 3),
    ("com.ph", "PH", 2), ("com.vn", "VN", 2), ("jp", "JP", 3), ("sg", "SG", 2), ("cn", "CN", 3),
    ("kr", "KR", 1), ("in", "IN", 1), ("com", "", 12), ("io", "", 2), ("ai", "", 1),
    ("net", "", 1), ("asia", "", 1),
)  # fmt: skip
_ROW_SUFFIXES = (
    ("de", "DE", 4), ("fr", "FR", 3), ("co.uk", "GB", 4), ("nl", "NL", 2), ("es", "ES", 2),
    ("it", "IT", 2), ("ch", "CH", 1), ("se", "SE", 1), ("ca", "CA", 2), ("com.br", "BR", 2),
    ("com.mx", "MX", 1), ("us", "US", 2), ("ie", "IE", 1), ("be", "BE", 1),
)  # fmt: skip
_APAC_COUNTRIES = (
    "AU",
    "JP",
    "CN",
    "KR",
    "SG",
    "NZ",
    "HK",
    "IN",
    "TW",
    "MY",
    "TH",
    "ID",
    "PH",
    "VN",
)
_EMEA_COUNTRIES = ("DE", "GB", "FR", "NL", "ES", "IT", "SE", "CH", "IE", "BE")
_AMER_COUNTRIES = ("US", "CA", "BR", "MX")
_LEGAL_SUFFIX = {
    "AU": "Pty Ltd", "NZ": "Limited", "SG": "Pte. Ltd.", "MY": "Sdn. Bhd.", "JP": "K.K.",
    "CN": "Co., Ltd.", "HK": "Limited", "KR": "Co., Ltd.", "IN": "Pvt. Ltd.", "TW": "Co., Ltd.",
    "TH": "Co., Ltd.", "ID": "Tbk", "PH": "Inc.", "VN": "JSC", "DE": "GmbH", "FR": "SAS",
    "GB": "Ltd", "NL": "B.V.", "ES": "S.L.", "IT": "S.r.l.", "CH": "AG", "SE": "AB",
    "CA": "Inc.", "BR": "Ltda.", "MX": "S.A. de C.V.", "US": "Inc.", "IE": "Ltd", "BE": "NV",
}  # fmt: skip


def _idn_domains() -> list[tuple[str, str, str]]:
    """(Unicode domain, country, display name) of the internationalised company domains."""
    out: list[tuple[str, str, str]] = [("例え.jp", "JP", "例え株式会社")]
    for city in ("東京", "大阪", "京都", "横浜", "名古屋", "札幌"):
        for kind in ("商事", "製作所", "電機", "物産"):
            out.append((f"{city}{kind}.jp", "JP", f"{city}{kind}株式会社"))
    for index, city in enumerate(("上海", "北京", "深圳", "杭州")):
        for kind in ("科技", "数据", "贸易"):
            tld = ("cn", "中国", "com.cn")[(index + len(kind)) % 3]
            out.append((f"{city}{kind}.{tld}", "CN", f"{city}{kind}有限公司"))
    for city in ("서울", "부산", "인천"):
        for kind in ("테크", "물류", "상사"):
            tld = "한국" if kind == "상사" else "kr"
            out.append((f"{city}{kind}.{tld}", "KR", f"{city}{kind} 주식회사"))
    for label in ("bücher", "münchen-technik", "köln-logistik", "düsseldorf-daten", "straße-bau"):
        out.append((f"{label}.de", "DE", f"{label.title()} GmbH"))
    return out


def _fullwidth(text: str) -> str:
    """``text`` with its printable ASCII characters in their full-width (CJK keyboard) forms."""
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


_FREE_APAC = (
    ("gmail.com", 28), ("qq.com", 16), ("163.com", 8), ("126.com", 3), ("foxmail.com", 2),
    ("vip.qq.com", 1), ("naver.com", 7), ("daum.net", 3), ("hanmail.net", 3),
    ("yahoo.co.jp", 7), ("outlook.com", 8), ("hotmail.com", 4), ("icloud.com", 2),
    ("yahoo.com.au", 2), ("bigpond.com", 1), ("Gmail.com", 1), ("googlemail.com", 1),
    ("vip.163.com", 1), ("rediffmail.com", 1), ("outlook.jp", 1),
)  # fmt: skip
_FREE_ROW = (("gmail.com", 50), ("outlook.com", 20), ("hotmail.com", 12), ("yahoo.com", 12),
             ("icloud.com", 6))  # fmt: skip
_DISPOSABLE = ("guerrillamail.com", "10minutemail.com", "sharklasers.com", "mailinator.com")
_MALFORMED_EMAILS = (
    "no-at-sign",
    "a@@b",
    "@missing-local-part.invalid",
    "user@",
    "user@localhost",
    "user@192.168.0.1",
    "user@[2001:db8::1]",
    "x" * 300 + "@" + "y" * 80 + ".invalid",
    "'; DROP TABLE tenants; --",
    "robert'); DROP TABLE students;--@evil.example",
    "1' OR '1'='1",
    "用户@例子",
    "🦄@🦄.invalid",
    _fullwidth("taro@example.invalid"),  # full-width letters, at sign and dot
    "tab\tuser@host.invalid",
    "first last@acme .invalid",
    "line1\nline2@host.invalid",
    "\u202eevil@moc.elgoog",
    "mailto:",
    "N/A",
    "null",
    "名" * 200,
)
_FIRST = (
    "wei", "jing", "min", "hiroshi", "yuki", "haruto", "sakura", "ji-ho", "minjun", "seoyeon",
    "arjun", "priya", "rahul", "siti", "nur", "ahmad", "thanh", "linh", "juan", "maria", "jack",
    "olivia", "liam", "chloe", "ethan", "mei", "kenji", "hana", "daniel", "grace",
)  # fmt: skip
_LAST = (
    "chen", "wang", "li", "zhang", "liu", "tanaka", "suzuki", "sato", "takahashi", "kim", "lee",
    "park", "choi", "sharma", "patel", "singh", "nguyen", "tran", "tan", "lim", "ng", "wong",
    "smith", "brown", "wilson", "taylor", "santos", "reyes", "rahman", "ito",
)  # fmt: skip
_ROLES = ("info", "admin", "it", "ops", "finance", "hello", "contact", "support", "billing",
          "dev", "hr", "sales")  # fmt: skip
_CJK_NAMES = ("张伟", "王芳", "李娜", "山田太郎", "佐藤花子", "김민준", "이서연", "陈静",
              "田中一郎", "박지훈", "刘洋", "高橋美咲")  # fmt: skip
_ODD_NAMES = ("", "Test", "asdf", "🚀 Startup", "'; DROP TABLE tenants; --",
              _fullwidth("Full") + "\u3000" + _fullwidth("Width Co"), "N/A", "x" * 256)  # fmt: skip
_TEAMS = ("Marketing", "APAC", "Engineering", "Sales", "HQ", "Sandbox", "Test")
_APAC_SALES_PEOPLE = (
    "mei.chen", "kenji.tanaka", "jiwoo.park", "arjun.mehta", "olivia.nguyen", "liam.wilson",
    "siti.rahman", "wei.zhang", "hana.kim", "james.lee", "priya.sharma", "tom.walker",
)  # fmt: skip
_OTHER_SALES_PEOPLE = ("hans.mueller", "sophie.martin", "john.smith", "emily.johnson",
                       "carlos.silva", "anna.kowalski")  # fmt: skip
_INDUSTRIES = tuple(sorted({industry for _, industry in _INDUSTRY_WORDS}))
_BAD_WEBSITES = ("not a url", "http://", "localhost", "192.168.1.1", "https://", "n/a")

# Email kinds: codes in the per-tenant arrays, names in ``truth.email_kind``. The generator's
# intent, not the matcher's class: "malformed" text may still parse to a (non-matching) host.
_CORP, _IDN, _FREE, _DISP, _NONE, _EMPTY, _MALF = range(7)
EMAIL_KINDS = ("corporate", "idn", "free", "disposable", "missing", "empty", "malformed")

_STATUSES = np.array(["active", "paid", "free_trial", "new_user", "closing", "suspended"], object)
_REGIONS = np.array(["APAC", "EMEA", "AMER"], dtype=object)
_PLANS = np.array([None, "free", "trial", "starter", "team", "business", "enterprise"], object)


# --------------------------------------------------------------------------------------------
# The data set.


@dataclass(eq=False)
class DemoDataset:
    """A generated data set (see the module docstring for what it contains)."""

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
        """Settings this data set is meant to run with (the variables of DESIGN §2)."""
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


def generate_dataset(
    *,
    tenants: int = 10_000,
    companies: int = 500,
    seed: int = 7,
    partition_day: date,
    sales_emails: int = 6,
    forced_ids: int = 3,
) -> DemoDataset:
    """Generate a deterministic APAC data set (see the module docstring).

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


# --------------------------------------------------------------------------------------------
# Helpers.


def _objects(values: Sequence[Any]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    return array


def _texts(numbers: np.ndarray) -> np.ndarray:
    """Decimal text of an integer array, as an object array."""
    return _objects(list(map(str, numbers.tolist())))


def _counts(size: int, weights: Sequence[float], minimum: Sequence[int] | None = None) -> list[int]:
    """Split ``size`` into integer parts proportional to ``weights`` (with per-part minimums).

    The first part absorbs the rounding, so it should be the largest.
    """
    total = float(sum(weights))
    counts = [round(size * w / total) for w in weights]
    if minimum is not None:
        counts = [max(c, m) for c, m in zip(counts, minimum, strict=True)]
    counts[0] += size - sum(counts)
    if counts[0] < 0:
        raise ValueError("minimum counts exceed the size")
    return counts


def _allocate(rng: np.random.Generator, counts: Sequence[int]) -> np.ndarray:
    """Exactly ``counts[k]`` cells of code ``k``, in random order."""
    codes = np.repeat(np.arange(len(counts), dtype=np.int8), counts)
    rng.shuffle(codes)
    return codes


def _choice(
    rng: np.random.Generator,
    values: Sequence[Any],
    size: int,
    weights: Sequence[float] | None = None,
) -> np.ndarray:
    """``size`` draws from ``values`` (optionally weighted), as an object array."""
    p = None if weights is None else _normalised(weights)
    return _objects(values)[rng.choice(len(values), size=size, p=p)]


def _top_k(rng: np.random.Generator, log_weights: np.ndarray, k: int) -> np.ndarray:
    """Weighted sampling of ``k`` distinct positions without replacement (Gumbel top-k)."""
    k = min(k, len(log_weights))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    keys = log_weights + rng.gumbel(size=len(log_weights))
    chosen = np.argpartition(-keys, k - 1)[:k]
    return chosen[np.argsort(-keys[chosen], kind="stable")]


def _upper(text: str) -> str:
    """Upper case that keeps the value's meaning: ``"straße".upper()`` is ``"STRASSE"``, a
    different domain, so such text stays as it is."""
    upper = text.upper()
    return upper if upper.lower() == text.lower() else text


def _normalised(weights: Sequence[float]) -> np.ndarray:
    p = np.asarray(weights, dtype=float)
    return p / p.sum()


def _corporate_locals(rng: np.random.Generator, size: int) -> np.ndarray:
    """Local parts of work addresses: first.last, first, flast or a role, some with digits."""
    vocab = _objects(
        [f"{f}.{v}" for f in _FIRST for v in _LAST]
        + list(_FIRST)
        + [f"{f[0]}{v}" for f in _FIRST for v in _LAST]
        + list(_ROLES)
    )
    people = len(_FIRST) * len(_LAST)
    shape = rng.random(size)
    index = np.where(
        shape < 0.55,
        rng.integers(0, people, size),
        np.where(
            shape < 0.70,
            people + rng.integers(0, len(_FIRST), size),
            np.where(
                shape < 0.80,
                people + len(_FIRST) + rng.integers(0, people, size),
                2 * people + len(_FIRST) + rng.integers(0, len(_ROLES), size),
            ),
        ),
    )
    local = vocab[index]
    numbered = np.flatnonzero(rng.random(size) < 0.1)
    local[numbered] = local[numbered] + _texts(rng.integers(1, 100, len(numbered)))
    return local


def _free_locals(rng: np.random.Generator, size: int) -> np.ndarray:
    """Local parts of personal mailboxes: name plus digits, or name plus birth year."""
    with_digits = _objects(
        [f"{f}{sep}{v}" for f in _FIRST for sep in (".", "_", "") for v in _LAST]
    )
    with_year = _objects([f"{f}{year}" for f in _FIRST for year in range(1970, 2006)])
    local = with_year[rng.integers(0, len(with_year), size)]
    numbered = np.flatnonzero(rng.random(size) < 0.5)
    local[numbered] = with_digits[rng.integers(0, len(with_digits), len(numbered))] + _texts(
        rng.integers(1, 10_000, len(numbered))
    )
    return local


def _isin(values: np.ndarray, items: Sequence[Any] | frozenset[Any]) -> np.ndarray:
    """Element-wise membership that tolerates ``None`` cells (hash based, unlike ``np.isin``)."""
    return pd.Series(values, dtype=object).isin(list(items)).to_numpy(dtype=bool)


def _punycode(domain: str) -> str:
    return idna.encode(domain, uts46=True, transitional=False).decode("ascii")


def _iso_z(micros: np.ndarray) -> list[str]:
    """HubSpot-style timestamps (``2026-07-01T03:04:05.678Z``)."""
    millis = np.asarray(micros, dtype=np.int64) // 1000
    return [f"{text}Z" for text in np.datetime_as_string(millis.astype("datetime64[ms]")).tolist()]


@dataclass
class _Pool:
    """All email/website domains: canonical (punycode) text, display text, metadata."""

    ascii: np.ndarray  # canonical lower-case punycode form
    display: np.ndarray  # what a person types: Unicode for IDNs, else the same as ascii
    country: np.ndarray
    name: np.ndarray
    industry: np.ndarray
    idn_count: int  # [0, idn_count) are IDNs
    tenant_start: int  # [tenant_start, extra_start): ASCII APAC domains tenants use
    extra_start: int  # [extra_start, row_start): APAC domains no tenant email uses
    row_start: int  # [row_start, len): EMEA/AMER domains


def _ascii_domains(
    rng: np.random.Generator, size: int, suffixes: Sequence[tuple[str, str, int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``size`` distinct brand+industry domains under ``suffixes`` (weighted), with metadata."""
    n_brand, n_kind, n_suffix = len(_BRAND_WORDS), len(_INDUSTRY_WORDS), len(suffixes)
    base = n_brand * n_kind * n_suffix
    replicas = max(1, math.ceil(size * 1.05 / (0.6 * base)))
    suffix_weight = np.log(np.array([w for _, _, w in suffixes], dtype=float))
    candidate = np.arange(base * replicas, dtype=np.int64)
    replica, rest = np.divmod(candidate, base)
    suffix_index = rest % n_suffix
    log_weights = suffix_weight[suffix_index] - 0.4 * replica
    chosen = _top_k(rng, log_weights, min(len(candidate), size + size // 20 + 16))
    replica, rest = np.divmod(chosen, base)
    brand, rest = np.divmod(rest, n_kind * n_suffix)
    kind, suffix_index = np.divmod(rest, n_suffix)
    brands, kinds = _objects(_BRAND_WORDS), _objects([w for w, _ in _INDUSTRY_WORDS])
    suffix_text = _objects(["." + s for s, _, _ in suffixes])
    tail = np.where(replica > 0, _texts(replica + 1), "").astype(object)
    text = brands[brand] + kinds[kind] + tail + suffix_text[suffix_index]
    unique = ~pd.Index(text).duplicated()
    keep = np.flatnonzero(unique)[:size]
    if len(keep) < size:  # pragma: no cover - the candidate space is sized to avoid this
        raise RuntimeError("domain vocabulary exhausted")
    brand, kind, suffix_index, tail = brand[keep], kind[keep], suffix_index[keep], tail[keep]
    fixed_country = _objects([c for _, c, _ in suffixes])[suffix_index]
    random_country = _choice(rng, _APAC_COUNTRIES, len(keep))
    country = np.where(fixed_country == "", random_country, fixed_country).astype(object)
    titles = _objects([w.title() for w in _BRAND_WORDS])
    kind_titles = _objects([w.title() for w, _ in _INDUSTRY_WORDS])
    legal = _objects([_LEGAL_SUFFIX[c] for c in country.tolist()])
    name = titles[brand] + " " + kind_titles[kind] + " " + legal
    industry = _objects([i for _, i in _INDUSTRY_WORDS])[kind]
    return text[keep], country, name, industry


# --------------------------------------------------------------------------------------------
# The builder.


class _Builder:
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

    # ---------------------------------------------------------------- tenants

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

    # ---------------------------------------------------------------- companies

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
        # A HubSpot match whose owner is also APAC Sales: HubSpot wins (002 §2).
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

    # ---------------------------------------------------------------- truth

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

    # ---------------------------------------------------------------- assembly

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
