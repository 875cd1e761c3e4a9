// ---- hooks.js: window.openpto, stable hooks for tests and scripting (state without reading
// pixels); runs last, after main.js has set the page up ----

function taskInfo(i) {
  if (i < 0) return null;
  return {
    index: i, name: M.strings[M.name[i]], run: M.runs[M.run[i]].title,
    lane: M.lanes[M.lane[i]].name, start: M.start[i], dur: M.dur[i],
    leaf: M.strings[M.leaf[i]], root: M.strings[M.root[i]], label: M.strings[M.label[i]],
    preds: neighbours(M, i, "pred"), succs: neighbours(M, i, "succ"),
    args: Object.fromEntries(argsOf(M, i)),
  };
}

function findTask(name) {
  for (let i = 0; i < M.n; i++) if (M.strings[M.name[i]] === name) return i;
  return -1;
}

// stable hooks for tests and scripting: state without reading pixels
window.openpto = {
  mode: DATA.mode,
  taskCount: M.n,
  flowCount: M.nFlows,
  graph: DATA.graph,
  lanes: () => M.lanes.map((ln, l) => ({
    name: ln.name, kind: ln.kind, group: KIND_GROUP[ln.kind], run: M.runs[ln.run].title,
    tasks: M.laneOff[l + 1] - M.laneOff[l], visible: S.laneRow[l] >= 0 })),
  summary: () => M.runs.map((_, ri) => runSummary(M, ri)),
  frames: () => S.frames,
  view: () => ({ t0: S.t0, t1: S.t1, scrollY: S.scrollY }),
  setView: (t0, t1) => setView(t0, t1),
  fit,
  // the view the page opened on / E toggles: "kernel" (kernel() is its extent) or "e2e"
  span: () => S.span,
  kernel: () => S.kernel && [...S.kernel],
  full: () => [...S.full],
  toggleSpan: (to) => { toggleSpan(to); return S.span; },
  // what the last frame drew: the ruler's tick labels {text, x, w} and the lane labels
  ticks: () => (S.ticks || []).map((t) => ({ ...t })),
  laneLabels: () => (S.laneLabels || []).map((l) => ({ ...l })),
  canvasWidth: () => S.W,
  findTask,
  task: taskInfo,
  selectTask: (i) => { select(i, { reveal: true }); return taskInfo(i); },
  selectTaskByName: (name) => { const i = findTask(name); select(i, { reveal: true }); return i; },
  selected: () => taskInfo(S.selected),
  setRawArgs: (raw) => setRawArgs(raw),
  // the lane-group header rows and whether each is inside the canvas's visible part
  groups: () => S.rows.filter((r) => r.type === "group").map((r) => {
    const y = rowY(S, r);
    return { label: r.label, key: r.key, run: M.runs[Number(r.key.split(":")[0])].title,
             y, h: r.h, visible: y >= HEADER_H && y + r.h <= S.H };
  }),
  laneHeight: () => S.laneH,
  setDepth: (d) => { $("depth").value = d; $("depth").dispatchEvent(new Event("change")); },
  highlighted: () => {
    const out = [];
    for (let i = 0; S.mark && i < M.n; i++) if (S.mark[i]) out.push(i);
    return out;
  },
  search: (q) => { $("search").value = q; const n = runSearch(q); if (n) stepSearch(1); return n; },
  searchNext: () => taskInfo(stepSearch(1)),
  searchPrev: () => taskInfo(stepSearch(-1)),
  rangeSelect: (t0, t1) => { const st = setRange(t0, t1); return { ...st[0], runs: st }; },
  colorBy: (mode) => { setColorBy(mode); return S.colors.legend; },
  legend: () => S.colors.legend,
  highlight,
  // client-space rectangle of task i on the canvas (after reveal), for real mouse events
  taskRect: (i) => {
    reveal(i);
    drawFrame(M, S);
    const b = taskBox(M, S, i);
    const r = canvas.getBoundingClientRect();
    const x0 = Math.max(b.x0, LABEL_W);
    const x1 = Math.min(b.x1, S.W);
    return { x: r.left + x0, y: r.top + b.y, w: x1 - x0, h: b.h };
  },
};
// the analyses' hooks (stats.js, blockers.js, source.js, hints.js)
Object.assign(window.openpto, EXTENSION_HOOKS);
