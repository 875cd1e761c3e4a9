// ---- main.js: page state, input handling, the graph-tab protocol and the test hooks ----
// All state lives in S; every change calls requestDraw(), which draws at most one frame per
// animation frame.

const DATA = JSON.parse(document.getElementById("openpto-data").textContent);
const M = buildModel(DATA);
// what `pypto.toolkit.analyses.page_data` computed for the (first) run, or null (a diff page)
const ANALYSES = (DATA.mode === "view" && DATA.runs[0].analyses) || null;
const $ = (id) => document.getElementById(id);
const canvas = $("lanes");
const S = {
  canvas, ctx: canvas.getContext("2d"), dpr: 1, W: 1, H: 1, t0: 0, t1: 1, full: [0, 1],
  scrollY: 0, collapsed: new Set(), rows: [], laneRow: null, contentH: 0,
  colors: null, mark: null, cone: null, graphMark: null, selected: -1, depth: 1,
  search: { q: "", matches: [], cur: -1 }, range: null, dragRange: null, drag: null,
  frames: 0, pending: false, rawArgs: false, laneH: LANE_H, kernel: null, span: "e2e",
};

function fullExtent() {
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < M.n; i++) {
    lo = Math.min(lo, M.start[i]);
    hi = Math.max(hi, M.start[i] + M.dur[i]);
  }
  if (hi <= lo) hi = lo + 1;
  const pad = (hi - lo) * 0.01;
  return [lo - pad, hi + pad];
}

// the kernel span of every run (first AIC/AIV task's start to the last one's end) with a 2 %
// margin, or null without AICore tasks: the page opens on it, E toggles it with end-to-end
function kernelExtent() {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < M.n; i++) {
    const kind = CORE_KINDS[M.kind[i]];
    if (kind !== "aic" && kind !== "aiv") continue;
    lo = Math.min(lo, M.start[i]);
    hi = Math.max(hi, M.start[i] + M.dur[i]);
  }
  if (!(hi > lo)) return null;
  const pad = (hi - lo) * 0.02;
  return [lo - pad, hi + pad];
}

function requestDraw() {
  if (S.pending) return;
  S.pending = true;
  requestAnimationFrame(() => {
    S.pending = false;
    drawFrame(M, S);
    S.frames++;
  });
}

function resize() {
  const wrap = $("canvas-wrap");
  S.dpr = window.devicePixelRatio || 1;
  S.W = Math.max(1, wrap.clientWidth);
  S.H = Math.max(1, wrap.clientHeight);
  canvas.width = Math.round(S.W * S.dpr);
  canvas.height = Math.round(S.H * S.dpr);
  if (DATA.mode === "diff") layoutRows(M, S);     // (the lanes' height fits the canvas)
  clampScroll();
  requestDraw();
}

function clampScroll() {
  const max = Math.max(0, S.contentH - (S.H - HEADER_H));
  S.scrollY = Math.min(Math.max(0, S.scrollY), max);
}

function setView(t0, t1) {
  const minSpan = 1e-6;
  if (t1 - t0 < minSpan) {
    const c = (t0 + t1) / 2;
    t0 = c - minSpan / 2;
    t1 = c + minSpan / 2;
  }
  S.t0 = t0;
  S.t1 = t1;
  requestDraw();
}

function zoomAt(t, factor) {
  const span = S.t1 - S.t0;
  const maxSpan = (S.full[1] - S.full[0]) * 4;
  const next = Math.min(maxSpan, span * factor);
  const f = next / span;
  setView(t - (t - S.t0) * f, t + (S.t1 - t) * f);
}

function pan(dt) {
  setView(S.t0 + dt, S.t1 + dt);
}

function fit() {
  S.span = "e2e";
  setView(S.full[0], S.full[1]);
}

// the kernel span, or the whole run if the view is on the kernel span already (E)
function toggleSpan(to) {
  const kernel = (to || (S.span === "kernel" ? "e2e" : "kernel")) === "kernel" && S.kernel;
  if (!kernel) return fit();
  S.span = "kernel";
  setView(S.kernel[0], S.kernel[1]);
}

function relayout() {
  layoutRows(M, S);
  clampScroll();
  requestDraw();
}

// make task i visible: expand its group, scroll to its lane, pan (and if needed zoom) to it
function reveal(i) {
  const ln = M.lanes[M.lane[i]];
  const key = ln.run + ":" + KIND_GROUP[ln.kind];
  if (S.collapsed.has(key)) {
    S.collapsed.delete(key);
    layoutRows(M, S);
  }
  const row = S.rows[S.laneRow[M.lane[i]]];
  const visibleH = S.H - HEADER_H;
  if (row.y < S.scrollY || row.y + row.h > S.scrollY + visibleH) {
    S.scrollY = row.y - visibleH / 2;
    clampScroll();
  }
  const s = M.start[i];
  const e = s + M.dur[i];
  const span = S.t1 - S.t0;
  if (e - s > span * 0.8) setView(s - (e - s) * 0.5, e + (e - s) * 0.5);
  else if (s < S.t0 || e > S.t1) setView((s + e) / 2 - span / 2, (s + e) / 2 + span / 2);
  requestDraw();
}

