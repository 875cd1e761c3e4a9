// ---- panels.js: the DOM around the canvas (summary, details, range, lanes, legend, report) ----
// Everything from the trace goes into the page as text nodes (el() never parses markup), so
// task names and args are shown literally whatever they contain.

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function us(x) {
  return `${Number(x).toFixed(3)} us`;
}

function pct(x) {
  return `${Number(x).toFixed(2)}%`;
}

function table(head, rows, numeric) {
  const num = new Set(numeric || []);
  return el("table", {},
    el("thead", {}, el("tr", {}, ...head.map((h, c) => el("th", { class: num.has(c) ? "num" : "" }, h)))),
    el("tbody", {}, ...rows));
}

function cells(values, numeric, props) {
  const num = new Set(numeric || []);
  return el("tr", props || {}, ...values.map((v, c) => el("td", { class: num.has(c) ? "num" : "" }, v)));
}

// the two times every page and report means the same by
const KERNEL_TIP = "kernel: the AIC/AIV span, from the first AICore task's start to the last " +
  "AICore task's end (PyPTO's own tool prints it as \"AICore End-to-End Time\")";
const E2E_TIP = "end-to-end: from launch (time 0 of the run) to the last event of any lane, " +
  "AICPU included";

function renderSummary(M, box) {
  box.replaceChildren();
  M.runs.forEach((run, ri) => {
    const s = runSummary(M, ri);
    const kinds = Object.entries(s.counts).filter(([k]) => k !== "aicpu")
      .map(([k, n]) => `${n} ${k.toUpperCase()}`).join(" / ");
    box.append(el("div", { class: "sum-run", "data-testid": "summary-run" },
      M.runs.length > 1 ? el("span", { class: "run-title" }, run.title) : null,
      el("span", { title: KERNEL_TIP, "data-testid": "summary-kernel-label" }, "kernel ",
         el("b", { "data-testid": "summary-kernel" }, us(s.kernelUs))),
      el("span", { title: E2E_TIP, "data-testid": "summary-e2e-label" }, "end-to-end ",
         el("b", { "data-testid": "summary-e2e" }, us(s.e2eUs))),
      el("span", {}, "AICore util ", el("b", { "data-testid": "summary-util" }, pct(s.utilPct)),
         ` (AIC ${pct(s.aicUtilPct)}, AIV ${pct(s.aivUtilPct)})`),
      el("span", {}, "tasks ", el("b", { "data-testid": "summary-tasks" }, s.tasks),
         kinds ? ` (${kinds})` : ""),
      el("span", {}, `${s.coreLanes} core lanes \u00b7 ${run.generator}`)));
  });
}

// a table that fits its panel: cols [{head, title, width, num}], rows of cells (a cell is a
// value, or {v, title}); columns without a width share what is left
function fitTable(cols, rows, testid, rowProps) {
  return el("table", { class: "fit", ...(testid ? { "data-testid": testid } : {}) },
    el("colgroup", {}, ...cols.map((c) => el("col", c.width ? { style: `width:${c.width}` } : {}))),
    el("thead", {}, el("tr", {}, ...cols.map((c) =>
      el("th", { class: c.num ? "num" : "", ...(c.title ? { title: c.title } : {}) }, c.head)))),
    el("tbody", {}, ...rows.map((row, r) => el("tr", rowProps ? rowProps(r) : {},
      ...row.map((v, k) => {
        const cell = v !== null && typeof v === "object" && !(v instanceof Node) ? v : { v };
        if (cell.mid) return nameCell(String(cell.v), cell.title);
        const tip = cell.title || (cols[k].num || cell.v instanceof Node ? "" : String(cell.v));
        return el("td", { class: cols[k].num ? "num" : "", ...(tip ? { title: tip } : {}) }, cell.v);
      })))));
}

// Long names (leaf functions differ in their tails: ..._PATH3_hiddenfunc0_leaf2) are cut in
// the middle to the cell's width: the cell keeps the full name in data-full and its title.
const measure = document.createElement("canvas").getContext("2d");

