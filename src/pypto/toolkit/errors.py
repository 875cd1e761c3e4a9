"""The one error type of the toolkit: a problem the user can fix, said in one line."""
from __future__ import annotations


class ToolkitError(Exception):
    """Bad input to a toolkit command (file, option); the message names the culprit."""
