"""Testing tools that ship with OpenPTO: `pypto.testing.fuzz`, the differential fuzzer
(`python -m pypto.testing.fuzz --help`)."""
