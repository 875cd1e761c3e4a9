"""Kernels the benchmark suite measures: §6.3 structural cases, §6.1 targets, numerics sizes.

Each `case_*` runs one kernel call and returns the kernel (its `last_compiled` and `last_run`
hold the counts and the simulated run). The published values sit next to them in run.py.
"""
from __future__ import annotations

import math
import warnings

import torch

import pypto


def _root_calls(kernel) -> int:
    counts = kernel.last_compiled.subgraph_counts
    return sum(counts.values())


def elementwise(tile, vec_nbuffer=None, shape=(64, 4096)):
    """S2/S5-S7: exp(a+b)*b."""
    po = {} if vec_nbuffer is None else {"vec_nbuffer_setting": vec_nbuffer}

    @pypto.frontend.jit(pass_options=po)
    def k(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
          y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = pypto.exp(a + b) * b

    a, b = torch.rand(*shape), torch.rand(*shape)
    k(a, b, torch.zeros_like(a))
    return k


def rmsnorm_like(tile):
    """S8: x * rsqrt(mean(x^2) + eps) on (64, 1024)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = x * pypto.rsqrt(pypto.mean(x * x, -1, keepdim=True) + 1e-6)

    x = torch.rand(64, 1024)
    k(x, torch.zeros_like(x))
    return k


def stitch_loop(stitch):
    """S12: a 64-iteration pypto.loop of exp(x[i]) + 1 (2 call ops each)."""
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch})
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 512)
        for i in pypto.loop(x.shape[0]):
            y[i:i + 1] = pypto.exp(x[i:i + 1]) + 1.0

    x = torch.rand(64, 64, 512)
    k(x, torch.zeros_like(x))
    return k


def matmul_l1(m, l1=None):
    """S14/S15: (M,256)x(256,256) fp16, tiles [128,128],[64,256],[256,256]."""
    po = {} if l1 is None else {"cube_l1_reuse_setting": l1}

    @pypto.frontend.jit(pass_options=po)
    def k(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b = torch.rand(m, 256).half(), torch.rand(256, 256).half()
    k(a, b, torch.zeros(m, 256))
    return k


def split_k(enabled):
    """S16: 128x8192x256 fp16 -> fp32, split-K off / on."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256], enable_split_k=enabled)
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b = torch.rand(128, 8192).half(), torch.rand(8192, 256).half()
    k(a, b, torch.zeros(128, 256))
    return k


def tile_match(variant):
    """S17: (128,1024) exp then +1 with matched / mismatched tiles / mismatched + scope."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        if variant == "scope":
            pypto.set_pass_options(sg_set_scope=1)
        pypto.set_vec_tile_shapes(32, 512)
        e = pypto.exp(x)
        pypto.set_vec_tile_shapes(*((32, 512) if variant == "matched" else (64, 256)))
        y[:] = e + 1.0

    x = torch.rand(128, 1024)
    k(x, torch.zeros_like(x))
    return k


def narrow_matmul(block_diagonal):
    """§6.1 #3: (884736,16)x(16,16) BF16 vs (221184,64) x a 64x64 block-diagonal B."""
    if block_diagonal:
        @pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 9}})
        def k(a: pypto.Tensor([], pypto.DT_BF16), b: pypto.Tensor([], pypto.DT_BF16),
              c: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_cube_tile_shapes([512, 512], [64, 64], [64, 64], enable_split_k=True)
            c[:] = pypto.matmul(a, b, pypto.DT_FP32)
        a = torch.rand(221184, 64, dtype=torch.bfloat16)
        b = torch.block_diag(*[torch.rand(16, 16, dtype=torch.bfloat16)] * 4)
        c = torch.zeros(221184, 64)
    else:
        @pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 4}})
        def k(a: pypto.Tensor([], pypto.DT_BF16), b: pypto.Tensor([], pypto.DT_BF16),
              c: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_cube_tile_shapes([128, 128], [16, 16], [16, 16])
            c[:] = pypto.matmul(a, b, pypto.DT_FP32)
        a = torch.rand(884736, 16, dtype=torch.bfloat16)
        b = torch.rand(16, 16, dtype=torch.bfloat16)
        c = torch.zeros(884736, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k(a, b, c)
    return k


def q_projection(l1):
    """QuantIndexerProlog-like (§6.1 #6): a small-m Q projection, (16 x 7168) x (7168 x 1536)
    BF16 with m=16 cube tiles; L1 reuse merges the tasks that load the same A rows."""
    po = {"cube_l1_reuse_setting": l1} if l1 else {"cube_l1_reuse_setting": {-1: 1}}

    @pypto.frontend.jit(pass_options=po)
    def k(a: pypto.Tensor([], pypto.DT_BF16), b: pypto.Tensor([], pypto.DT_BF16),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a = torch.rand(16, 7168, dtype=torch.bfloat16)
    b = torch.rand(7168, 1536, dtype=torch.bfloat16)
    k(a, b, torch.zeros(16, 1536))
    return k


# ---- numerics vs torch eager (realistic sizes) ---------------------------------------------

def numerics_cases():
    """(name, kernel, make_inputs, torch_fn) at realistic sizes; kernels take (inputs..., out)."""
    @pypto.frontend.jit
    def softmax(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 1024)
        e = pypto.exp(x - pypto.amax(x, dim=-1, keepdim=True))
        y[:] = e / pypto.sum(e, dim=-1, keepdim=True)

    @pypto.frontend.jit
    def rmsnorm(x: pypto.Tensor([], pypto.DT_FP32), w: pypto.Tensor([], pypto.DT_FP32),
                y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 4096)
        y[:] = x * pypto.rsqrt(pypto.mean(x * x, -1, keepdim=True) + 1e-6) * w

    @pypto.frontend.jit
    def layer_norm(x: pypto.Tensor([], pypto.DT_FP32), w: pypto.Tensor([], pypto.DT_FP32),
                   b: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 4096)
        mu = pypto.mean(x, -1, keepdim=True)
        d = x - mu
        var = pypto.mean(d * d, -1, keepdim=True)
        y[:] = d * pypto.rsqrt(var + 1e-5) * w + b

    @pypto.frontend.jit
    def ffn(x: pypto.Tensor([], pypto.DT_FP32), w1: pypto.Tensor([], pypto.DT_FP32),
            w2: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [128, 256], [128, 256])
        pypto.set_vec_tile_shapes(32, 512)
        h = pypto.matmul(x, w1, pypto.DT_FP32)
        h = h * pypto.sigmoid(h)
        y[:] = pypto.matmul(h, w2, pypto.DT_FP32)

    heads, seq, dim = 8, 512, 64

    @pypto.frontend.jit
    def attention(q: pypto.Tensor([], pypto.DT_FP32), k: pypto.Tensor([], pypto.DT_FP32),
                  v: pypto.Tensor([], pypto.DT_FP32), o: pypto.Tensor([], pypto.DT_FP32)):
        scale = 1.0 / math.sqrt(dim)
        pypto.set_vec_tile_shapes(1, 32, 512)
        for h in range(heads):
            pypto.set_cube_tile_shapes([64, 128], [64, 64], [128, 256])
            s = pypto.matmul(q[h:h + 1], k[h:h + 1], pypto.DT_FP32, b_trans=True) * scale
            e = pypto.exp(s - pypto.amax(s, dim=-1, keepdim=True))
            p = e / pypto.sum(e, dim=-1, keepdim=True)
            pypto.set_cube_tile_shapes([64, 128], [128, 512], [64, 64])
            o[h:h + 1] = pypto.matmul(p, v[h:h + 1], pypto.DT_FP32)

    def rnd(*shape):
        return torch.randn(*shape)

    def t_rms(x, w):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

    def t_attn(q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dim), -1) @ v

    return [
        ("softmax 1024x4096", softmax, lambda: (rnd(1024, 4096),),
         lambda x: torch.softmax(x, -1)),
        ("rmsnorm 1024x4096", rmsnorm, lambda: (rnd(1024, 4096), rnd(1, 4096)), t_rms),
        ("layer_norm 1024x4096", layer_norm,
         lambda: (rnd(1024, 4096), rnd(1, 4096), rnd(1, 4096)),
         lambda x, w, b: torch.nn.functional.layer_norm(x, (4096,), w[0], b[0], 1e-5)),
        ("ffn 512x1024x2816", ffn,
         lambda: (rnd(512, 1024), rnd(1024, 2816) / 32, rnd(2816, 1024) / 53),
         lambda x, w1, w2: torch.nn.functional.silu(x @ w1) @ w2),
        (f"attention {heads}x{seq}x{dim}", attention,
         lambda: (rnd(heads, seq, dim), rnd(heads, seq, dim), rnd(heads, seq, dim)), t_attn),
    ]


def torch_op_for_op() -> dict:
    """The numerics kernels written in torch eager op for op, as the kernels write them.

    torch's library functions (softmax, layer_norm, silu) are single fused passes; these are
    the same computations as separate eager ops, each writing a full-size result — what an
    unfused executor costs. Keyed by the names of `numerics_cases`; same argument order."""
    def softmax(x):
        e = torch.exp(x - torch.amax(x, -1, keepdim=True))
        return e / torch.sum(e, -1, keepdim=True)

    def rmsnorm(x, w):
        return x * torch.rsqrt(torch.mean(x * x, -1, keepdim=True) + 1e-6) * w

    def layer_norm(x, w, b):
        d = x - torch.mean(x, -1, keepdim=True)
        return d * torch.rsqrt(torch.mean(d * d, -1, keepdim=True) + 1e-5) * w + b

    def ffn(x, w1, w2):
        h = x @ w1
        return (h * torch.sigmoid(h)) @ w2

    def attention(q, k, v):
        out = torch.empty_like(q)
        for h in range(q.shape[0]):
            s = (q[h:h + 1] @ k[h:h + 1].transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
            e = torch.exp(s - torch.amax(s, -1, keepdim=True))
            out[h:h + 1] = (e / torch.sum(e, -1, keepdim=True)) @ v[h:h + 1]
        return out

    return {"softmax 1024x4096": softmax, "rmsnorm 1024x4096": rmsnorm,
            "layer_norm 1024x4096": layer_norm, "ffn 512x1024x2816": ffn,
            "attention 8x512x64": attention}
