"""The fixed vocabularies of the demo data set (the same for every seed) and its constants."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import numpy as np

from morpheus_pipelines.devtools.source import SOURCE_COLUMNS
from morpheus_pipelines.platform.settings import DEFAULT_TARGET_LIST_ID

CST = ZoneInfo("Asia/Shanghai")
TENANT_COLUMNS: tuple[str, ...] = SOURCE_COLUMNS
"""Columns of the source table ``{MORPHEUS_SOURCE_SCHEMA}.tenants`` (README, "Configuration"), in
order."""

EXCLUDED_ACTIVE_STATUSES: frozenset[str] = frozenset({"free_trial", "new_user", "closing"})
"""Statuses the active-candidate query excludes (docs/pipeline.md)."""

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
DEFAULT_LIST_ID = DEFAULT_TARGET_LIST_ID

_US = 1_000_000  # microseconds per second
_DAY_US = 86_400 * _US

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
