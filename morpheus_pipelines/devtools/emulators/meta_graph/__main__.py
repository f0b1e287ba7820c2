"""``python -m morpheus_pipelines.devtools.emulators.meta_graph``: ``morpheus emulate meta``."""

from .emulator import main

raise SystemExit(main())
