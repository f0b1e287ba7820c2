"""``python -m morpheus_pipelines.cli``: the ``morpheus`` command."""

from morpheus_pipelines.cli import main

raise SystemExit(main())
