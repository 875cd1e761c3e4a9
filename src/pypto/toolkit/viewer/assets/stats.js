// ---- stats.js: the Statistics tab: kernel statistics and scheduling overhead ----
// (`pypto.toolkit.analyses.kernel_stats` / `sched_overhead`). Sortable tables (click a header;
// again to reverse) per core type, per leaf function (its time by cost-model term, its bytes)
// and per stitch window; a leaf row marks its tasks in the swimlane, a window row zooms the
// swimlane to the window. Numbers are right-aligned; long names end in an ellipsis (full name
// on hover).

const STATS_TABLES = {};       // id -> { cols, rows, sort: [column, direction], body, onRow }

function statsNum(x, digits) {
  return x === null || x === undefined ? "-" : Number(x).toFixed(digits);
}

function statsMB(x) {
  return x === null || x === undefined ? "-" : (Number(x) / 1e6).toFixed(3);
}

// the text of row r's cell in column c
function statsCell(c, r) {
  const v = r[c.key];
  return c.fmt ? c.fmt(v, r) : v === null || v === undefined ? "-" : String(v);
}

function statsSortValue(c, r) {
  const v = c.value ? c.value(r) : r[c.key];
  return v === null || v === undefined ? (c.num ? -Infinity : "") : v;
}

function statsRenderBody(t) {
  const [col, dir] = t.sort;
  if (col >= 0) {
    const c = t.cols[col];
    t.rows.sort((a, b) => {
      const x = statsSortValue(c, a), y = statsSortValue(c, b);
      const d = c.num ? x - y : String(x).localeCompare(String(y));
      return dir * (d || 0);
    });
  }
  t.body.replaceChildren(...t.rows.map((r) => {
    const tr = el("tr", t.onRow ? { class: "clickable", title: t.rowTitle,
                                    onclick: () => t.onRow(r) } : {},
      ...t.cols.map((c) => {
        const text = statsCell(c, r);
        return el("td", c.num ? { class: "num", title: text } : { title: text }, text);
      }));
    tr.dataset.testid = `stats-${t.id}-row`;
    return tr;
  }));
  t.head.querySelectorAll("th").forEach((th, k) => {
    th.dataset.sorted = k === col ? (dir > 0 ? "asc" : "desc") : "";
    th.setAttribute("aria-sort", k === col ? (dir > 0 ? "ascending" : "descending") : "none");
    th.textContent = t.cols[k].label + (k === col ? (dir > 0 ? " \u25b2" : " \u25bc") : "");
  });
}

function statsSort(id, column) {
  const t = STATS_TABLES[id];
  if (!t) return null;
  const k = typeof column === "number" ? column : t.cols.findIndex((c) => c.label === column || c.key === column);
  if (k < 0 || k >= t.cols.length) return null;
  // a new column sorts numbers largest first, text A..Z; the same column again reverses
  t.sort = t.sort[0] === k ? [k, -t.sort[1]] : [k, t.cols[k].num ? -1 : 1];
  statsRenderBody(t);
  return t.rows.map((r) => statsCell(t.cols[0], r));
}

// a sortable table: cols [{key, label, num, fmt, value, width}], rows of objects
function statsTable(id, cols, rows, opts) {
  const head = el("tr", {}, ...cols.map((c, k) => el("th", {
    class: c.num ? "num" : "", style: "cursor: pointer; white-space: normal; vertical-align: bottom",
    "data-testid": "stats-th", "aria-sort": "none",
    onclick: () => statsSort(id, k) }, c.label)));
  const body = el("tbody", {});
  const widths = el("colgroup", {}, ...cols.map((c) => el("col", c.width ? { style: `width: ${c.width}` } : {})));
  const t = { id, cols, rows: rows.slice(), sort: (opts && opts.sort) || [-1, 1], body, head,
              onRow: opts && opts.onRow, rowTitle: (opts && opts.rowTitle) || "" };
  STATS_TABLES[id] = t;
  statsRenderBody(t);
  return el("table", { class: "fit", "data-testid": `stats-${id}` }, widths, el("thead", {}, head), body);
}

