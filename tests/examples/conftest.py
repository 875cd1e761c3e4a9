"""Registers the `examples` marker (deselect the example scripts with `-m "not examples"`)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "examples: runs the scripts under examples/ as programs")
