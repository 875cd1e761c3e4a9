// Graph queries behind the page: which nodes and edges a view holds, and which subset to draw.
// Pure functions over the embedded model (see graphview/model.py); no DOM here.
"use strict";

const GraphAlgo = (() => {
  // A view graph: its nodes and edges, each node by id, and per node the indices of its out-
  // and in-edges.
  function indexed(nodes, edges) {
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const out = new Map(nodes.map((n) => [n.id, []]));
    const inn = new Map(nodes.map((n) => [n.id, []]));
    edges.forEach((e, i) => {
      out.get(e.s).push(i);
      inn.get(e.d).push(i);
    });
    return { nodes, edges, byId, out, inn };
  }

  // The graph one view shows. Op-only: the level's ops and edges as dumped. Tensor+Op: tensors
  // become nodes between their producers and consumers (only for levels that have tensors).
  function viewGraph(level, withTensors) {
    const nodes = level.nodes.slice();
    let edges = level.edges;
    if (withTensors && level.tensors) {
      edges = [];
      for (const t of level.tensors) {
        nodes.push({ ...t, tensor: true, group: null });
        for (const p of t.p) edges.push({ s: p, d: t.id, k: "data" });
        for (const c of t.c) edges.push({ s: t.id, d: c, k: "data" });
      }
    }
    return indexed(nodes, edges);
  }

  // Breadth-first from `seeds`, following edges both ways up to `radius` steps, at most `cap`.
  function neighbourhood(vg, seeds, radius, cap) {
    const seen = new Set(seeds.slice(0, cap));
    let frontier = [...seen];
    for (let step = 0; step < radius && frontier.length && seen.size < cap; step++) {
      const next = [];
      for (const id of frontier) {
        for (const i of vg.out.get(id).concat(vg.inn.get(id))) {
          const e = vg.edges[i];
          const other = e.s === id ? e.d : e.s;
          if (!seen.has(other) && seen.size < cap) {
            seen.add(other);
            next.push(other);
          }
        }
      }
      frontier = next;
    }
    return seen;
  }

  // "Only this path": the node, everything it depends on and everything that depends on it.
  // Returns {ids, truncated}; stops at `cap` nodes so a 20k-node lineage cannot freeze the page.
  function lineage(vg, id, cap) {
    const ids = new Set([id]);
    let truncated = false;
    for (const [adj, end] of [[vg.inn, "s"], [vg.out, "d"]]) {
      const stack = [id];
      while (stack.length) {
        for (const i of adj.get(stack.pop())) {
          const other = vg.edges[i][end];
          if (ids.has(other)) continue;
          if (ids.size >= cap) {
            truncated = true;
            break;
          }
          ids.add(other);
          stack.push(other);
        }
      }
    }
    return { ids, truncated };
  }

  // Nodes matching a query: a substring of the op name / tensor names / ids, or a source line
  // ("softmax.py:12", ":12" or a bare "12" for line 12 of any file).
  function search(vg, query) {
    const q = query.trim().toLowerCase();
    if (!q) return [];
    const line = /^\d+$/.test(q) ? ":" + q : null;
    return vg.nodes
      .filter((n) => (n.search || "").includes(q) ||
        (n.loc && (n.loc.toLowerCase().includes(q) || (line && n.loc.endsWith(line)))))
      .map((n) => n.id);
  }

  // The tile graph with every subgraph not in `expanded` (a Set of subgraph numbers) drawn as
  // one node `s<sg>` naming its op count and kinds; edges between drawn nodes are merged per
  // kind. `rep` maps an op id to the id drawn for it.
  function collapse(vg, expanded) {
    const groups = new Map();
    for (const n of vg.nodes) {
      if (n.sg === undefined || expanded.has(n.sg)) continue;
      if (!groups.has(n.sg)) groups.set(n.sg, []);
      groups.get(n.sg).push(n);
    }
    const rep = new Map();
    const nodes = [];
    const added = new Set();
    for (const n of vg.nodes) {
      const ops = n.sg === undefined ? null : groups.get(n.sg);
      if (!ops) {
        rep.set(n.id, n.id);
        nodes.push(n);
        continue;
      }
      const id = `s${n.sg}`;
      rep.set(n.id, id);
      if (added.has(id)) continue;
      added.add(id);
      nodes.push(subgraphNode(id, n.sg, ops));
    }
    const merged = new Map();
    for (const e of vg.edges) {
      const s = rep.get(e.s);
      const d = rep.get(e.d);
      if (s === d) continue;
      const key = `${s}|${d}|${e.k}`;
      const m = merged.get(key);
      if (m) m.count += 1;
      else merged.set(key, { s, d, k: e.k, count: 1, diff: e.diff });
    }
    const edges = [...merged.values()].map(({ count, ...e }) => (
      count > 1 ? { ...e, n: `${e.k} ${count}` } : e));
    return { ...indexed(nodes, edges), rep };
  }

  const MAX_KINDS_SHOWN = 3;

  function subgraphNode(id, sg, ops) {
    const kinds = new Map();
    for (const n of ops) kinds.set(n.label, (kinds.get(n.label) || 0) + 1);
    const ranked = [...kinds].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const shown = ranked.slice(0, MAX_KINDS_SHOWN).map(([k, c]) => `${k} ${c}`);
    if (ranked.length > MAX_KINDS_SHOWN) shown.push("…");
    const diffs = new Set(ops.map((n) => n.diff || "same"));
    const diff = diffs.size === 1 ? [...diffs][0] : "changed";
    return { id, label: `subgraph ${sg} · ${ops.length} ops`, sub: shown.join(", "), group: sg,
      sg, collapsed: true, members: ops.map((n) => n.id), calls: ops[0].calls,
      diff: diff === "same" ? undefined : diff,
      title: `subgraph ${sg}: ${ranked.map(([k, c]) => `${c} ${k}`).join(", ")} (click to expand)`,
      info: [["subgraph", sg], ["tile ops", ops.length], ...ranked],
      search: ops.map((n) => n.search || "").join(" ") };
  }

  return { viewGraph, neighbourhood, lineage, search, collapse };
})();
