"""The package version, at the bottom of the import layers (the trace writer and the CLI
read it while `pypto` may still be initialising)."""
__version__ = "0.1.0"
