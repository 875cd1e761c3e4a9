"""The offline toolkit: the `pypto-toolkit` command (viewer, analysis, diff and tuner)."""