function statsGroupCols(leaf) {
  const cols = [{ key: "name", label: leaf ? "leaf" : "core type", width: leaf ? "28%" : "12%" }];
  if (leaf) cols.push({ key: "core", label: "core" }, { key: "line", label: "line", width: "12%" });
  cols.push(
    { key: "tasks", label: "tasks", num: true },
    { key: "total", label: "total us", num: true, fmt: (v) => statsNum(v, 3) },
    { key: "mean", label: "mean", num: true, fmt: (v) => statsNum(v, 3) },
    { key: "p50", label: "p50", num: true, fmt: (v) => statsNum(v, 3) },
    { key: "p95", label: "p95", num: true, fmt: (v) => statsNum(v, 3) },
    { key: "share_pct", label: "busy %", num: true, fmt: (v) => statsNum(v, 1) },
    { key: "l2_hit_pct", label: "L2 hit %", num: true, fmt: (v) => statsNum(v, 1) });
  return cols;
}

// the cost-term split of each group as % of its time (terms that occur anywhere)
function statsTermCols(groups, terms) {
  // (a term under 0.05 % of every group's time is left out)
  const used = terms.filter((t) => groups.some((g) => g.terms && g.terms[t] > 5e-4 * g.total));
  return [{ key: "name", label: "", width: "28%" }, ...used.map((t) => ({
    key: t, label: `${t} %`, num: true,
    value: (r) => (r.terms && r.total ? r.terms[t] / r.total : null),
    fmt: (v, r) => (r.terms && r.total ? (100 * r.terms[t] / r.total).toFixed(1) : "-") }))];
}

function statsBytesCols() {
  const mb = (k, label) => ({ key: k, label, num: true, value: (r) => (r.bytes ? r.bytes[k] : null),
                              fmt: (v, r) => (r.bytes ? statsMB(r.bytes[k]) : "-") });
  return [{ key: "name", label: "", width: "28%" }, mb("hbm", "HBM reads MB"),
          mb("l2_hit", "L2-hit reads MB"), mb("mte2", "MTE2 in MB"), mb("mte3", "MTE3 out MB")];
}

function statsShowLeaf(r) {
  let n = highlight({ match: { leaf: r.name } });
  if (!n) {        // a PyPTO trace names leaves by hash: mark the tasks of the page's leaf name
    const mark = new Uint8Array(M.n);
    for (let i = 0; i < M.n; i++) {
      const s = M.strings[M.leaf[i]];
      if (s === r.name || s === r.key) { mark[i] = 1; n++; }
    }
    S.graphMark = n ? mark : null;
    updateMark();
  }
  $("status").textContent = n ? `${n} task${n === 1 ? "" : "s"} of leaf ${r.name} marked (Esc clears)` : "";
  showTab("swimlane");
  return n;
}

function statsShowWindow(w) {
  const pad = Math.max((w.end - w.start) * 0.05, 1e-3);
  setView(w.start - pad, w.end + pad);
  showTab("swimlane");
  return [w.start - pad, w.end + pad];
}