function middleEllipsis(text, px) {
  if (measure.measureText(text).width <= px) return text;
  const cut = (k) => {
    const head = Math.ceil(k / 4);
    return text.slice(0, head) + "\u2026" + text.slice(text.length - (k - head));
  };
  let lo = 0;
  let hi = text.length - 1;
  while (lo < hi) {
    const k = (lo + hi + 1) >> 1;
    if (measure.measureText(cut(k)).width <= px) lo = k;
    else hi = k - 1;
  }
  return cut(lo);
}

// fit every name cell under root to its width: the full names go back first (a table laid
// out by its content would otherwise shrink with every pass), then all widths are read, then
// all texts set
function fitNames(root) {
  widenNumbers(root);
  const cells = [...root.querySelectorAll("td.mid")].filter((td) => td.offsetParent !== null);
  if (!cells.length) return;
  for (const td of cells) if (td.textContent !== td.dataset.full) td.textContent = td.dataset.full;
  const style = getComputedStyle(cells[0]);
  measure.font = `${style.fontSize} ${style.fontFamily}`;
  const pad = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) + 1;
  const widths = cells.map((td) => (td.scrollWidth > td.clientWidth ? td.clientWidth - pad : -1));
  cells.forEach((td, k) => {
    if (widths[k] >= 0) td.textContent = middleEllipsis(td.dataset.full, widths[k]);
  });
}

// widen each numeric column of the fitted tables under root to its widest cell (a 100.0 %,
// a 5-digit busy time), all widths read first, then set: the name column gives up the room
function widenNumbers(root) {
  const tables = [...root.querySelectorAll("table.fit")].filter((t) => t.offsetParent !== null);
  const needs = tables.map((t) => {
    const need = new Map();
    for (const c of t.querySelectorAll("td.num, th.num")) {
      if (c.scrollWidth > c.clientWidth) need.set(c.cellIndex, Math.max(need.get(c.cellIndex) || 0, c.scrollWidth));
    }
    return need;
  });
  tables.forEach((t, k) => {
    const cols = t.querySelectorAll("col");
    for (const [c, w] of needs[k]) if (cols[c]) cols[c].style.width = `${w + 1}px`;
  });
}

function nameCell(name, title, cls) {
  return el("td", { class: `mid ${cls || ""}`, "data-full": name, title: title || name }, name);
}

// a time in us with a fixed number of decimals (the unit is in the column head)
function usNum(x) {
  return Number(x).toFixed(Math.abs(x) >= 10000 ? 1 : 3);
}

const DETAIL_KEYS = [["window", "window"], ["instance", "instance"], ["call", "call"],
                     ["seqNo", "seqNo"]];
const SHOWN_KEYS = new Set(["leaf", "root", "color", "ioperand-hint", "ooperand-hint",
                            ...DETAIL_KEYS.map(([k]) => k)]);
// args that identify things inside the toolchain (hashes, magics, packed task ids) rather
// than say something to a reader; shown only with "raw"
const INTERNAL_KEYS = new Set(["taskId", "sim_task_id", "rawmagic", "magic", "rootHash",
                               "leafHash", "callOpMagic", "TaskId"]);
const INTERNAL_HINT = /rootHash|leafHash|callOpMagic|TaskId/;
const ID_LIMIT = 2 ** 32;       // integers this large are ids (40-bit task ids, 64-bit hashes)

function isInternal(key, value) {
  if (INTERNAL_KEYS.has(key) || /(magic|hash)$/i.test(key)) return true;
  if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) >= ID_LIMIT) return true;
  return key === "event-hint" && INTERNAL_HINT.test(String(value));
}

