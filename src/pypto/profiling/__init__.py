"""Profiling output of a simulated run: the swimlane (Chrome trace), reports."""
