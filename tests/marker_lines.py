"""Where a marker sits in a test file. Knob call sites are named FILE:LINE; a test finds its
own sites by a marker comment on the line, not by a line number that any edit would move."""


def marker_line(path: str, marker: str) -> int:
    """The first line of `path` holding `marker` (lines that look it up are skipped)."""
    with open(path) as f:
        return next(n for n, text in enumerate(f, 1) if marker in text and "_line(" not in text)
