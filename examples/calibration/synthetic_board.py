"""A synthetic board, to try `pypto-toolkit calibrate` without a board: the traces of
`kernels.py` on an a2a3 machine with some constants changed (`TRUE`), with 2 % timing noise and
5 % of the tasks lost, as a board's capture would have them.

    python synthetic_board.py board/                 # our file layout (with AICPU lanes)
    python synthetic_board.py board/ --layout pypto  # PyPTO's fields only
    pypto-toolkit calibrate board/*.json --kernel kernels.py -o my_board.toml

The calibration should find `TRUE` again (docs/calibration.md, "Calibrate to your board").

Run:  python synthetic_board.py [OUT_DIR] [--layout openpto|pypto]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kernels  # noqa: E402  (the kernels beside this file)

from pypto.calibration.runs import KernelCall  # noqa: E402
from pypto.calibration.synthetic import board_trace, write_board  # noqa: E402
from pypto.machine.spec import table  # noqa: E402

# the board's constants where they differ from a2a3's (a2a3's value in the comment)
TRUE = {
    "vector.cycles_per_repeat.exp_fp32": 3,            # 2
    "vector.cycles_per_repeat.binary": 2.5,            # 2
    "vector.cycles_per_repeat.reduce_full_fp32_add": 4,  # 3
    "cube.mac_per_cycle_fp16": 3000,                   # 4096
    "dma.shape.nd2nz_row_bytes": 48,                   # 32
    "dma.shape.burst_overhead_bytes": 20,              # 12
    "aicpu.resolve_cycles_per_edge": 300,              # 200
    "aicpu.window_base_cycles": 5000,                  # 3600
    "aicpu.instance_cycles": 2400,                     # 1800
    "aicpu.launch_cycles": 7000,                       # 5400
}


def boards(layout: str = "openpto", noise: float = 0.02, drop: float = 0.05) -> list:
    """(file name, trace object) per kernel of `kernels.CALLS`, in order."""
    out = []
    for n, kernel in enumerate(kernels.run_all()):
        call = KernelCall(kernel.__name__, kernel, kernel.last)
        doc = board_trace(call, table("a2a3"), TRUE, noise, drop, layout, seed=n)
        out.append((f"{n}_{kernel.__name__}.json", doc))
    return out


def main(argv: list) -> None:
    layout = argv[argv.index("--layout") + 1] if "--layout" in argv else "openpto"
    folders = [a for a in argv if not a.startswith("--") and a != layout]
    folder = folders[0] if folders else "synthetic_board"
    os.makedirs(folder, exist_ok=True)
    for name, doc in boards(layout):
        # a board stand-in, timed only: nothing to check against torch
        print(f"~ {name}: wrote {write_board(os.path.join(folder, name), doc)}")


if __name__ == "__main__":
    main(sys.argv[1:])
