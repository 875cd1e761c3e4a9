"""Calibration of the simulated machine to a board: `pypto-toolkit calibrate`.

`observed` (what a trace shows), `runs` (a call re-timed on a candidate machine), `fit` (robust
least squares), `calibrate` (the steps), `preset` (the TOML written), `synthetic` (boards with
known constants, for tests and the worked example), `command` (the command line).
"""
