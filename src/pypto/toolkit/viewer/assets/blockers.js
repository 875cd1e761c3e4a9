// ---- blockers.js: the Blockers side panel and its swimlane overlay ----
// (`pypto.toolkit.analyses.blockers` and `.paths`). The panel shows the cores' idle time by
// cause (what each gap waited for: window build, window barrier, predecessor, scheduler, ...),
// the static critical path against the observed one with the per-cause decomposition, and the
// largest gaps: clicking one zooms the swimlane to it and selects the task it held back. While
// the panel is open the overlay colours every kept gap by cause in the idle space of its lane
// (draw.js `drawLaneOverlay`), the cause table being its legend; its checkbox turns it off.

const BLOCKERS_COLORS = {
  "window build": "rgba(142, 107, 191, 0.40)", "window barrier": "rgba(214, 77, 110, 0.35)",
  "predecessor": "rgba(230, 160, 30, 0.40)", "core": "rgba(120, 120, 120, 0.35)",
  "scheduler": "rgba(46, 150, 200, 0.38)", "unknown": "rgba(150, 150, 150, 0.25)",
  "no work left": "rgba(180, 190, 200, 0.22)", "unused core": "rgba(200, 205, 210, 0.20)",
};
const BLOCKERS = { checked: true, shown: false, lanes: null };

function blockersSwatch(cause) {
  return el("span", { class: "swatch", style: `background:${BLOCKERS_COLORS[cause] || "#ccc"}` });
}

// lane index of each overlay lane name (the page's first run)
function blockersLaneIndex(names) {
  const byName = new Map();
  M.lanes.forEach((ln, l) => { if (ln.run === 0 && !byName.has(ln.name)) byName.set(ln.name, l); });
  return names.map((n) => (byName.has(n) ? byName.get(n) : -1));
}

function blockersBuildOverlay(o) {
  const lanes = blockersLaneIndex(o.lanes);
  const per = new Map();
  for (let k = 0; k < o.lane.length; k++) {
    const l = lanes[o.lane[k]];
    if (l < 0) continue;
    if (!per.has(l)) per.set(l, { t0: [], t1: [], color: [] });
    const x = per.get(l);
    x.t0.push(o.t0[k]);
    x.t1.push(o.t1[k]);
    x.color.push(BLOCKERS_COLORS[o.causes[o.cause[k]]] || "rgba(0,0,0,0.1)");
  }
  return per;
}

// the overlay shows while the panel is open and its checkbox is checked
function blockersUpdateOverlay() {
  const on = BLOCKERS.checked && !$("panel-blockers").hidden;
  if (on === BLOCKERS.shown) return;
  BLOCKERS.shown = on;
  S.overlays = on ? BLOCKERS.lanes : null;
  requestDraw();
}

// zoom to gap `row` (a margin either side), select the task it held back, keep this panel
function blockersShowGap(row) {
  const pad = Math.max((row.t1 - row.t0) * 0.25, 1e-3);
  const t1 = row.task >= 0 && row.task < M.n ? M.start[row.task] + M.dur[row.task] : row.t1;
  setView(row.t0 - pad, Math.max(row.t1, t1) + pad);
  if (row.task >= 0 && row.task < M.n) select(row.task, { reveal: true });
  showPanel("blockers");
  return row.task;
}

function blockersCauseTable(b) {
  const rows = Object.entries(b.by_cause).filter(([, v]) => v > 0).map(([c, v]) =>
    cells([el("span", {}, blockersSwatch(c), c), us(v), pct(b.idle_us ? (100 * v) / b.idle_us : 0)],
          [1, 2], { "data-testid": "blockers-cause", "data-cause": c }));
  const t = table(["cause", "idle", "share"], rows, [1, 2]);
  t.className = "fit";
  return t;
}

