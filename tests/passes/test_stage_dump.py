"""Per-stage dumps (compile_debug_mode=1), program.json's function table, compile_stage and the
expression-table warning."""
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import pypto

S1_ROOT = "TENSOR_LOOP_B_Unroll1_PATH0_hiddenfunc0"
TOP_ROOT = "TENSOR_default_loop_1_Unroll1_PATH0_hiddenfunc0"


def _s1(**jit_kwargs):
    @pypto.frontend.jit(debug_options={"compile_debug_mode": 1}, **jit_kwargs)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32, 1, 256], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 32, 1, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 1, 64)
        for i in pypto.loop(x.shape[0], name="LOOP_B", idx_name="i"):
            row = x[i:i + 1, ...]
            e = pypto.exp(row - pypto.amax(row, dim=-1, keepdim=True))
            y[i:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)
    return k


def _s17(add_tile, **jit_kwargs):
    @pypto.frontend.jit(debug_options={"compile_debug_mode": 1}, **jit_kwargs)
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        e = pypto.exp(x)
        pypto.set_vec_tile_shapes(*add_tile)
        y[:] = e + 1.0
    return k


def _out_dir() -> str:
    dirs = glob.glob("output/output_*")
    assert len(dirs) == 1, dirs
    return dirs[0]


def _load(name: str):
    with open(os.path.join(_out_dir(), name)) as f:
        return json.load(f)


def _names() -> list[str]:
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(_out_dir(), "*.json")))


def _check_against_compiled(k, root_name: str, calls: int, leaves: int) -> None:
    """Every count in the stage files equals the compiled program's."""
    root = k.last_compiled.roots[root_name]
    block = next(b for b in k.last_program.blocks() if b.name == root_name)
    assert len(root.calls) == calls and len(root.leaves) == leaves
    leaf_files = [n for n in _names() if n.startswith(f"After_036_CodegenPreproc_{root_name}"
                                                      f"_LEAF_")]
    assert len(leaf_files) == leaves

    tensor = _load(f"Before_004_ExpandFunction_{root_name}.json")
    assert tensor["graph_type"] == "TENSOR" and tensor["op_count"] == len(block.ops)
    assert [o["opcode"] for o in tensor["ops"]] == [op.opcode for op in block.ops]
    assert all(o["loc"].startswith(__file__) for o in tensor["ops"])

    tile = _load(f"Before_027_SubgraphToFunction_{root_name}.json")
    assert tile["op_count"] == len(tile["ops"]) == len(root.graph.ops)
    assert tile["edge_count"] == len(tile["edges"]) == len(root.graph.edges)
    assert sum(tile["edge_kinds"].values()) == len(root.graph.edges)
    assert tile["subgraph_count"] == calls == len(tile["subgraphs"])
    where = {op.id: c.index for c in root.calls for op in c.ops}
    assert {o["id"]: o["subgraph"] for o in tile["ops"]} == where
    assert tile["escaping"] == sorted(root.graph.escaping)

    ex = _load(f"After_036_CodegenPreproc_{root_name}_ROOT.json")
    assert ex["call_count"] == len(ex["calls"]) == calls and ex["leaf_count"] == leaves
    for entry, call in zip(ex["calls"], root.calls):
        assert entry["index"] == call.index and entry["leaf"] == call.leaf.index
        assert entry["preds"] == list(call.preds)
        assert entry["tile_ops"] == [op.id for op in call.ops]
        assert len(entry["args"]) == len(call.ops)

    for leaf in root.leaves:
        name = f"After_036_CodegenPreproc_{root_name}_LEAF_{leaf.index}_{leaf.signature}.json"
        data = _load(name)
        assert data["op_count"] == leaf.op_count == len(data["ops"])
        assert data["call_count"] == sum(1 for c in root.calls if c.leaf is leaf)
        assert data["core"] == leaf.core and data["hash_hex"] == leaf.signature


