"""Differential fuzzing of OpenPTO: random kernels written with the public API, run through the
tile executor, the reference executor and the checked mode, compared with a torch float64
golden rounded per op. `python -m pypto.testing.fuzz --help`.

Modules: generator (picks a family) over tensor_families, reduce_families, view_families,
loop_families and reach_families, which use builder
(values, statements, pickers) and ops (elementwise op tables); case (a
kernel as data, rendered as a self-contained script), golden (torch helpers and tolerance),
runner (worker processes, timeouts, outcomes), minimizer (delta debugging), campaign (a batch),
cli (the command line). torch is needed to run cases (the optional `torch` extra).
"""
from pypto.testing.fuzz.campaign import Summary as Summary, run_batch as run_batch
from pypto.testing.fuzz.case import Case as Case, script as script
from pypto.testing.fuzz.generator import FAMILIES as FAMILIES, generate as generate
from pypto.testing.fuzz.minimizer import minimize as minimize
from pypto.testing.fuzz.runner import Pool as Pool, Result as Result