function blockersPaths(p) {
  const d = p.decomposition;
  const rows = [cells(["static chain", us(d.static_us)], [1])];
  for (const [c, v] of Object.entries(d.waits)) {
    rows.push(cells([el("span", {}, blockersSwatch(c), "wait: " + c), us(v)], [1]));
  }
  rows.push(cells(["core hold (via lane)", us(d.core_hold_us)], [1]));
  rows.push(cells(["chain difference", us(d.chain_difference_us)], [1]));
  if (Math.abs(d.overlap_us) > 1e-9) rows.push(cells(["overlap", us(d.overlap_us)], [1]));
  rows.push(cells([el("b", {}, "= observed path"), el("b", {}, us(d.sum_us))], [1]));
  const t = table(["term", "us"], rows, [1]);
  t.className = "fit";
  t.setAttribute("data-testid", "blockers-paths");
  const side = (title, m) => {
    const items = Object.entries(m);
    const n = items.reduce((a, [, v]) => a + v, 0);
    return el("p", { class: "hint" }, `${title}: ${n} task${n === 1 ? "" : "s"}` +
      (items.length ? " (" + items.slice(0, 4).map(([k, v]) => `${k} x${v}`).join(", ") +
       (items.length > 4 ? ", ..." : "") + ")" : ""));
  };
  return [el("h3", {}, "Critical path: static vs observed"),
          el("p", {}, `static ${us(p.static.us)} over ${p.static.tasks} tasks; observed ` +
                      `${us(p.observed.us)} over ${p.observed.tasks} tasks (${p.observed.basis})`),
          t, side("on the static path only", p.only_static), side("on the observed path only", p.only_observed)];
}

function blockersGapItem(row, k) {
  const head = `${row.lane} ${row.t0.toFixed(3)} \u2192 ${row.t1.toFixed(3)} (${us(row.us)})`;
  return el("div", { class: "hint-item", "data-testid": "blockers-gap", "data-gap": k },
    el("div", { class: "hint-summary", title: "zoom to this gap and select the task after it",
                onclick: () => blockersShowGap(row) },
       el("b", {}, head), " before ", row.name || "(end)"),
    el("ul", { class: "hint-evidence" }, ...row.segments.map((s) =>
      el("li", {}, blockersSwatch(s.cause), `${us(s.us)} ${s.cause}: ${s.what}`))));
}

function blockersRender(box, b, p) {
  const toggle = el("input", { type: "checkbox", "data-testid": "blockers-overlay",
                               onchange: (ev) => { BLOCKERS.checked = ev.target.checked; blockersUpdateOverlay(); } });
  toggle.checked = BLOCKERS.checked;
  const span = b.span.us;
  box.replaceChildren(
    el("h3", {}, "Gaps and blockers"),
    el("p", {}, `${b.cores} cores idle ${us(b.idle_us)} of ${us(b.cores * span)} over the kernel span`),
    el("label", { class: "raw-toggle" }, toggle, " colour the gaps on the swimlane"),
    blockersCauseTable(b),
    ...b.notes.map((n) => el("p", { class: "hint" }, n)),
    ...(p && p.error ? [el("p", { class: "hint" }, "critical paths: " + p.error)] : p ? blockersPaths(p) : []),
    el("h3", {}, `Largest gaps (${b.listed} of ${b.gaps} at least ${us(b.threshold_us)})`),
    ...b.rows.map(blockersGapItem));
}

EXTENSIONS.push({
  init(analyses) {
    const b = analyses && analyses.blockers;
    if (!b) return;
    const p = analyses.paths || null;
    document.querySelector('.side-tab[data-panel="blockers"]').hidden = false;
    BLOCKERS.lanes = blockersBuildOverlay(b.overlay);
    blockersRender($("panel-blockers"), b, p);
    new MutationObserver(blockersUpdateOverlay).observe($("panel-blockers"), { attributes: true, attributeFilter: ["hidden"] });
    blockersUpdateOverlay();
    EXTENSION_HOOKS.blockers = () => ({ by_cause: b.by_cause, idle_us: b.idle_us,
      gaps: b.rows.length, paths: p && (p.error || p.decomposition) });
    EXTENSION_HOOKS.overlayShown = () => BLOCKERS.shown && S.overlays === BLOCKERS.lanes;
    EXTENSION_HOOKS.overlayDrawn = () => S.overlayDrawn || 0;   // stretches the last frame drew
    EXTENSION_HOOKS.overlaySegments = () => [...BLOCKERS.lanes.values()].reduce((a, x) => a + x.t0.length, 0);
    EXTENSION_HOOKS.showGap = (k) => blockersShowGap(b.rows[k]);
  },
});