// dim everything outside the selection's dependency cone (if it has one), else outside the
// graph tab's highlight
function updateMark() {
  S.mark = S.cone && S.cone.edges.length ? S.cone.mark : S.graphMark;
  requestDraw();
}

function select(i, opts) {
  S.selected = i;
  S.cone = i >= 0 ? dependencyCone(M, i, S.depth) : null;
  updateMark();
  renderDetails(M, $("panel-details"), i, (j) => select(j, { reveal: true }), S.rawArgs,
                setRawArgs, DATA.dtypes);
  for (const ext of EXTENSIONS) if (ext.select) ext.select(i);   // (source.js: its lines)
  if (i >= 0) {
    showPanel("details");
    if (opts && opts.reveal) reveal(i);
    notifyGraph(i);
  }
}

function setRawArgs(raw) {
  S.rawArgs = !!raw;
  renderDetails(M, $("panel-details"), S.selected, (j) => select(j, { reveal: true }), S.rawArgs,
                setRawArgs, DATA.dtypes);
  for (const ext of EXTENSIONS) if (ext.select) ext.select(S.selected);
}

function showPanel(name) {
  for (const b of document.querySelectorAll(".side-tab")) {
    b.classList.toggle("active", b.dataset.panel === name);
  }
  for (const p of document.querySelectorAll("#side .panel")) p.hidden = p.id !== "panel-" + name;
  fitNames($("panel-" + name));
}

function setColorBy(mode) {
  S.colors = computeColors(M, mode);
  $("color-by").value = mode;
  renderLegend($("panel-legend"), S.colors);
  requestDraw();
}

function runSearch(q) {
  const res = searchTasks(M, q);
  S.search = { q, matches: res.matches, cur: -1 };
  $("search-count").textContent = res.error ? `bad regex: ${res.error}`
    : q ? `${res.matches.length} match${res.matches.length === 1 ? "" : "es"}` : "";
  requestDraw();
  return res.matches.length;
}

function stepSearch(delta) {
  const { matches } = S.search;
  if (!matches.length) return -1;
  S.search.cur = (S.search.cur + delta + matches.length) % matches.length;
  $("search-count").textContent = `${S.search.cur + 1} / ${matches.length}`;
  select(matches[S.search.cur], { reveal: true });
  return matches[S.search.cur];
}

function setRange(t0, t1) {
  const lo = Math.min(t0, t1);
  const hi = Math.max(t0, t1);
  S.range = { t0: lo, t1: hi };
  const stats = M.runs.map((_, ri) => rangeStats(M, ri, lo, hi));
  renderRange(M, $("panel-range"), stats);
  showPanel("range");
  requestDraw();
  return stats;
}

// ---- graph tab: window.postMessage protocol (see the viewer package docstring) ----

function notifyGraph(i) {
  const frame = $("graph-frame");
  if (!DATA.graph || !frame.contentWindow) return;
  const task = { name: M.strings[M.name[i]] };
  for (const key of ["sim_task_id", "root", "leaf", "call", "instance", "window"]) {
    const v = argValue(M, i, key);
    task[key] = v === undefined ? null : v;
  }
  frame.contentWindow.postMessage({ type: "openpto-select-task", task }, "*");
}

function highlight(msg) {
  const mark = new Uint8Array(M.n);
  let count = 0;
  const add = (i) => { if (!mark[i]) { mark[i] = 1; count++; } };
  if (Array.isArray(msg.sim_task_ids)) {
    for (const id of msg.sim_task_ids) for (const i of M.bySimId.get(String(id)) || []) add(i);
  }
  if (msg.match && typeof msg.match === "object") {
    const want = Object.entries(msg.match).filter(([k]) => ["root", "leaf", "call"].includes(k));
    if (want.length) {
      for (let i = 0; i < M.n; i++) {
        if (want.every(([k, v]) => String(argValue(M, i, k)) === String(v))) add(i);
      }
    }
  }
  S.graphMark = count ? mark : null;
  $("status").textContent = count ? `${count} task${count === 1 ? "" : "s"} highlighted from the graph (Esc clears)` : "";
  updateMark();
  return count;
}

