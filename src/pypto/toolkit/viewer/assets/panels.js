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

function renderSummary(M, box) {
  box.replaceChildren();
  M.runs.forEach((run, ri) => {
    const s = runSummary(M, ri);
    const kinds = Object.entries(s.counts).filter(([k]) => k !== "aicpu")
      .map(([k, n]) => `${n} ${k.toUpperCase()}`).join(" / ");
    box.append(el("div", { class: "sum-run", "data-testid": "summary-run" },
      M.runs.length > 1 ? el("span", { class: "run-title" }, run.title) : null,
      el("span", {}, "kernel ", el("b", { "data-testid": "summary-kernel" }, us(s.kernelUs))),
      el("span", {}, "end-to-end ", el("b", { "data-testid": "summary-e2e" }, us(s.e2eUs))),
      el("span", {}, "AICore util ", el("b", { "data-testid": "summary-util" }, pct(s.utilPct)),
         ` (AIC ${pct(s.aicUtilPct)}, AIV ${pct(s.aivUtilPct)})`),
      el("span", {}, "tasks ", el("b", { "data-testid": "summary-tasks" }, s.tasks),
         kinds ? ` (${kinds})` : ""),
      el("span", {}, `${s.coreLanes} core lanes \u00b7 ${run.generator}`)));
  });
}

const DETAIL_KEYS = [["taskId", "task id"], ["sim_task_id", "sim task id"], ["root", "root"],
                     ["leaf", "leaf"], ["window", "window"], ["instance", "instance"],
                     ["call", "call"], ["seqNo", "seqNo"]];

function renderDetails(M, box, i, onJump) {
  box.replaceChildren();
  if (i < 0) {
    box.append(el("p", { class: "hint" }, "Click a task to see its details."));
    return;
  }
  const lane = M.lanes[M.lane[i]];
  const rows = [
    ["name", M.strings[M.name[i]], "details-name"],
    ["run", M.runs[M.run[i]].title, null],
    ["lane", lane.name, "details-lane"],
    ["start", us(M.start[i]), "details-start"],
    ["duration", us(M.dur[i]), "details-duration"],
    ["end", us(M.start[i] + M.dur[i]), null],
    ["leaf function", M.strings[M.leaf[i]], null],
    ["root function", M.strings[M.root[i]], null],
    ["label", M.strings[M.label[i]], null],
  ];
  for (const [key, title] of DETAIL_KEYS) {
    const v = argValue(M, i, key);
    if (v !== undefined && key !== "root" && key !== "leaf") rows.push([title, v, null]);
  }
  for (const [key, title] of [["ioperand-hint", "inputs"], ["ooperand-hint", "outputs"]]) {
    const v = argValue(M, i, key);
    if (v) rows.push([title, v, null]);
  }
  box.append(el("h3", { "data-testid": "details-title" }, M.strings[M.name[i]]));
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
  box.append(el("h3", {}, "All args"));
  box.append(table(["key", "value"], argsOf(M, i).map(([k, v]) =>
    el("tr", {}, el("td", {}, k), el("td", { class: "val" }, v)))));
}

function renderRange(M, box, statsPerRun) {
  box.replaceChildren();
  for (const st of statsPerRun) {
    box.append(el("h3", {}, `${M.runs.length > 1 ? st.run + ": " : ""}${formatTime(st.t0)} \u2192 ${formatTime(st.t1)}`));
    box.append(table(["", "value"], [
      cells(["span", us(st.span)], [1]),
      cells(["AIC utilisation", el("span", { "data-testid": "range-aic-util" }, pct(st.aicUtil))], [1]),
      cells(["AIV utilisation", el("span", { "data-testid": "range-aiv-util" }, pct(st.aivUtil))], [1]),
      cells(["AICore utilisation", el("span", { "data-testid": "range-aicore-util" }, pct(st.aicoreUtil))], [1]),
    ], [1]));
    box.append(el("p", { class: "hint" },
      "Per leaf: tasks overlapping the range, their busy time inside it, their mean duration."));
    box.append(table(["leaf", "count", "busy in range", "avg dur"], st.leaves.map((r) =>
      cells([r.leaf || "(none)", r.count, us(r.busy), us(r.avg)], [1, 2, 3],
            { "data-testid": "range-leaf-row" })), [1, 2, 3]));
  }
}

function renderLaneStats(M, box, onLane) {
  box.replaceChildren();
  box.append(el("p", { class: "hint" }, "Busy time per lane; utilisation over the run's kernel time. Click a row to scroll to it."));
  const spans = M.runs.map((_, ri) => runSummary(M, ri).kernelUs);
  const rows = M.lanes.map((ln, l) => {
    const s = laneStats(M, l, spans[ln.run]);
    const name = M.runs.length > 1 ? `${M.runs[ln.run].title} \u00b7 ${s.lane}` : s.lane;
    return cells([name, s.tasks, us(s.busy), ln.kind === "aicpu" ? "" : pct(s.util)], [1, 2, 3],
                 { class: "clickable", "data-testid": "lane-stats-row", onclick: () => onLane(l) });
  });
  box.append(table(["lane", "tasks", "busy", "util"], rows, [1, 2, 3]));
}

function renderLegend(box, colors) {
  box.replaceChildren();
  const shown = colors.legend.slice(0, 300);
  box.append(table(["key", "tasks"], shown.map((e) => cells(
    [el("span", {}, el("span", { class: "swatch", style: `background:${e.color}` }), e.name), e.count],
    [1], { "data-testid": "legend-row" })), [1]));
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

// the diff report: "totals" {name: {a, b, delta, ratio}}, "leaves" [row], anything else as JSON
function renderReport(box, report, titles) {
  box.replaceChildren();
  box.hidden = false;
  for (const [key, value] of Object.entries(report || {})) {
    if (key === "totals" && value && typeof value === "object" && !Array.isArray(value)) {
      box.append(el("h2", {}, "Totals"));
      box.append(el("table", { "data-testid": "report-totals" },
        el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", { class: "num" }, titles[0]),
          el("th", { class: "num" }, titles[1]), el("th", { class: "num" }, "delta"),
          el("th", { class: "num" }, "ratio"))),
        el("tbody", {}, ...Object.entries(value).map(([name, r]) => {
          const row = r && typeof r === "object" ? r : { a: r };
          return el("tr", { "data-testid": "report-total-row" }, el("td", {}, name),
            el("td", { class: "num" }, formatCell(row.a)), el("td", { class: "num" }, formatCell(row.b)),
            el("td", { class: signClass(row.delta) }, formatCell(row.delta)),
            el("td", { class: "num" }, formatCell(row.ratio)));
        }))));
    } else if (key === "leaves" && Array.isArray(value) && value.every((r) => r && typeof r === "object")) {
      const cols = [...new Set(value.flatMap((r) => Object.keys(r)))];
      box.append(el("h2", {}, "Leaves"));
      box.append(el("table", { "data-testid": "report-leaves" },
        el("thead", {}, el("tr", {}, ...cols.map((c) => el("th", {}, c)))),
        el("tbody", {}, ...value.map((r) => el("tr", { "data-testid": "report-leaf-row" },
          ...cols.map((c) => el("td", { class: /delta/.test(c) ? signClass(r[c]) : typeof r[c] === "number" ? "num" : "" },
                                formatCell(r[c]))))))));
    } else {
      box.append(el("h2", {}, key));
      box.append(el("pre", { "data-testid": "report-json" }, JSON.stringify(value, null, 2)));
    }
  }
}
