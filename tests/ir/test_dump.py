"""compile_debug_mode=1 writes program.json (the control tree) and a DOT graph per block."""
import glob
import json
import os

import torch

import pypto


def _kernel():
    @pypto.frontend.jit(debug_options={"compile_debug_mode": 1})
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="L"):
            v = pypto.view(x, [16, 64], [i, 0], valid_shape=[(n - i).min(16), 64])
            if i == 0:
                y[i:, :] = v * 2.0
            else:
                y[i:, :] = v + 1.0
    return k


def test_program_json_has_paths_blocks_and_source_lines():
    """The dump names one root function per path, with ops and the user's source lines."""
    k = _kernel()
    x, y = torch.rand(37, 64), torch.zeros(37, 64)
    k(x, y)
    out = glob.glob("output/output_*")
    assert len(out) == 1
    data = json.load(open(os.path.join(out[0], "program.json")))
    assert data["kernel"] == "k"
    assert data["params"][0]["shape"] == ["RUNTIME_GetInputShapeDim(ARG_x,0)", "64"]
    assert data["root_functions"] == ["TENSOR_L_Unroll1_PATH0_hiddenfunc0",
                                      "TENSOR_L_Unroll1_PATH1_hiddenfunc0"]
    loop = data["root"]["variants"][0]["body"]["items"][0]
    assert loop["name"] == "L" and loop["step"] == "16"
    variant = loop["variants"][0]
    assert [p["conds"][0]["value"] for p in variant["paths"]] == [True, False]
    assert variant["body"]["type"] == "IF"
    ops = variant["body"]["then"]["items"][0]["ops"]
    assert [o["opcode"] for o in ops] == ["VIEW", "MULS", "ASSEMBLE"]
    assert all(o["loc"].startswith(__file__) for o in ops)
    assert ops[1]["tile"]["vec"] == [16, 64]


def test_dot_per_block():
    """Each root function gets a DOT file whose op boxes carry file:line labels."""
    k = _kernel()
    k(torch.rand(20, 64), torch.zeros(20, 64))
    dots = sorted(glob.glob("output/output_*/dot/*.dot"))
    assert [os.path.basename(d) for d in dots] == ["TENSOR_L_Unroll1_PATH0_hiddenfunc0.dot",
                                                   "TENSOR_L_Unroll1_PATH1_hiddenfunc0.dot"]
    text = open(dots[0]).read()
    assert text.startswith('digraph "TENSOR_L_Unroll1_PATH0_hiddenfunc0"')
    assert "test_dump.py:" in text and "-> op" in text
