"""Tuning 14a - write the pieces into place with assemble instead of concatenating them.

Four (128,512) results placed side by side in a (128,2048) output. `concat` makes a new tensor:
the pieces are written to GM, read back by the concat and written again into the output, and
the concat waits for every piece. Assigning each piece to its slice of the output
(`y[:, i*H:] = piece`, an assemble) lets every tile's copy-out write straight into place, in
the same task that computed it: half the GM traffic, one fused subgraph per tile, no join.

Model note: concat has no tile rule in our compiler, so it runs as one whole-tensor task on a
single vector core; that makes its cost here larger than a tiled concat would be (the guide
gives no figure). The direction does not depend on it: any concat copies the data once more.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

P, S, H = 4, 128, 512


def make(assemble: bool):
    @pypto.frontend.jit
    def join(x: pypto.Tensor([P, S, H], pypto.DT_FP32),
             y: pypto.Tensor([S, P * H], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        parts = [pypto.exp(x[i]) + 1.0 for i in range(P)]
        if assemble:
            for i, part in enumerate(parts):
                y[:, i * H:] = part
        else:
            y[:] = pypto.concat(parts, dim=1)
    return join


def inputs():
    return torch.rand(P, S, H), torch.zeros(S, P * H)


def golden(x, y):
    return torch.cat([torch.exp(x[i]) + 1.0 for i in range(P)], dim=1)


CASE = Case(
    "14a_concat_to_assemble", "concat -> assemble: write each piece into its slice",
    "kernel_us",
    [checked("concat", make(False), inputs, golden),
     checked("assemble into slices", make(True), inputs, golden)],
    guide="concat -> assemble (no figure published)", extra_metrics=("gm_bytes", "tasks"))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
