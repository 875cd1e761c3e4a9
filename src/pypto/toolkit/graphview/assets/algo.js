// Graph queries behind the page: which nodes and edges a view holds, and which subset to draw.
// Pure functions over the embedded model (see graphview/model.py); no DOM here.
"use strict";

const GraphAlgo = (() => {
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
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const out = new Map(nodes.map((n) => [n.id, []]));
    const inn = new Map(nodes.map((n) => [n.id, []]));
    edges.forEach((e, i) => {
      out.get(e.s).push(i);
      inn.get(e.d).push(i);
    });
    return { nodes, edges, byId, out, inn };
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

  return { viewGraph, neighbourhood, lineage, search };
})();
