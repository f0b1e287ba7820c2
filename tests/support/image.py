"""The build stage of deploy/Dockerfile, read as steps, so a test can run the image's own
install commands outside Docker (tests/deploy/test_deploy_image.py)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Stage:
    name: str
    env: dict[str, str] = field(default_factory=dict)
    # ("COPY", [sources..., destination]) or ("RUN", argv), in the Dockerfile's order.
    steps: list[tuple[str, list[str]]] = field(default_factory=list)
    user: str | None = None
    entrypoint: list[str] | None = None


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` with continuation lines joined and comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in dockerfile.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = pending + stripped
        pending = ""
        keyword, _, rest = whole.partition(" ")
        found.append((keyword.upper(), rest.strip()))
    return found


def _pairs(arguments: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in shlex.split(arguments))


def stages(dockerfile: Path) -> dict[str, Stage]:
    found: dict[str, Stage] = {}
    stage: Stage | None = None
    for keyword, arguments in instructions(dockerfile):
        if keyword == "FROM":
            words = arguments.split()
            stage = Stage(words[-1] if len(words) >= 3 and words[-2].upper() == "AS" else "")
            found[stage.name] = stage
        elif stage is None:
            continue
        elif keyword == "ENV":
            stage.env.update(_pairs(arguments))
        elif keyword == "COPY":
            words = shlex.split(arguments)
            stage.steps.append(("COPY", words))
        elif keyword == "RUN":
            words = [word for word in shlex.split(arguments) if not word.startswith("--mount=")]
            stage.steps.append(("RUN", words))
        elif keyword == "USER":
            stage.user = arguments
        elif keyword == "ENTRYPOINT":
            stage.entrypoint = json.loads(arguments)  # the exec form
    return found
