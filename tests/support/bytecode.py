"""One bytecode cache for every process of a test session, where the environment turns
Python's own off.

With ``PYTHONDONTWRITEBYTECODE`` set (as on this project's development machine), every
process compiles every module it imports from source again: each xdist worker collecting the
suite, and each code server, run worker, daemon and ``morpheus serve`` a test starts, Dagster
alone about a second of CPU each time. The session instead writes bytecode to a cache
outside the source tree (``PYTHONPYCACHEPREFIX``, under ``.morpheus/``, which git ignores), so
nothing appears beside the sources, which is what the variable is set to prevent. A prefix
the environment already names, or an environment that writes bytecode, is left as it is.
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from pathlib import Path


def share_bytecode(environ: MutableMapping[str, str], prefix: Path) -> bool:
    """Point ``environ``'s processes at one bytecode cache under ``prefix`` when they would
    otherwise compile every source again; True when it did."""
    if not environ.get("PYTHONDONTWRITEBYTECODE") or environ.get("PYTHONPYCACHEPREFIX"):
        return False
    del environ["PYTHONDONTWRITEBYTECODE"]
    environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    return True


def use_shared_bytecode(prefix: Path) -> None:
    """This process too: the imports still to come (test modules, the steps' libraries) are
    read from and written to the same cache."""
    sys.pycache_prefix = str(prefix)
    sys.dont_write_bytecode = False
