// One drawing surface: lays out a set of nodes with dagre and draws them as SVG, with pan and
// zoom. Knows nothing of runs or levels; the page tells it what to draw and what to mark.
"use strict";

const GraphPane = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const CHAR_W = 6.6;
  const NODE_H = 34;
  // Edge kinds (dump names and dependency classes) -> CSS class.
  const EDGE_CLASS = { data: "data", fuse: "fuse", gm: "gm", order: "order",
    "1:1": "one", "M:N": "many", dep: "data" };
  const PIPE_COLOURS = { V: "#a6dba0", M: "#c2a5cf", MTE2: "#9ecae1", MTE1: "#c6dbef",
    MTE3: "#fdd0a2", FIX: "#fdae6b", GM: "#d9d9d9" };
  const PALETTE = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
    "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9"];

  function colour(group) {
    if (group === null || group === undefined) return "#f4f4f4";
    if (typeof group === "string") {
      if (PIPE_COLOURS[group]) return PIPE_COLOURS[group];
      let h = 0;
      for (const ch of group) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      return PALETTE[h % PALETTE.length];
    }
    return PALETTE[group % PALETTE.length];
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  // The connected parts of a drawing, in the order of their first node: [{ids: Set}].
  function components(ids, edges) {
    const up = new Map([...ids].map((id) => [id, id]));
    const find = (x) => {
      while (up.get(x) !== x) {
        up.set(x, up.get(up.get(x)));
        x = up.get(x);
      }
      return x;
    };
    for (const e of edges) up.set(find(e.s), find(e.d));
    const parts = new Map();
    for (const id of ids) {
      const r = find(id);
      if (!parts.has(r)) parts.set(r, { ids: new Set() });
      parts.get(r).ids.add(id);
    }
    return [...parts.values()];
  }

  // Places parts left to right in rows (sets part.x, part.y), choosing the row width that
  // lets the whole be drawn largest on a surface `aspect` times as wide as high; returns the
  // total size.
  function pack(parts, aspect) {
    const GAP = 24;
    const widest = Math.max(...parts.map((p) => p.w));
    const total = parts.reduce((a, p) => a + p.w + GAP, 0);
    const TRIES = 40;
    let best = null;
    for (let t = 0; t <= TRIES; t++) {
      const rowWidth = widest + (total - widest) * t / TRIES;
      const size = place(parts, rowWidth, GAP);
      const scale = Math.min(aspect / Math.max(size.w, 1), 1 / Math.max(size.h, 1));
      if (!best || scale > best.scale * 1.0001) best = { scale, rowWidth };
    }
    return place(parts, best.rowWidth, GAP);
  }

  function place(parts, rowWidth, gap) {
    let x = 0;
    let y = 0;
    let rowH = 0;
    let w = 0;
    for (const p of parts) {
      if (x > 0 && x + p.w > rowWidth + 0.5) {
        x = 0;
        y += rowH + gap;
        rowH = 0;
      }
      p.x = x;
      p.y = y;
      x += p.w + gap;
      rowH = Math.max(rowH, p.h);
      w = Math.max(w, p.x + p.w);
    }
    return { w, h: y + rowH };
  }

  class Pane {
    constructor(svg, onClick) {
      this.svg = svg;
      this.onClick = onClick;
      this.root = el("g", {}, svg);
      this.view = { x: 0, y: 0, k: 1 };
      this.nodeEls = new Map();
      this.edgeCount = 0;
      this.size = { w: 0, h: 0 };
      // What to do once the surface has a size: a page inside a hidden tab draws at 0x0.
      this.pending = null;
      new ResizeObserver(() => this.applyPending()).observe(svg);
      this.bindPanZoom();
    }

    applyPending() {
      const p = this.pending;
      if (!p || !this.svg.getBoundingClientRect().width) return;
      this.pending = null;
      if (p.focus) this.focus(p.focus);
      else this.fit();
    }

    // Lays out and draws `ids` (a Set) of view graph `vg` with edges among them. Each
    // connected part is laid out on its own and the parts are packed in rows shaped like the
    // canvas, so many small independent graphs (call ops without dependencies, one chain per
    // subgraph) fill the surface at "fit" instead of forming one long thin line.
    draw(vg, ids, rankdir) {
      this.root.textContent = "";
      this.nodeEls = new Map();
      const drawn = [];
      vg.edges.forEach((e, i) => {
        if (ids.has(e.s) && ids.has(e.d)) drawn.push(i);
      });
      const boxes = new Map();
      const paths = new Map();
      const parts = components(ids, drawn.map((i) => vg.edges[i])).map((part) => {
        const g = new dagre.graphlib.Graph({ multigraph: true });
        g.setGraph({ rankdir, nodesep: 18, ranksep: 36, edgesep: 8, marginx: 8, marginy: 8 });
        g.setDefaultEdgeLabel(() => ({}));
        for (const id of part.ids) {
          const n = vg.byId.get(id);
          const chars = Math.max(n.label.length, (n.sub || "").length);
          g.setNode(id, { width: Math.max(60, chars * CHAR_W + 18), height: NODE_H });
        }
        for (const i of drawn) {
          const e = vg.edges[i];
          if (part.ids.has(e.s)) g.setEdge(e.s, e.d, {}, String(i));
        }
        dagre.layout(g);
        const info = g.graph();
        return { g, ids: part.ids, w: info.width || 0, h: info.height || 0 };
      });
      const size = pack(parts, this.aspect());
      for (const part of parts) {
        for (const id of part.ids) {
          const b = part.g.node(id);
          boxes.set(id, { ...b, x: b.x + part.x, y: b.y + part.y });
        }
        for (const e of part.g.edges()) {
          const pts = part.g.edge(e).points;
          paths.set(e.name, pts.map((q) => ({ x: q.x + part.x, y: q.y + part.y })));
        }
      }
      const g = { node: (id) => boxes.get(id), edge: (s, d, name) => ({ points: paths.get(name) }),
        graph: () => ({ width: size.w, height: size.h }) };
      const edgeLayer = el("g", { class: "edges" }, this.root);
      const nodeLayer = el("g", { class: "nodes" }, this.root);
      for (const i of drawn) {
        const e = vg.edges[i];
        const pts = g.edge(e.s, e.d, String(i)).points;
        const d = "M" + pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join("L");
        const cls = `edge k-${EDGE_CLASS[e.k] || "data"}` + (e.diff ? ` diff-${e.diff}` : "");
        const path = el("path",
          { d, class: cls, "data-testid": "edge", "marker-end": "url(#arrow)" }, edgeLayer);
        el("title", {}, path).textContent = `${e.k}${e.n ? " (" + e.n + ")" : ""}`;
        if (e.n && e.k !== "order") {
          const mid = pts[Math.floor(pts.length / 2)];
          const t = el("text", { x: mid.x + 4, y: mid.y - 3, class: "edge-label" }, edgeLayer);
          t.textContent = e.k;
        }
      }
      for (const id of ids) {
        const n = vg.byId.get(id);
        const box = g.node(id);
        const cls = ["node"];
        if (n.tensor) cls.push("tensor");
        if (n.diff) cls.push("diff-" + n.diff);
        const ge = el("g", { class: cls.join(" "), "data-testid": "node", "data-id": id,
          transform: `translate(${box.x - box.width / 2},${box.y - box.height / 2})` }, nodeLayer);
        el("rect", { width: box.width, height: box.height, rx: n.tensor ? 14 : 4,
          fill: colour(n.group) }, ge);
        const t1 = el("text", { x: box.width / 2, y: 14, class: "label" }, ge);
        t1.textContent = n.label;
        const t2 = el("text", { x: box.width / 2, y: 27, class: "sub" }, ge);
        t2.textContent = n.sub || "";
        if (n.collapsed) ge.classList.add("collapsed");
        el("title", {}, ge).textContent = n.title || (n.loc ? `${n.label} @ ${n.loc}` : n.label);
        ge.addEventListener("click", (ev) => {
          ev.stopPropagation();
          this.onClick(id);
        });
        this.nodeEls.set(id, { el: ge, x: box.x, y: box.y });
      }
      this.edgeCount = drawn.length;
      const info = g.graph();
      this.size = { w: info.width || 0, h: info.height || 0 };
      this.fit();
    }

    // Width over height of the drawing surface (a typical pane while it has no size yet).
    aspect() {
      const r = this.svg.getBoundingClientRect();
      return r.width && r.height ? r.width / r.height : 1.6;
    }

    clear() {
      this.root.textContent = "";
      this.nodeEls = new Map();
      this.edgeCount = 0;
    }

    // Adds `cls` to the drawn nodes in `ids` and removes it from every other node.
    mark(cls, ids) {
      for (const [id, n] of this.nodeEls) n.el.classList.toggle(cls, ids.has(id));
    }

    fit() {
      const r = this.svg.getBoundingClientRect();
      if (!r.width) this.pending = { focus: null };
      if (!this.size.w || !r.width) return;
      const k = Math.min(2, r.width / this.size.w, r.height / this.size.h) * 0.95;
      this.setView({ k, x: (r.width - this.size.w * k) / 2, y: (r.height - this.size.h * k) / 2 });
    }

    // Centres the view on a drawn node (keeping at least a readable zoom).
    focus(id) {
      const n = this.nodeEls.get(id);
      if (!n) return;
      const r = this.svg.getBoundingClientRect();
      if (!r.width) {
        this.pending = { focus: id };
        return;
      }
      const k = Math.max(this.view.k, 0.8);
      this.setView({ k, x: r.width / 2 - n.x * k, y: r.height / 2 - n.y * k });
    }

    setView(v) {
      this.view = v;
      this.root.setAttribute("transform", `translate(${v.x},${v.y}) scale(${v.k})`);
    }

    bindPanZoom() {
      this.svg.addEventListener("wheel", (ev) => {
        ev.preventDefault();
        const r = this.svg.getBoundingClientRect();
        const px = ev.clientX - r.left;
        const py = ev.clientY - r.top;
        const f = Math.exp(-ev.deltaY * 0.0015);
        const k = Math.min(8, Math.max(0.02, this.view.k * f));
        const s = k / this.view.k;
        this.setView({ k, x: px - (px - this.view.x) * s, y: py - (py - this.view.y) * s });
      }, { passive: false });
      let drag = null;
      this.svg.addEventListener("mousedown", (ev) => {
        drag = { x: ev.clientX - this.view.x, y: ev.clientY - this.view.y };
      });
      window.addEventListener("mousemove", (ev) => {
        if (drag) this.setView({ ...this.view, x: ev.clientX - drag.x, y: ev.clientY - drag.y });
      });
      window.addEventListener("mouseup", () => { drag = null; });
    }
  }

  return { Pane };
})();
