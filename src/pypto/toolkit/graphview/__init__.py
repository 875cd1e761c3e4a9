"""The graph page of `pypto-toolkit graph`: `model` reads a run's compile dumps, `tasks` its
swimlane, `diff` marks changes between two runs and `page` writes the offline HTML (scripts and
the vendored dagre layout library in `assets/`)."""
