"""Testing tools that ship with OpenPTO: `pypto.testing.fuzz`, the differential fuzzer
(`python -m pypto.testing.fuzz --help`); golden comparisons whose tolerances follow the
kernel's precision chain (`forward_bounds`, `assert_close`); planted faults
(`pypto.testing.faults`); numpy's SIMD paths (`python -m pypto.testing.cpu_path`)."""
from pypto.testing.bounds import assert_close as assert_close, forward_bounds as forward_bounds