window.addEventListener("message", (ev) => {
  const frame = $("graph-frame");
  if (!frame.contentWindow || ev.source !== frame.contentWindow) return;
  const msg = ev.data;
  if (msg && typeof msg === "object" && msg.type === "openpto-highlight-tasks") highlight(msg);
});

function showTab(name) {
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === name);
  for (const pane of document.querySelectorAll("body > main")) pane.hidden = pane.id !== "pane-" + name;
  $("toolbar").hidden = name !== "swimlane";
  if (name === "swimlane") resize();
}

// ---- input ----

function localXY(ev) {
  const r = canvas.getBoundingClientRect();
  return [ev.clientX - r.left, ev.clientY - r.top];
}

function showTooltip(i, x, y) {
  const tip = $("tooltip");
  if (i < 0) {
    tip.hidden = true;
    return;
  }
  const leaf = M.strings[M.leaf[i]];
  tip.textContent = [
    M.strings[M.name[i]],
    `${M.lanes[M.lane[i]].name}  start ${us(M.start[i])}  dur ${us(M.dur[i])}`,
    leaf ? `leaf ${leaf}` : null,
  ].filter(Boolean).join("\n");
  tip.hidden = false;
  const w = tip.offsetWidth;
  tip.style.left = `${Math.min(x + 14, S.W - w - 4)}px`;
  tip.style.top = `${Math.min(y + 14, S.H - tip.offsetHeight - 4)}px`;
}

// the hover text of a lane-group header (its run's full name, when runs are stacked) and of a
// lane's label (the lane's name, whole): a header names runs A, B, ..., a thin lane may have none
function rowTitle(x, y) {
  const row = y >= HEADER_H ? rowAt(S, y) : null;
  if (!row || (row.type === "lane" && x >= LABEL_W)) return "";
  const ri = row.type === "group" ? Number(row.key.split(":")[0]) : M.lanes[row.lane].run;
  const run = M.runs.length > 1 ? `${runLetter(ri)}: ${M.runs[ri].title}` : "";
  return row.type === "group" ? run : [M.lanes[row.lane].name, run].filter(Boolean).join("\n");
}

canvas.addEventListener("mousedown", (ev) => {
  if (ev.button !== 0) return;
  const [x, y] = localXY(ev);
  const t = S.t0 + (x - LABEL_W) / plotScale(S);
  let mode = "pan";
  if (y < OVERVIEW_H) mode = "overview";
  else if ((y < HEADER_H || ev.shiftKey) && x >= LABEL_W) mode = "range";
  S.drag = { x, y, t, t0: S.t0, t1: S.t1, scrollY: S.scrollY, mode, moved: false };
  if (mode === "overview") jumpOverview(x);
  ev.preventDefault();
});

function jumpOverview(x) {
  const [f0, f1] = S.full;
  const t = f0 + ((x - LABEL_W) / (S.W - LABEL_W)) * (f1 - f0);
  const span = S.t1 - S.t0;
  setView(t - span / 2, t + span / 2);
}

window.addEventListener("mousemove", (ev) => {
  const [x, y] = localXY(ev);
  const d = S.drag;
  if (!d) {
    const inside = x >= 0 && y >= 0 && x < S.W && y < S.H;
    showTooltip(inside ? taskAt(M, S, x, y) : -1, x, y);
    canvas.title = inside ? rowTitle(x, y) : "";
    return;
  }
  if (Math.abs(x - d.x) + Math.abs(y - d.y) > 3) d.moved = true;
  if (!d.moved) return;
  $("tooltip").hidden = true;
  if (d.mode === "pan") {
    const dt = ((x - d.x) / (S.W - LABEL_W)) * (d.t1 - d.t0);
    S.scrollY = d.scrollY - (y - d.y);
    clampScroll();
    setView(d.t0 - dt, d.t1 - dt);
  } else if (d.mode === "range") {
    S.dragRange = { t0: d.t, t1: S.t0 + (x - LABEL_W) / plotScale(S) };
    requestDraw();
  } else {
    jumpOverview(x);
  }
});

window.addEventListener("mouseup", (ev) => {
  const d = S.drag;
  if (!d) return;
  S.drag = null;
  const [x, y] = localXY(ev);
  if (d.mode === "range" && d.moved && S.dragRange) {
    S.dragRange = null;
    setRange(d.t, S.t0 + (x - LABEL_W) / plotScale(S));
    return;
  }
  if (d.moved || d.mode === "overview") return;
  const row = rowAt(S, y);
  if (row && row.type === "group" && y >= HEADER_H) {
    if (S.collapsed.has(row.key)) S.collapsed.delete(row.key);
    else S.collapsed.add(row.key);
    relayout();
    return;
  }
  if (y >= HEADER_H) select(taskAt(M, S, x, y));
});