def test_s1_stage_files_and_counts():
    """S1 softmax: the four stage files, 8 call ops in the execute graph, one leaf file; each
    count equals the compiled program's."""
    k = _s1()
    x = torch.rand(4, 32, 1, 256)
    y = torch.zeros_like(x)
    k(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    leaf = k.last_compiled.roots[S1_ROOT].leaves[0]
    assert _names() == [
        f"After_036_CodegenPreproc_{S1_ROOT}_LEAF_0_{leaf.signature}.json",
        f"After_036_CodegenPreproc_{S1_ROOT}_ROOT.json",
        f"Before_004_ExpandFunction_{S1_ROOT}.json",
        f"Before_027_SubgraphToFunction_{S1_ROOT}.json",
        "program.json"]
    _check_against_compiled(k, S1_ROOT, calls=8, leaves=1)
    block = _load(f"After_036_CodegenPreproc_{S1_ROOT}_LEAF_0_{leaf.signature}.json")
    assert set(block["buffers"]) == {"UB"} and block["buffers"]["UB"]["capacity"] == 196608
    assert {"MTE2", "V", "MTE3"} <= set(block["pipes"])
    ex = _load(f"After_036_CodegenPreproc_{S1_ROOT}_ROOT.json")
    # the loop index reaches the call arguments: offsets along the batch dim are symbolic
    assert ex["calls"][0]["args"][0]["inputs"][0]["offsets"][0] == "i"
    assert ex["calls"][0]["symbolic_arg_count"] > 0


def test_s17_mismatched_tiles_16_calls_2_leaf_files():
    """S17 with mismatched tiles: many-to-many edges through GM, 16 calls, 2 leaf files."""
    k = _s17((64, 256))
    x = torch.rand(128, 1024)
    y = torch.zeros_like(x)
    k(x, y)
    torch.testing.assert_close(y, torch.exp(x) + 1)
    _check_against_compiled(k, TOP_ROOT, calls=16, leaves=2)
    tile = _load(f"Before_027_SubgraphToFunction_{TOP_ROOT}.json")
    assert tile["edge_kinds"].get("gm", 0) > 0
    ex = _load(f"After_036_CodegenPreproc_{TOP_ROOT}_ROOT.json")
    assert any(c["preds"] for c in ex["calls"])
    assert all(ex["calls"][p]["succs"].count(c["index"]) == 1
               for c in ex["calls"] for p in c["preds"])


def test_program_json_function_table():
    """program.json lists every function with its kind, parent, magic, a 64-bit hash, source
    lines, and per root its subgraph and leaf counts followed by its leaves."""
    k = _s1()
    k(torch.rand(3, 32, 1, 256), torch.zeros(3, 32, 1, 256))
    funcs = _load("program.json")["functions"]
    assert [(f["kind"], f["name"]) for f in funcs] == [
        ("PROGRAM_ENTRY", "PROGRAM_ENTRY"), ("DYNAMIC", "TENSOR_k"),
        ("DYNAMIC_LOOP", "TENSOR_default_loop_1_Unroll1"),
        ("DYNAMIC_LOOP_PATH", "TENSOR_default_loop_1_Unroll1_PATH0"),
        ("DYNAMIC_LOOP", "TENSOR_LOOP_B_Unroll1"),
        ("DYNAMIC_LOOP_PATH", "TENSOR_LOOP_B_Unroll1_PATH0"),
        ("root", S1_ROOT), ("leaf", f"{S1_ROOT}_leaf0")]
    names = {f["name"] for f in funcs}
    assert [f["index"] for f in funcs] == list(range(len(funcs)))
    assert [f.get("magic") for f in funcs if f["kind"] == "root"] == [0]
    for f in funcs:
        assert f["parent"] is None or f["parent"] in names
        assert 0 <= f["hash"] < 2 ** 64 and f["hash_hex"] == f"{f['hash']:016x}"
    root, leaf = funcs[-2], funcs[-1]
    assert root["subgraph_count"] == 8 and root["leaf_count"] == 1
    assert root["leaves"] == [leaf["name"]] and leaf["parent"] == root["name"]
    assert leaf["call_count"] == 8 and leaf["calls"] == list(range(8))
    assert leaf["hash_hex"] == k.last_compiled.roots[S1_ROOT].leaves[0].signature
    tensor = _load(f"Before_004_ExpandFunction_{S1_ROOT}.json")
    assert root["hash"] == tensor["hash"]
    assert root["source_lines"] and all(s.startswith(__file__ + ":")
                                        for s in root["source_lines"])
    loop = funcs[4]
    assert len(loop["source_lines"]) == len(root["source_lines"]) + 1  # + the loop line


def test_dumps_are_identical_across_runs():
    """Two compiles of the same kernel write byte-identical stage files with the same names."""
    contents = []
    for _ in range(2):
        k = _s17((64, 256))
        k(torch.rand(128, 1024), torch.zeros(128, 1024))
        d = _out_dir()
        contents.append({n: open(os.path.join(d, n)).read() for n in _names()})
        shutil.rmtree("output")
    assert contents[0] == contents[1]


_HASH_SCRIPT = textwrap.dedent("""
    import glob, json, torch, pypto

    @pypto.frontend.jit(debug_options={"compile_debug_mode": 1})
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        e = pypto.exp(x)
        pypto.set_vec_tile_shapes(64, 256)
        y[:] = e + 1.0

    k(torch.rand(128, 1024), torch.zeros(128, 1024))
    data = json.load(open(glob.glob("output/output_*/program.json")[0]))
    print(json.dumps([[f["name"], f["hash_hex"]] for f in data["functions"]]))
""")


def test_hashes_do_not_depend_on_the_python_hash_seed(tmp_path):
    """Function hashes are SHA-1 based and leave source lines out: another process with
    another hash seed, tracing the same kernel from another file, gets the same table."""
    script = tmp_path / "hashes.py"
    script.write_text(_HASH_SCRIPT)
    env = dict(os.environ, PYTHONHASHSEED="12345")
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True)
    theirs = json.loads(run.stdout.strip().splitlines()[-1])
    shutil.rmtree(tmp_path / "output")
    k = _s17((64, 256))
    k(torch.rand(128, 1024), torch.zeros(128, 1024))
    ours = [[f["name"], f["hash_hex"]] for f in _load("program.json")["functions"]]
    assert theirs == ours
    assert [name for name, _ in ours][-2:] == [f"{TOP_ROOT}_leaf0", f"{TOP_ROOT}_leaf1"]


