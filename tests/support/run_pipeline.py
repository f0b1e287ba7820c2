"""Run pipeline assets in a separate process (for kill and concurrency tests).

python -m tests.support.run_pipeline '<json Pipeline fields>' <asset,asset> [partition]
"""

from __future__ import annotations

import json
import sys

from tests.support.pipeline import Pipeline


def main() -> int:
    fields = json.loads(sys.argv[1])
    keys = sys.argv[2].split(",")
    partition = sys.argv[3] if len(sys.argv) > 3 else None
    result = Pipeline(**fields).materialize(keys, partition, raise_on_error=False)
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