// PyPTO's operand hint, the Python repr "[{magic: {'shape': [...], 'dtype': 7, 'rawmagic': 16}}]",
// as [{shape, dtype}]; null when the text is not that
function parseOperands(text) {
  if (typeof text !== "string" || !text.trim().startsWith("[")) return null;
  try {
    const json = text.replace(/'/g, '"').replace(/([{,]\s*)(-?\d+)\s*:/g, '$1"$2":')
      .replace(/\bNone\b/g, "null").replace(/\bTrue\b/g, "true").replace(/\bFalse\b/g, "false");
    const list = JSON.parse(json);
    if (!Array.isArray(list)) return null;
    return list.map((entry) => {
      const t = entry && typeof entry === "object" ? Object.values(entry)[0] : null;
      if (!t || typeof t !== "object") throw new Error("not an operand");
      return { shape: t.shape, dtype: t.dtype };
    });
  } catch (e) {
    return null;
  }
}

function dtypeName(dtypes, code) {
  const name = dtypes && dtypes[String(code)];
  return name || (code === undefined || code === null ? "?" : `dtype ${code}`);
}

function shapeText(shape) {
  return Array.isArray(shape) ? `[${shape.map((d) => (d === -1 ? "?" : d)).join(", ")}]` : String(shape);
}

function bytesText(n) {
  if (typeof n !== "number") return String(n);
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

// an arg value as a reader wants it: operand hints decoded, GM accesses without the tensor
// ids, small objects as "key: value" lines; anything else verbatim
function readableArg(key, value, dtypes) {
  if (key === "ioperand-hint" || key === "ooperand-hint") {
    const ops = parseOperands(value);
    if (ops) return ops.map((o) => `${dtypeName(dtypes, o.dtype)} ${shapeText(o.shape)}`).join("\n");
  }
  if (/^gm_/.test(key) && Array.isArray(value) &&
      value.every((r) => Array.isArray(r) && r.length === 4 && Array.isArray(r[1]) && Array.isArray(r[2]))) {
    return value.map(([, off, shape, n]) => `${shapeText(shape)} at ${shapeText(off)}, ${bytesText(n)}`).join("\n");
  }
  if (typeof value === "string" && /^[\[{]/.test(value)) {
    try { value = JSON.parse(value); } catch (e) { return value; }
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).map(([k, v]) =>
      `${k}: ${v !== null && typeof v === "object" ? JSON.stringify(v) : v}`).join("\n");
  }
  if (/_bytes$/.test(key) && typeof value === "number") return bytesText(value);
  return formatCell(value);
}

// the selected task: its place and functions, decoded operands and the args a reader uses;
// `raw` shows every arg verbatim instead (internal ids included)
function renderDetails(M, box, i, onJump, raw, onRaw, dtypes) {
  box.replaceChildren();
  if (i < 0) {
    box.append(el("p", { class: "hint" }, "Click a task to see its details."));
    return;
  }
  const lane = M.lanes[M.lane[i]];
  const args = argsOf(M, i);
  const toggle = el("input", { type: "checkbox", "data-testid": "details-raw",
                               onchange: (ev) => onRaw(ev.target.checked) });
  toggle.checked = raw;
  box.append(el("div", { class: "panel-head" },
    el("h3", { "data-testid": "details-title" }, M.strings[M.name[i]]),
    el("label", { class: "raw-toggle", title: "show every arg verbatim, internal ids included" },
       toggle, " raw")));
  const rows = [
    ["name", M.strings[M.name[i]], "details-name"],
    ["run", M.runs[M.run[i]].title, null],
    ["lane", lane.name, "details-lane"],
    ["start", us(M.start[i]), "details-start"],
    ["duration", us(M.dur[i]), "details-duration"],
    ["end", us(M.start[i] + M.dur[i]), null],
    ["leaf function", M.strings[M.leaf[i]], null],
    ["root function", M.strings[M.root[i]], null],
  ];
  if (M.strings[M.label[i]]) rows.push(["label", M.strings[M.label[i]], null]);
  if (!raw) {
    for (const [key, title] of DETAIL_KEYS) {
      const v = argValue(M, i, key);
      if (v !== undefined) rows.push([title, formatCell(v), null]);
    }
    for (const [key, title, id] of [["ioperand-hint", "inputs", "details-inputs"],
                                    ["ooperand-hint", "outputs", "details-outputs"]]) {
      const v = argValue(M, i, key);
      if (v) rows.push([title, readableArg(key, v, dtypes), id]);
    }
  }
  box.append(table(["field", "value"], rows.map(([k, v, id]) =>
    el("tr", {}, el("td", {}, k), el("td", { class: "val", ...(id ? { "data-testid": id } : {}) }, v)))));
  for (const [dir, title] of [["pred", "Predecessors"], ["succ", "Successors"]]) {
    const list = neighbours(M, i, dir);
    box.append(el("h3", {}, `${title} (${list.length})`));
    box.append(el("div", { class: "deps", "data-testid": `${dir}-list` },
      ...list.slice(0, 200).map((j) => el("button", {
        "data-testid": `${dir}-button`, title: `${M.lanes[M.lane[j]].name} @ ${us(M.start[j])}`,
        onclick: () => onJump(j) }, M.strings[M.name[j]])),
      list.length > 200 ? `\u2026 ${list.length - 200} more` : null));
  }
  if (raw) {
    box.append(el("h3", {}, "All args (verbatim)"));
    box.append(table(["key", "value"], args.map(([k, v]) =>
      el("tr", { "data-testid": "details-arg" }, el("td", {}, k), el("td", { class: "val" }, formatCell(v))))));
    return;
  }
  const shown = args.filter(([k, v]) => !SHOWN_KEYS.has(k) && !isInternal(k, v) && v !== "");
  const hidden = args.filter(([k, v]) => isInternal(k, v)).length;
  box.append(el("h3", {}, "Args"));
  box.append(table(["key", "value"], shown.map(([k, v]) =>
    el("tr", { "data-testid": "details-arg" }, el("td", {}, k), el("td", { class: "val" }, readableArg(k, v, dtypes))))));
  if (hidden) {
    box.append(el("p", { class: "hint", "data-testid": "details-hidden" },
      `${hidden} internal id${hidden === 1 ? "" : "s"} hidden (tick "raw" to see every arg verbatim).`));
  }
}

const RANGE_LEAF_COLS = [
  { head: "leaf", title: "leaf function (hover a name for all of it)" },
  { head: "tasks", title: "tasks overlapping the range", width: "3.9em", num: true },
  { head: "busy \u00b5s", title: "busy time of these tasks inside the range (us)", width: "5.6em", num: true },
  { head: "%", title: "share of all busy time inside the range", width: "3.4em", num: true },
  { head: "avg \u00b5s", title: "mean duration of these tasks, whole tasks (us)", width: "5.2em", num: true },
];

// the prefix every name shares, up to its last "_" (PyPTO's leaves: TENSOR_LOOP_KV_Unroll1_...),
// when dropping it leaves room for the parts that tell them apart; "" otherwise
function commonPrefix(names) {
  if (names.length < 2) return "";
  let p = names[0];
  for (const n of names) while (!n.startsWith(p)) p = p.slice(0, -1);
  p = p.slice(0, p.lastIndexOf("_") + 1);
  return p.length >= 8 && names.every((n) => n.length > p.length) ? p : "";
}

function renderRange(M, box, statsPerRun) {
  box.replaceChildren();
  for (const st of statsPerRun) {
    box.append(el("h3", {}, `${M.runs.length > 1 ? st.run + ": " : ""}${formatTime(st.t0)} \u2192 ${formatTime(st.t1)}`));
    box.append(fitTable([{ head: "" }, { head: "value", width: "7em", num: true }], [
      ["span", us(st.span)],
      ["AIC utilisation", el("span", { "data-testid": "range-aic-util" }, pct(st.aicUtil))],
      ["AIV utilisation", el("span", { "data-testid": "range-aiv-util" }, pct(st.aivUtil))],
      ["AICore utilisation", el("span", { "data-testid": "range-aicore-util" }, pct(st.aicoreUtil))],
    ]));
    box.append(el("p", { class: "hint" },
      "Per leaf: tasks overlapping the range, their busy time inside it and its share, their mean duration."));
    const total = st.leaves.reduce((a, r) => a + r.busy, 0);
    const prefix = commonPrefix(st.leaves.map((r) => r.leaf || ""));
    if (prefix) {
      box.append(el("p", { class: "hint", "data-testid": "range-leaf-prefix" },
        "Leaf names below without their common start ", el("code", {}, prefix), "."));
    }
    box.append(fitTable(RANGE_LEAF_COLS, st.leaves.map((r) => [
      { v: r.leaf ? r.leaf.slice(prefix.length) : "(none)", title: r.leaf || "(no leaf function)", mid: true },
      r.count, usNum(r.busy),
      total > 0 ? (100 * r.busy / total).toFixed(1) : "-", usNum(r.avg)]),
      "range-leaves", () => ({ "data-testid": "range-leaf-row" })));
  }
}

function renderLaneStats(M, box, onLane) {
  box.replaceChildren();
  box.append(el("p", { class: "hint" }, "Busy time per lane; utilisation over the run's kernel time. Click a row to scroll to it."));
  const spans = M.runs.map((_, ri) => runSummary(M, ri).kernelUs);
  const rows = M.lanes.map((ln, l) => {
    const s = laneStats(M, l, spans[ln.run]);
    const name = M.runs.length > 1 ? `${M.runs[ln.run].title} \u00b7 ${s.lane}` : s.lane;
    return [{ v: name, mid: true }, s.tasks, usNum(s.busy), ln.kind === "aicpu" ? "" : pct(s.util)];
  });
  box.append(fitTable([{ head: "lane" }, { head: "tasks", width: "3.9em", num: true },
    { head: "busy \u00b5s", title: "busy time of the lane (us)", width: "6em", num: true },
    { head: "util", title: "busy time over the run's kernel time", width: "4.6em", num: true }],
  rows, "lane-stats", (l) => ({ class: "clickable", "data-testid": "lane-stats-row", onclick: () => onLane(l) })));
}

function renderLegend(box, colors) {
  box.replaceChildren();
  const shown = colors.legend.slice(0, 300);
  box.append(fitTable([{ head: "key" }, { head: "tasks", width: "4em", num: true }], shown.map((e) => [
    { v: el("span", {}, el("span", { class: "swatch", style: `background:${e.color}` }), e.name), title: e.name },
    e.count]), "legend", () => ({ "data-testid": "legend-row" })));
  if (colors.legend.length > shown.length) {
    box.append(el("p", { class: "hint" }, `\u2026 ${colors.legend.length - shown.length} more keys`));
  }
}

function formatCell(v) {
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toPrecision(6);
  if (v === null || v === undefined) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

function signClass(v) {
  return typeof v === "number" && v !== 0 ? (v > 0 ? "num pos" : "num neg") : "num";
}

// ---- the diff report ----

// one compared figure: {name, tip, a, b, fmt, better: "lower" | "higher" | null}
function compareRow(f, testid) {
  const delta = f.b - f.a;
  const ratio = f.a ? f.b / f.a : null;
  const good = f.better && delta !== 0 ? ((delta < 0) === (f.better === "lower") ? "better" : "worse") : "";
  const sign = delta > 0 ? "+" : delta < 0 ? "\u2212" : "\u00b1";
  return el("tr", { "data-testid": testid, ...(good ? { "data-verdict": good } : {}) },
    el("th", f.tip ? { title: f.tip } : {}, f.name),
    el("td", { class: "num" }, f.fmt(f.a)), el("td", { class: "num" }, f.fmt(f.b)),
    el("td", { class: `num ${good}`, title: good ? `B is ${good}` : "" }, sign + f.fmt(Math.abs(delta))),
    el("td", { class: `num ${good}` }, ratio === null ? "-" : `\u00d7${ratio.toFixed(3)}`));
}

function runHead(titles, paths) {
  return el("tr", {}, el("th", {}, ""),
    ...titles.map((t, k) => el("th", { class: "num", title: `${t}${paths[k] ? `\n${paths[k]}` : ""}` },
                                "AB"[k])),
    el("th", { class: "num" }, "\u0394 (B\u2212A)"), el("th", { class: "num" }, "B/A"));
}

const fixed = (d) => (x) => Number(x).toFixed(d);

// the first screen of a diff: kernel / end-to-end / tasks / utilisation of both runs (the
// page's own numbers, as in the header of a single run), better in green, worse in red
function diffSummary(M, titles, paths) {
  const [a, b] = [runSummary(M, 0), runSummary(M, 1)];
  const figures = [
    { name: "kernel \u00b5s", tip: KERNEL_TIP, a: a.kernelUs, b: b.kernelUs, fmt: fixed(3), better: "lower" },
    { name: "end-to-end \u00b5s", tip: E2E_TIP, a: a.e2eUs, b: b.e2eUs, fmt: fixed(3), better: "lower" },
    { name: "tasks", tip: "AICore tasks (AIC, AIV, HUB, fake)", a: a.tasks, b: b.tasks, fmt: fixed(0), better: null },
    { name: "AICore util %", tip: "busy time of the AIC and AIV lanes over lanes x kernel time",
      a: a.utilPct, b: b.utilPct, fmt: fixed(2), better: "higher" },
  ];
  return el("table", { "data-testid": "diff-summary" }, el("thead", {}, runHead(titles, paths)),
    el("tbody", {}, ...figures.map((f) => compareRow(f, "diff-summary-row"))));
}

function criticalPathTable(cp, titles) {
  const cols = [["tasks", "tasks", fixed(0)], ["busy \u00b5s", "busy_us", fixed(3)],
                ["wait \u00b5s", "wait_us", fixed(3)], ["busy % of kernel", "busy_share_pct", fixed(1)]];
  const side = (k) => cp[k] || {};
  return el("table", { "data-testid": "report-critical-path" },
    el("thead", {}, el("tr", {}, el("th", {}, ""), ...cols.map(([h]) => el("th", { class: "num" }, h)),
                       el("th", {}, "from \u2192 to"))),
    el("tbody", {}, ...["a", "b"].map((k, n) => {
      const p = side(k);
      const names = Array.isArray(p.names) ? p.names : [];
      return el("tr", { "data-testid": "report-critical-row" },
        el("th", { title: titles[n] }, k.toUpperCase()),
        ...cols.map(([, key, f]) => el("td", { class: "num" }, typeof p[key] === "number" ? f(p[key]) : "-")),
        el("td", { title: `${names.join(" \u2192 ")}${p.basis ? `\n(${p.basis})` : ""}` },
           names.length ? `${names[0]} \u2192 ${names[names.length - 1]}` : "-"));
    })));
}

const LEAF_COLUMNS = [
  ["name", "leaf", "leaf function"], ["core", "core", null], ["status", "in", "in both runs, or only one"],
  ["tasks_a", "tasks A", null], ["tasks_b", "tasks B", null], ["tasks_delta", "\u0394 tasks", null],
  ["total_us_a", "total \u00b5s A", "summed task time"], ["total_us_b", "total \u00b5s B", "summed task time"],
  ["total_us_delta", "\u0394 total \u00b5s", "B \u2212 A; less is better"],
  ["mean_us_a", "mean \u00b5s A", null], ["mean_us_b", "mean \u00b5s B", null]];

function leafTable(rows, testid) {
  const known = LEAF_COLUMNS.filter(([k]) => rows.some((r) => k in r));
  const cols = known.length >= 3 ? known : [...new Set(rows.flatMap((r) => Object.keys(r)))].map((k) => [k, k, null]);
  return el("table", { "data-testid": testid || "report-leaves" },
    el("thead", {}, el("tr", {}, ...cols.map(([k, h, tip]) => el("th", {
      class: rows.some((r) => typeof r[k] === "number") ? "num" : "", ...(tip ? { title: tip } : {}) }, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", { "data-testid": "report-leaf-row" },
      ...cols.map(([k]) => {
        const v = r[k];
        const isDelta = /delta/.test(k) && typeof v === "number" && v !== 0;
        const verdict = isDelta && /us/.test(k) ? (v < 0 ? " better" : " worse") : "";
        if (k === "name") return nameCell(formatCell(v), r.leaf && r.leaf !== v ? `${v}\n${r.leaf}` : String(v), "name");
        const text = typeof v === "number" && /_us/.test(k) ? usNum(v) : formatCell(v);
        return el("td", { class: typeof v === "number" ? `num${verdict}` : "" },
                  isDelta && v > 0 ? `+${text}` : text);
      })))));
}

function allTotalsTable(totals, titles) {
  return el("table", { "data-testid": "report-totals" },
    el("thead", {}, runHead(titles, [])),
    el("tbody", {}, ...Object.entries(totals).map(([name, r]) => {
      const row = r && typeof r === "object" ? r : { a: r };
      return el("tr", { "data-testid": "report-total-row" }, el("th", {}, name),
        el("td", { class: "num" }, formatCell(row.a)), el("td", { class: "num" }, formatCell(row.b)),
        el("td", { class: "num" }, formatCell(row.delta)), el("td", { class: "num" }, formatCell(row.ratio)));
    })));
}

// the report panel of a diff page (collapsible): the summary and the critical paths side by
// side, the per-leaf deltas under them, every total and anything else folded away. `report`
// is diff.compare's dict ("schema", "a", "b", "totals", "leaves", "critical_path"); keys it
// does not know are shown as JSON under "more"
function renderReport(box, report, M) {
  box.replaceChildren();
  box.hidden = false;
  report = report || {};
  const titles = M.runs.map((r) => r.title);
  const paths = [report.a, report.b].map((p) => (typeof p === "string" ? p : ""));
  const top = el("div", { class: "report-top" },
    el("div", {}, el("h2", {}, "Summary"), diffSummary(M, titles, paths)));
  if (report.critical_path && typeof report.critical_path === "object") {
    top.append(el("div", {}, el("h2", { title: "the chain of dependent tasks that ends last" }, "Critical path"),
                  criticalPathTable(report.critical_path, titles)));
  }
  const body = el("details", { open: "", "data-testid": "report-panel" },
    el("summary", { title: paths.join("\nvs\n") }, "Diff report \u2014 ",
       el("span", { "data-testid": "diff-run-a" }, `A: ${titles[0]}`), "  vs  ",
       el("span", { "data-testid": "diff-run-b" }, `B: ${titles[1]}`)), top);
  const leaves = report.leaves;
  if (Array.isArray(leaves) && leaves.every((r) => r && typeof r === "object")) {
    body.append(el("h2", {}, `Leaf functions (${leaves.length}, biggest change in total time first)`),
                leafTable(leaves));
  }
  const lines = report.lines;     // (what-if and diff of runs with source lines)
  if (Array.isArray(lines) && lines.every((r) => r && typeof r === "object")) {
    body.append(el("h2", {}, `Source lines (${lines.length}, biggest change first)`),
                leafTable(lines.map((r) => ({ line: `${String(r.file).split(/[\\/]/).pop()}:${r.line}`,
                                              a_us: r.a_us, b_us: r.b_us, delta_us: r.delta_us })),
                          "report-lines"));
  }
  const more = el("details", {}, el("summary", {}, "more: every total, other report keys"));
  if (report.totals && typeof report.totals === "object" && !Array.isArray(report.totals)) {
    more.append(el("h2", {}, "Totals"), allTotalsTable(report.totals, titles));
  }
  const skip = new Set(["schema", "a", "b", "totals", "leaves", "critical_path", "lines"]);
  for (const [key, value] of Object.entries(report)) {
    if (skip.has(key)) continue;
    more.append(el("h2", {}, key), el("pre", { "data-testid": "report-json" }, JSON.stringify(value, null, 2)));
  }
  body.append(more);
  box.append(body);
}
