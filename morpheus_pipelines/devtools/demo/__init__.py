"""``morpheus demo`` and the data behind ``morpheus dev``: the runner (:mod:`.runner`: database,
emulators, the demo runs and their summary) and the deterministic data set it loads
(:mod:`.dataset`)."""
