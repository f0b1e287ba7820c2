"""``python -m morpheus_pipelines.devtools.emulators.hubspot``: ``morpheus emulate hubspot``."""

from .emulator import main

raise SystemExit(main())