@pytest.mark.parametrize("stage,files", [
    (pypto.CompStage.TENSOR_GRAPH, ["Before_004"]),
    (pypto.CompStage.TILE_GRAPH, ["Before_004", "Before_027"]),
    (pypto.CompStage.EXECUTE_GRAPH, ["Before_004", "Before_027", "ROOT", "LEAF"]),
    (pypto.CompStage.CODEGEN_BINARY, ["Before_004", "Before_027", "ROOT", "LEAF"]),
])
def test_compile_stage_stops_before_running(stage, files, capsys):
    """compile_stage stops compilation after the stage: the kernel does not run (outputs keep
    their values), stderr says so in one line, and the dumps show the stages that exist."""
    k = _s17((64, 256), host_options={"compile_stage": stage})
    x = torch.rand(128, 1024)
    y = torch.full_like(x, 7.0)
    k(x, y)
    assert torch.equal(y, torch.full_like(x, 7.0))
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"[pypto] kernel 'k' was compiled up to compile_stage {stage.name} and not "
                   f"run (host_options.compile_stage); its outputs are unchanged"]
    assert k.last_compiled.stage == stage and k.last_executor is None
    kinds = {"Before_004": "Before_004_", "Before_027": "Before_027_",
             "ROOT": "_ROOT.json", "LEAF": "_LEAF_"}
    present = sorted(key for key, part in kinds.items() if any(part in n for n in _names()))
    assert present == sorted(files)
    root = _load("program.json")["functions"][-1 if stage < 3 else -3]
    assert root["kind"] == "root"
    if stage == pypto.CompStage.TENSOR_GRAPH:
        assert k.last_compiled.roots == {} and "subgraph_count" not in root
    elif stage == pypto.CompStage.TILE_GRAPH:
        assert root["subgraph_count"] == 16 and "leaf_count" not in root
        tile = _load(f"Before_027_SubgraphToFunction_{TOP_ROOT}.json")
        assert tile["subgraph_count"] == 16 and "escaping" not in tile
        assert all("local" not in r for o in tile["ops"] for r in o["inputs"])
    else:
        assert root["subgraph_count"] == 16 and root["leaf_count"] == 2
    k(x, y)   # a cached stopped compile stops again
    assert torch.equal(y, torch.full_like(x, 7.0))
    assert "not run" in capsys.readouterr().err and k.compile_count == 1


