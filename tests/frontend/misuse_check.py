"""The one assertion every misuse-catalogue case makes (tests/frontend/test_misuse_*.py).

A misuse is reported as a `pypto.PyptoError` whose message names the culprit and the user's
`file:line`, with a traceback that shows the user's frames and at most one frame of the pypto
package (the public entry point that re-raised it). The user's line is the one ending with the
comment `# <marker>` in the calling test file.
"""
import os
import sys
import traceback

import pypto
import pytest

PACKAGE = os.path.dirname(os.path.abspath(pypto.__file__))


def line_of(path: str, marker: str) -> int:
    """The number of the single line of `path` that ends with `# <marker>`."""
    with open(path, encoding="utf-8") as f:
        hits = [n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def check(info: pytest.ExceptionInfo, marker: str, *names: str,
          kind: type = pypto.PyptoError) -> str:
    """Assert the rule above for the error in `info`; return its message."""
    err = info.value
    assert isinstance(err, pypto.PyptoError), (type(err), err)
    assert isinstance(err, kind), (type(err), kind)
    path = sys._getframe(1).f_code.co_filename
    text = str(err)
    where = f"{os.path.basename(path)}:{line_of(path, marker)}"
    assert where in text, (where, text)
    for name in names:
        assert name in text, (name, text)
    frames = [f.filename for f in traceback.extract_tb(err.__traceback__)]
    inside = [f for f in frames if os.path.abspath(f).startswith(PACKAGE)]
    assert len(inside) <= 1, frames
    assert os.path.abspath(frames[0]) == os.path.abspath(path), frames  # the test's own frame
    return text