canvas.addEventListener("wheel", (ev) => {
  ev.preventDefault();
  const [x, y] = localXY(ev);
  const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? S.H : 1;
  const dx = ev.deltaX * unit;
  const dy = ev.deltaY * unit;
  if (ev.ctrlKey || ev.metaKey || y < HEADER_H) {
    const t = S.t0 + (Math.max(x, LABEL_W) - LABEL_W) / plotScale(S);
    zoomAt(t, Math.exp(dy * 0.002));
  } else if (ev.shiftKey || Math.abs(dx) > Math.abs(dy)) {
    pan(((ev.shiftKey ? dy || dx : dx) / (S.W - LABEL_W)) * (S.t1 - S.t0));
  } else {
    S.scrollY += dy;
    clampScroll();
    requestDraw();
  }
}, { passive: false });

canvas.addEventListener("mouseleave", () => { $("tooltip").hidden = true; });

document.addEventListener("keydown", (ev) => {
  if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const span = S.t1 - S.t0;
  const c = (S.t0 + S.t1) / 2;
  const key = ev.key.toLowerCase();
  if (key === "w") zoomAt(c, 0.8);
  else if (key === "s") zoomAt(c, 1.25);
  else if (key === "a") pan(-span * 0.15);
  else if (key === "d") pan(span * 0.15);
  else if (key === "0") fit();
  else if (key === "e") toggleSpan();
  else if (key === "escape") {
    S.range = null;
    S.graphMark = null;
    $("status").textContent = "";
    select(-1);
  } else return;
  ev.preventDefault();
});

let searchTimer = 0;
$("search").addEventListener("input", (ev) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => runSearch(ev.target.value.trim()), 150);
});
$("search").addEventListener("keydown", (ev) => {
  if (ev.key !== "Enter") return;
  clearTimeout(searchTimer);
  const q = ev.target.value.trim();
  if (q !== S.search.q) runSearch(q);
  stepSearch(ev.shiftKey ? -1 : 1);
});
$("search-next").addEventListener("click", () => stepSearch(1));
$("search-prev").addEventListener("click", () => stepSearch(-1));
$("color-by").addEventListener("change", (ev) => setColorBy(ev.target.value));
$("depth").addEventListener("change", (ev) => {
  S.depth = parseInt(ev.target.value, 10);
  if (!Number.isFinite(S.depth)) S.depth = 1;
  if (S.selected >= 0) select(S.selected);
});
$("fit").addEventListener("click", fit);
for (const b of document.querySelectorAll(".side-tab")) {
  b.addEventListener("click", () => showPanel(b.dataset.panel));
}
for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => showTab(b.dataset.tab));

// ---- start ----

function scrollToLane(l) {
  const ln = M.lanes[l];
  S.collapsed.delete(ln.run + ":" + KIND_GROUP[ln.kind]);
  layoutRows(M, S);
  S.scrollY = S.rows[S.laneRow[l]].y - GROUP_H;
  clampScroll();
  requestDraw();
}

// lane groups without a single task (e.g. AIC on a vector-only kernel) start collapsed
function collapseIdleGroups() {
  const busy = new Set();
  for (let i = 0; i < M.n; i++) {
    const ln = M.lanes[M.lane[i]];
    busy.add(ln.run + ":" + KIND_GROUP[ln.kind]);
  }
  M.lanes.forEach((ln) => {
    const key = ln.run + ":" + KIND_GROUP[ln.kind];
    if (!busy.has(key)) S.collapsed.add(key);
  });
}

S.full = fullExtent();
S.kernel = kernelExtent();
[S.t0, S.t1] = S.kernel || S.full;
S.span = S.kernel ? "kernel" : "e2e";
collapseIdleGroups();
layoutRows(M, S);
renderSummary(M, $("summary"));
renderLaneStats(M, $("panel-lanestats"), scrollToLane);
setColorBy("leaf");
if (DATA.mode === "diff") {
  // (the report's summary compares the two runs' header figures, so the header drops them)
  renderReport($("report"), DATA.report, M);
  $("summary").hidden = true;
  fitNames($("report"));
  new ResizeObserver(() => fitNames($("report"))).observe($("report"));
}
new ResizeObserver(() => {
  for (const p of document.querySelectorAll("#side .panel:not([hidden])")) fitNames(p);
}).observe($("side"));
if (DATA.graph) {
  $("tab-graph").hidden = false;
  $("graph-frame").src = DATA.graph;
}
// the analyses' tabs and panels (stats.js, blockers.js, source.js, hints.js): each shows its
// tab or side tab once it has something to show
for (const ext of EXTENSIONS) ext.init(ANALYSES);
new ResizeObserver(resize).observe($("canvas-wrap"));
resize();