function statsOverhead(box, oh) {
  box.append(el("h2", {}, "Scheduling overhead"));
  if (!oh) {
    box.append(el("p", { class: "hint" }, "No figure: the trace has no AIC/AIV task."));
    return;
  }
  box.append(el("p", { class: "hint" },
    `Cores idle while ready work of their type waited, over the kernel span (${statsNum(oh.span.us, 3)} us): ` +
    `${oh.definition}; ${oh.ready_meaning}. The swimlane file holds the same figure as the ` +
    "SchedOverhead_AIC / _AIV counters (Perfetto shows them as tracks)."));
  if (oh.reason) box.append(el("p", { class: "hint", "data-testid": "stats-overhead-reason" }, `No figure for some core types: ${oh.reason}.`));
  if (!oh.cores.length) return;
  box.append(statsTable("overhead", [
    { key: "core", label: "core type" },
    { key: "cores", label: "cores", num: true },
    { key: "overhead_pct", label: "overhead %", num: true, fmt: (v) => statsNum(v, 1) },
    { key: "idle_ready_core_us", label: "idle while ready core-us", num: true, fmt: (v) => statsNum(v, 3) },
    { key: "denominator_core_us", label: "cores x span core-us", num: true, fmt: (v) => statsNum(v, 3) },
    { key: "idle_core_us", label: "idle core-us", num: true, fmt: (v) => statsNum(v, 3) },
    { key: "idle_ready_share_pct", label: "of idle %", num: true, fmt: (v) => statsNum(v, 1) },
  ], oh.cores));
}

function statsRender(box, ks, oh) {
  box.replaceChildren();
  if (ks) {
    box.append(el("h2", {}, `Per core type (${statsNum(ks.busy_us, 3)} us of task time)`),
               statsTable("cores", statsGroupCols(false), ks.cores));
  }
  statsOverhead(box, oh);
  if (!ks) return;
  box.append(el("h2", {}, "Per leaf function (click a row to mark its tasks in the swimlane)"),
             statsTable("leaves", statsGroupCols(true), ks.leaves,
                        { onRow: statsShowLeaf, rowTitle: "mark its tasks in the swimlane" }));
  const groups = [...ks.cores, ...ks.leaves];
  if (groups.some((g) => g.terms)) {
    box.append(el("h2", {}, `Time by cost-model term (machine preset ${ks.spec}; MTE2 / MTE3 / fixpipe: the busiest transfer pipe)`),
               statsTable("terms", statsTermCols(groups, ks.terms), groups.filter((g) => g.terms)));
  }
  if (groups.some((g) => g.bytes)) {
    box.append(el("h2", {}, "Bytes moved"),
               statsTable("bytes", statsBytesCols(), groups.filter((g) => g.bytes)));
  }
  box.append(el("h2", {}, `Windows (${ks.windows.length}; click a row to zoom the swimlane to it)`),
             statsTable("windows", [
               { key: "window", label: "window", num: true },
               { key: "instances", label: "instances", num: true },
               { key: "tasks", label: "tasks", num: true },
               { key: "build_us", label: "build us", num: true, fmt: (v) => statsNum(v, 3) },
               { key: "workspace_bytes", label: "workspace B", num: true, fmt: (v) => statsNum(v, 0) },
               { key: "closed_by", label: "closed by" },
               { key: "start", label: "start us", num: true, fmt: (v) => statsNum(v, 3) },
               { key: "span", label: "span us", num: true, fmt: (v) => statsNum(v, 3) },
             ], ks.windows, { onRow: statsShowWindow, rowTitle: "zoom the swimlane to this window" }));
}

EXTENSIONS.push({
  init(analyses) {
    const ks = analyses && analyses.kernel_stats;
    const oh = analyses && analyses.sched_overhead;
    if (!ks && !oh) return;
    $("tab-stats").hidden = false;
    statsRender($("pane-stats"), ks, oh);
    EXTENSION_HOOKS.statsTables = () => Object.fromEntries(Object.values(STATS_TABLES).map((t) => [
      t.id, { columns: t.cols.map((c) => c.label), rows: t.rows.map((r) => t.cols.map((c) => statsCell(c, r))) }]));
    EXTENSION_HOOKS.sortStats = statsSort;
    EXTENSION_HOOKS.statsShowLeaf = (name) => statsShowLeaf(ks.leaves.find((g) => g.name === name));
    EXTENSION_HOOKS.statsShowWindow = (w) => statsShowWindow(ks.windows.find((x) => x.window === w));
  },
});
