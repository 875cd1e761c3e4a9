// The graph page: toolbar, one pane per run (two when diffing), the side panel, the link to
// the swimlane viewer (window.postMessage) and the test hooks (window.openptoGraph).
"use strict";

(() => {
  const DATA = JSON.parse(document.getElementById("graph-data").textContent);
  const LEVELS = ["tensor", "tile", "execute", "block"];
  // Above this many nodes a view is not laid out whole (dagre needs seconds): the page draws
  // the neighbourhood of what the user searched or selected instead.
  const MAX_RENDER = 1500;
  const NEIGHBOURHOOD = 300;
  const RADIUS = 2;
  const MAX_TASKS_LISTED = 200;
  // A tile graph with more ops than this is drawn one node per subgraph until asked otherwise:
  // at "fit" its ops would be too small to read. Clicking a subgraph expands it.
  const GROUP_OVER = 60;
  const $ = (id) => document.getElementById(id);

  const rootNames = [];
  for (const run of DATA.runs) {
    for (const r of run.roots) if (!rootNames.includes(r.name)) rootNames.push(r.name);
  }
  const S = { root: rootNames[0], level: "execute", leaf: null, rankdir: "TB",
    tensors: false, selected: null, pathOf: null, hits: [], hitPos: 0,
    grouping: null, expanded: new Set() };

  const panes = DATA.runs.map((run, i) => {
    const sec = document.createElement("section");
    sec.className = "pane";
    sec.dataset.testid = `pane-${i}`;
    sec.innerHTML = `<div class="pane-title"></div><div class="notice" data-testid="notice-${i}">` +
      `</div><svg class="canvas"></svg>`;
    $("panes").appendChild(sec);
    const p = { run, sec, graph: null, vg: null, dvg: null, drawn: new Set(), partial: false };
    p.view = new GraphPane.Pane(sec.querySelector("svg"), (id) => clickNode(id, i));
    sec.querySelector(".pane-title").textContent = DATA.runs.length > 1
      ? `${i ? "B" : "A"}: ${run.label}` : run.label;
    return p;
  });

  // ---- what each pane shows ------------------------------------------------------------------

  function rootOf(p) {
    return p.run.roots.find((r) => r.name === S.root) || null;
  }

  function graphOf(p) {
    const r = rootOf(p);
    if (!r) return null;
    return S.level === "block" ? r.blocks[S.leaf] || null : r.levels[S.level] || null;
  }

  function availableLevels() {
    return LEVELS.filter((lv) => panes.some((p) => {
      const r = rootOf(p);
      return r && (lv === "block" ? Object.keys(r.blocks).length : r.levels[lv]);
    }));
  }

  function leafIds() {
    const ids = new Set();
    for (const p of panes) {
      const r = rootOf(p);
      if (r) Object.keys(r.blocks).forEach((k) => ids.add(k));
    }
    return [...ids].sort((a, b) => a - b);
  }

  // Whether pane `p`'s tile graph is drawn one node per subgraph (S.grouping: null = by size).
  function grouped(p) {
    if (S.level !== "tile" || S.tensors || S.pathOf || !p.vg || S.grouping === "ops") return false;
    const total = p.vg.nodes.length;
    if (total > MAX_RENDER) return false;
    const sgs = new Set(p.vg.nodes.map((n) => n.sg));
    return sgs.size > 1 && (S.grouping === "subgraphs" || total > GROUP_OVER);
  }

  // Expands the collapsed subgraphs holding op `id` of pane pi (and its diff twin); true if
  // that changed what is drawn.
  function expandFor(pi, id) {
    let changed = false;
    panes.forEach((p, i) => {
      const other = i === pi ? id : twinOf(pi, id);
      const n = other && p.vg && p.vg.byId.get(other);
      if (n && n.sg !== undefined && grouped(p) && !S.expanded.has(n.sg)) {
        S.expanded.add(n.sg);
        changed = true;
      }
    });
    return changed;
  }

  function clickNode(id, pi) {
    const n = panes[pi].dvg && panes[pi].dvg.byId.get(id);
    if (n && n.collapsed) {
      S.expanded.add(n.sg);
      render();
      return;
    }
    select(id, pi, true);
  }

  function render() {
    const levels = availableLevels();
    if (!levels.includes(S.level)) S.level = levels.includes("execute") ? "execute" : levels[0];
    const leaves = leafIds();
    if (!leaves.includes(S.leaf)) S.leaf = leaves[0] || null;
    panes.forEach((p) => { p.graph = graphOf(p); });
    syncToolbar(levels, leaves);
    panes.forEach(drawPane);
    $("grouping").hidden = S.level !== "tile";
    $("grouping").value = panes.some(grouped) ? "subgraphs" : "ops";
    markSelection();
    showSummary();
  }

  function drawPane(p) {
    const notice = p.sec.querySelector(".notice");
    if (!p.graph) {
      p.vg = null;
      p.drawn = new Set();
      p.view.clear();
      notice.textContent = `No ${S.level} graph for ${S.root} in this run.`;
      return;
    }
    p.vg = GraphAlgo.viewGraph(p.graph, S.tensors);
    p.dvg = grouped(p) ? GraphAlgo.collapse(p.vg, S.expanded) : p.vg;
    const total = p.vg.nodes.length;
    let ids;
    let why = "";
    if (S.pathOf && p.vg.byId.has(S.pathOf)) {
      const lin = GraphAlgo.lineage(p.vg, S.pathOf, MAX_RENDER);
      ids = lin.ids;
      why = `only the path through ${p.vg.byId.get(S.pathOf).label}` +
        (lin.truncated ? ` (cut at ${MAX_RENDER} nodes)` : "");
    } else if (total <= MAX_RENDER) {
      ids = new Set(p.dvg.nodes.map((n) => n.id));
    } else {
      const seeds = S.hits.filter((id) => p.vg.byId.has(id)).slice(0, NEIGHBOURHOOD);
      if (S.selected && p.vg.byId.has(S.selected.id)) seeds.unshift(S.selected.id);
      ids = GraphAlgo.neighbourhood(p.vg, seeds, RADIUS, NEIGHBOURHOOD);
      why = seeds.length ? `the neighbourhood of ${seeds.length} searched/selected node(s)`
        : "nothing yet: search for an op, tensor or file:line to draw its neighbourhood";
    }
    p.partial = ids.size < total && p.dvg === p.vg;
    p.drawn = ids;
    notice.textContent = p.partial
      ? `${total} nodes: too many to lay out at once. Showing ${ids.size}, ${why}.`
      : (why ? `Showing ${why}.` : "");
    if (p.dvg !== p.vg) {
      const shut = p.dvg.nodes.filter((n) => n.collapsed).length;
      notice.textContent = `${total} tile ops; ${shut} subgraph${shut === 1 ? "" : "s"} drawn ` +
        "as one node each: click one to expand it.";
    }
    if (ids.size) p.view.draw(p.dvg, ids, S.rankdir);
    else p.view.clear();
  }

  // ---- toolbar -------------------------------------------------------------------------------

  function syncToolbar(levels, leaves) {
    const rootSel = $("root");
    if (rootSel.options.length !== rootNames.length) {
      rootSel.innerHTML = "";
      for (const name of rootNames) rootSel.add(new Option(name, name));
    }
    rootSel.value = S.root;
    for (const btn of document.querySelectorAll("#levels button")) {
      btn.disabled = !levels.includes(btn.dataset.level);
      btn.classList.toggle("active", btn.dataset.level === S.level);
    }
    const leafSel = $("leaf");
    leafSel.innerHTML = "";
    const r = rootOf(panes[0]) || rootOf(panes[panes.length - 1]);
    for (const k of leaves) {
      const lf = r && r.leaves.find((l) => String(l.index) === k);
      leafSel.add(new Option(lf ? `leaf ${k} · ${lf.core} · ${lf.hash}` : `leaf ${k}`, k));
    }
    leafSel.value = S.leaf;
    leafSel.hidden = S.level !== "block";
    $("view").value = S.tensors ? "tensor" : "op";
    $("view").disabled = !panes.some((p) => p.graph && p.graph.tensors);
    $("layout").value = S.rankdir;
    $("clear-path").disabled = !S.pathOf;
  }

  function show(level, opts = {}) {
    if (opts.root !== undefined) S.root = opts.root;
    if (opts.leaf !== undefined) S.leaf = String(opts.leaf);
    S.level = level;
    S.selected = null;
    S.pathOf = null;
    S.hits = [];
    S.expanded = new Set();
    $("search").value = "";
    $("hits").textContent = "";
    render();
    showDetails();
  }

  $("root").addEventListener("change", (e) => show(S.level, { root: e.target.value }));
  $("leaf").addEventListener("change", (e) => show("block", { leaf: e.target.value }));
  $("layout").addEventListener("change", (e) => setLayout(e.target.value));
  $("view").addEventListener("change", (e) => setTensorView(e.target.value === "tensor"));
  $("grouping").addEventListener("change", (e) => setGrouping(e.target.value));
  $("fit").addEventListener("click", () => panes.forEach((p) => p.view.fit()));
  $("only-path").addEventListener("click", () => onlyPath());
  $("clear-path").addEventListener("click", () => clearPath());
  for (const btn of document.querySelectorAll("#levels button")) {
    btn.addEventListener("click", () => show(btn.dataset.level));
  }
  $("search").addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    const q = e.target.value;
    if (q === S.query && S.hits.length) nextHit();
    else search(q);
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "/") {
      e.preventDefault();
      $("search").focus();
    } else if (e.key === "Escape") {
      clearPath();
    } else if (e.key === "p" && S.selected) {
      onlyPath();
    }
  });

  function setLayout(dir) {
    S.rankdir = dir === "LR" ? "LR" : "TB";
    render();
  }

  // "subgraphs": one node per tile subgraph, "ops": every tile op, null: by graph size.
  function setGrouping(mode) {
    S.grouping = mode === "subgraphs" || mode === "ops" ? mode : null;
    S.expanded = new Set();
    render();
  }

  function setTensorView(on) {
    S.tensors = Boolean(on);
    if (S.selected && S.selected.id[0] === "v") S.selected = null;
    render();
  }

  // `exactLoc`: keep only the nodes whose source line is exactly this `file:line`
  function search(q, exactLoc) {
    S.query = q;
    const vg = panes[0].vg || (panes[1] && panes[1].vg);
    S.hits = vg ? GraphAlgo.search(vg, q) : [];
    if (exactLoc && vg) {
      const want = exactLoc.toLowerCase();
      S.hits = S.hits.filter((id) => {
        const n = vg.byId.get(id);
        return n && ((n.loc || "").toLowerCase() === want ||
                     (n.search || "").toLowerCase().split(/\s+/).includes(want));
      });
    }
    S.hitPos = 0;
    const n = S.hits.length;
    $("hits").textContent = q.trim() ? `${n} match${n === 1 ? "" : "es"}` : "";
    let expanded = false;
    for (const id of S.hits) expanded = expandFor(0, id) || expanded;
    if (expanded || panes.some((p) => p.partial || (p.vg && p.vg.nodes.length > MAX_RENDER))) {
      render();
    }
    markSelection();
    if (S.hits.length) panes[0].view.focus(S.hits[0]);
    return S.hits.length;
  }

  function nextHit() {
    S.hitPos = (S.hitPos + 1) % S.hits.length;
    select(S.hits[S.hitPos], 0, false);
    panes[0].view.focus(S.hits[S.hitPos]);
  }

  function onlyPath(id) {
    const target = id || (S.selected && S.selected.id);
    if (!target) return;
    S.pathOf = target;
    render();
  }

  function clearPath() {
    if (!S.pathOf) return;
    S.pathOf = null;
    render();
  }

  // ---- selection -----------------------------------------------------------------------------

  // Selects node `id` of pane `pi`; in a diff its matched twin is marked in the other
  // pane. `fromUser`: tell the swimlane viewer (when embedded) which tasks executed it.
  function select(id, pi = 0, fromUser = false) {
    const p = panes[pi];
    if (!p || !p.vg || !p.vg.byId.has(id)) return false;
    S.selected = { pane: pi, id };
    if (expandFor(pi, id) || !p.drawn.has(id)) render();
    markSelection();
    p.view.focus(id);
    showDetails();
    if (fromUser && pi === 0) postHighlight(p.vg.byId.get(id));
    return true;
  }

  function twinOf(pi, id) {
    const node = panes[pi].vg && panes[pi].vg.byId.get(id);
    return (node && node.twin) || null;
  }

  function markSelection() {
    panes.forEach((p, i) => {
      let sel = new Set();
      if (S.selected) {
        const { pane: at, id } = S.selected;
        sel = new Set([at === i ? id : twinOf(at, id)]);
      }
      p.view.mark("selected", sel);
      p.view.mark("hit", new Set(S.hits));
    });
  }

  // Tasks of the run that executed a node: the run's swimlane rows for its call ops (or, in a
  // block graph, for every call of the leaf).
  function tasksOf(pi, node) {
    const tasks = panes[pi].run.tasks;
    if (!tasks || !node || node.tensor) return [];
    const r = tasks.roots.indexOf(S.root);
    if (S.level === "block") {
      const lf = rootOf(panes[pi]).leaves.find((l) => String(l.index) === S.leaf);
      const li = lf ? tasks.leaves.indexOf(lf.name) : -1;
      return tasks.rows.filter((t) => t[1] === r && t[3] === li);
    }
    const calls = new Set(node.calls || []);
    return tasks.rows.filter((t) => t[1] === r && calls.has(t[2]));
  }

  function postHighlight(node) {
    if (window.parent === window || !node || node.tensor) return;
    let msg;
    if (S.level === "block") {
      const lf = rootOf(panes[0]).leaves.find((l) => String(l.index) === S.leaf);
      msg = { match: { root: S.root, leaf: lf ? lf.name : null } };
    } else if (node.calls && node.calls.length === 1) {
      msg = { match: { root: S.root, call: node.calls[0] } };
    } else {
      msg = { sim_task_ids: tasksOf(0, node).map((t) => t[0]) };
    }
    window.parent.postMessage({ type: "openpto-highlight-tasks", ...msg }, "*");
  }

  // The swimlane viewer asks for the call op a task ran.
  function selectTask(task) {
    if (!task || !rootNames.includes(task.root)) {
      $("notice-0").textContent = `Task ${task && task.name}: its root function is not in ` +
        "these dumps.";
      return false;
    }
    show("execute", { root: task.root });
    return select(`c${task.call}`, 0, false);
  }

  // The swimlane viewer's Source tab asks for the ops of one source line: the search for
  // `file:line`, keeping only the nodes of exactly that line (not line 61 for line 6).
  function showLine(file, line) {
    const loc = `${file}:${line}`;
    $("search").value = loc;
    search(loc, loc);
    return S.hits.length;
  }

  window.addEventListener("message", (e) => {
    const m = e.data;
    if (m && m.type === "openpto-select-task") selectTask(m.task);
    if (m && m.type === "openpto-show-line") showLine(m.file, m.line);
  });

  // ---- side panel ----------------------------------------------------------------------------

  function table(rows) {
    const t = document.createElement("table");
    for (const [k, v] of rows) {
      const tr = t.insertRow();
      tr.insertCell().textContent = k;
      const td = tr.insertCell();
      td.textContent = v === null || v === undefined ? "-" : String(v);
    }
    return t;
  }

  function heading(parent, text) {
    const h = document.createElement("h3");
    h.textContent = text;
    parent.appendChild(h);
  }

  function showSummary() {
    const box = $("summary");
    box.textContent = "";
    panes.forEach((p, i) => {
      if (!p.graph) return;
      heading(box, (panes.length > 1 ? (i ? "B " : "A ") : "") + `${S.level} graph`);
      box.appendChild(table(p.graph.summary));
      if (p.graph.diff) {
        const d = p.graph.diff;
        const div = document.createElement("div");
        div.className = "diff-counts";
        div.dataset.testid = `diff-counts-${i}`;
        div.innerHTML = `<span class="diff-added">+${d.added} added</span> ` +
          `<span class="diff-removed">−${d.removed} removed</span> ` +
          `<span class="diff-changed">~${d.changed} changed</span> ${d.same} same`;
        box.appendChild(div);
      }
      if (p.graph.buffers) {
        const t = table([]);
        t.className = "buffers";
        const head = t.insertRow();
        for (const h of ["buffer", "allocs", "total", "max", "capacity"]) {
          head.insertCell().textContent = h;
        }
        for (const [lvl, n, total, max, cap] of p.graph.buffers) {
          const tr = t.insertRow();
          for (const v of [lvl, n, total, max, cap]) tr.insertCell().textContent = v;
          tr.classList.toggle("over", cap && total > cap);
        }
        box.appendChild(t);
      }
    });
  }

  function sourceSnippet(loc) {
    const cut = loc.lastIndexOf(":");
    const lines = DATA.source && DATA.source[loc.slice(0, cut)];
    const line = Number(loc.slice(cut + 1));
    if (!lines || !line) return null;
    const pre = document.createElement("pre");
    pre.dataset.testid = "source";
    for (let n = Math.max(1, line - 3); n <= Math.min(lines.length, line + 3); n++) {
      const row = document.createElement("div");
      row.className = n === line ? "src-line current" : "src-line";
      row.textContent = `${String(n).padStart(5)}  ${lines[n - 1]}`;
      pre.appendChild(row);
    }
    return pre;
  }

  function button(parent, text, testid, fn) {
    const b = document.createElement("button");
    b.textContent = text;
    b.dataset.testid = testid;
    b.addEventListener("click", fn);
    parent.appendChild(b);
  }

  function showDetails() {
    const box = $("details");
    box.textContent = "";
    if (!S.selected) return;
    const p = panes[S.selected.pane];
    const node = p.vg && p.vg.byId.get(S.selected.id);
    if (!node) return;
    heading(box, `${node.label}  (${node.id})` + (node.diff ? `: ${node.diff}` : ""));
    if (node.loc) {
      const loc = document.createElement("div");
      loc.className = "loc";
      loc.dataset.testid = "loc";
      loc.textContent = node.loc;
      if (window.parent !== window) {   // in the viewer's Graph tab: open its Source tab there
        loc.classList.add("loc-link");
        loc.style.cursor = "pointer";
        loc.style.textDecoration = "underline";
        loc.title = "show this line in the viewer's Source tab";
        loc.addEventListener("click", () => {
          const cut = node.loc.lastIndexOf(":");
          window.parent.postMessage({ type: "openpto-show-line", file: node.loc.slice(0, cut),
                                      line: Number(node.loc.slice(cut + 1)) }, "*");
        });
      }
      box.appendChild(loc);
      const src = sourceSnippet(node.loc);
      if (src) box.appendChild(src);
    }
    if (node.info) box.appendChild(table(node.info));
    if (S.level === "execute" && node.leaf !== undefined) {
      button(box, `Block graph of leaf ${node.leaf}`, "open-block",
        () => show("block", { leaf: node.leaf }));
    }
    if (S.level === "tile" && node.sg !== undefined && S.expanded.has(node.sg) && grouped(p)) {
      button(box, `Collapse subgraph ${node.sg}`, "collapse-subgraph", () => {
        S.expanded.delete(node.sg);
        S.selected = null;
        render();
        showDetails();
      });
    }
    if (S.level === "tile" && node.calls) {
      const call = `c${node.calls[0]}`;
      button(box, `Call op ${node.calls[0]}`, "open-call", () => {
        show("execute");
        select(call, S.selected ? S.selected.pane : 0, true);
      });
    }
    button(box, "Only this path", "path-node", () => onlyPath(node.id));
    const tasks = tasksOf(S.selected.pane, node);
    if (p.run.tasks && !node.tensor) {
      heading(box, `Executed by ${tasks.length} task${tasks.length === 1 ? "" : "s"}`);
      const list = document.createElement("ol");
      list.dataset.testid = "tasks-list";
      for (const [id, , call, , start, dur] of tasks.slice(0, MAX_TASKS_LISTED)) {
        const li = document.createElement("li");
        li.textContent = `task ${id} · call ${call} · ${start} us +${dur} us`;
        list.appendChild(li);
      }
      box.appendChild(list);
    }
  }

  // ---- test hooks ----------------------------------------------------------------------------

  const pane = (i = 0) => panes[i] || panes[0];
  window.openptoGraph = {
    roots: () => rootNames.slice(),
    levels: availableLevels,
    state: () => ({ root: S.root, level: S.level, leaf: S.leaf, rankdir: S.rankdir,
      tensors: S.tensors, pathOf: S.pathOf }),
    show,
    nodeCount: (i) => (pane(i).vg ? pane(i).vg.nodes.length : 0),
    edgeCount: (i) => (pane(i).vg ? pane(i).vg.edges.length : 0),
    renderedNodeCount: (i) => pane(i).sec.querySelectorAll("[data-testid=node]").length,
    renderedEdgeCount: (i) => pane(i).sec.querySelectorAll("[data-testid=edge]").length,
    isPartial: (i) => pane(i).partial,
    select: (id, i = 0) => select(id, i, true),
    selected: () => (S.selected ? { ...S.selected } : null),
    search,
    showLine,
    onlyPath,
    clearPath,
    setLayout,
    setTensorView,
    setGrouping,
    grouping: (i) => (grouped(pane(i)) ? "subgraphs" : "ops"),
    expandSubgraph: (sg) => {
      S.expanded.add(sg);
      render();
    },
    collapsedIds: (i) => (pane(i).dvg ? pane(i).dvg.nodes : [])
      .filter((n) => n.collapsed).map((n) => n.id),
    fitScale: (i) => pane(i).view.view.k,
    selectTask,
    tasksOf: (id, i = 0) => tasksOf(i, pane(i).vg && pane(i).vg.byId.get(id)).map((t) => t[0]),
    diffSummary: () => panes.map((p) => (p.graph && p.graph.diff) || null),
    diffIds: (status, i = 0) => (pane(i).vg ? pane(i).vg.nodes : [])
      .filter((n) => n.diff === status).map((n) => n.id),
  };

  render();
})();