def test_compile_stage_from_options_scope_and_setter(capsys):
    """compile_stage also comes from a pypto.options scope and from set_host_options; without
    it the same kernel compiles again and runs."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        y[:] = x + 1.0

    x, y = torch.rand(64, 512), torch.zeros(64, 512)
    with pypto.options(host_options={"compile_stage": pypto.CompStage.EXECUTE_GRAPH}):
        k(x, y)
    assert not y.any() and "up to compile_stage EXECUTE_GRAPH" in capsys.readouterr().err
    with pypto.options():   # keeps the setter's value out of the global scope
        pypto.set_host_options(compile_stage=pypto.CompStage.TILE_GRAPH)
        k(x, y)
    assert not y.any() and "up to compile_stage TILE_GRAPH" in capsys.readouterr().err
    k(x, y)
    torch.testing.assert_close(y, x + 1)
    assert k.compile_count == 3 and capsys.readouterr().err == ""
    assert pypto.get_host_options()["compile_stage"] == 0


def _tiny_tile_kernel():
    @pypto.frontend.jit(host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH})
    def k(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
          y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        t = a + b
        u = t * b
        y[:] = pypto.exp(u)
    return k


def test_expression_table_warning_for_tiny_tiles():
    """prod(ceil(S/T)) * (1 + #inputs) >= 18000: one PyptoWarning per op over the budget, at
    the op's line, with the count, the TileShape and a bigger tile (exp, with one input, stays
    under it); a cached kernel does not warn again. (Stopped after the tensor graph: expanding
    6144 tiles per op would take a while.)"""
    k = _tiny_tile_kernel()
    a, b, y = torch.rand(768, 512), torch.rand(768, 512), torch.zeros(768, 512)
    with pytest.warns(pypto.PyptoWarning) as rec:
        k(a, b, y)
    assert issubclass(pypto.PyptoWarning, UserWarning)
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 2
    add, mul = msgs
    assert add.startswith("add: 6144 tiles of [768, 512] x (1 + 2 inputs) = 18432 ")
    assert mul.startswith("mul: 6144 tiles of [768, 512] x (1 + 2 inputs) = 18432 ")
    assert "TileShape [8, 8]" in add and "set_vec_tile_shapes(8, 16)" in add
    assert "test_stage_dump.py:" in add and rec[0].filename == __file__
    assert rec[1].lineno == rec[0].lineno + 1
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        k(a, b, y)
    assert not [w for w in again if issubclass(w.category, pypto.PyptoWarning)]


def test_no_expression_table_warning_for_normal_tiles():
    """Kernels within the budget compile and run without the warning."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        k = _s1()
        x = torch.rand(2, 32, 1, 256)
        k(x, torch.zeros_like(x))
        k2 = _s17((32, 512))
        k2(torch.rand(128, 1024), torch.zeros(128, 1024))
    assert not [w for w in rec if issubclass(w.category, pypto.PyptoWarning)]


def test_merge_info_and_shared_l1_loads_are_dumped():
    """A cube L1-reuse merge (4 output blocks sharing B's panel): the execute graph carries each
    call's merge groups, and the block graph loads the shared panel into L1 once."""
    @pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 4}},
                        host_options={"compile_stage": pypto.CompStage.EXECUTE_GRAPH},
                        debug_options={"compile_debug_mode": 1})
    def k(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    k(torch.rand(8192, 256).half(), torch.rand(256, 256).half(), torch.zeros(8192, 256))
    root = k.last_compiled.roots[TOP_ROOT]
    ex = _load(f"After_036_CodegenPreproc_{TOP_ROOT}_ROOT.json")
    assert ex["call_count"] == len(root.calls) == 16
    for entry, call in zip(ex["calls"], root.calls):
        assert entry["merge"]["merge_info"] == {name: info._asdict()
                                                for name, info in call.merge_info.items()}
        assert entry["merge"]["merge_info"]["cube_l1_reuse"]["merged"] == 4
    leaf = root.leaves[0]
    block = _load(f"After_036_CodegenPreproc_{TOP_ROOT}_LEAF_0_{leaf.signature}.json")
    b_loads = [s for o in block["ops"] for s in o["steps"]
               if s.get("input") == 1 and s["pipe"] == "MTE2"]
    reused = [s for o in block["ops"] for s in o["steps"] if s.get("reuses_l1")]
    assert len(b_loads) == 1 and len(reused) == 3
    assert {"L1", "L0A", "L0B", "L0C"} <= set(block["buffers"])
    assert block["pipes"]["M"] == 4 and block["pipes"]["FIX"] == 4
