// ---- source.js: the Source tab: the kernel's source with each line's simulated time ----
// (`pypto.toolkit.analyses.by_line`: a task's time split over its leaf's source lines by the
// cost model's terms). Each line with time has a bar (stacked by term) with its us and share;
// hovering shows the AIC / AIV and per-term split. Clicking a line's time marks its tasks in
// the swimlane; a selected task lists its lines in the details panel (links back here); the
// graph tab is asked to show a line's ops ("openpto-show-line") and asks this tab the same.

const SOURCE_TERM_COLORS = { mte2: "#5b8def", vector: "#2fa56b", cube: "#d9822b", mte1: "#b57edc",
                             fix: "#8d6e63", mte3: "#e0b400", head: "#9aa3b2" };
const SOURCE_CSS = `
#pane-source .src-head { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: baseline; }
#pane-source .src-legend span { margin-right: 10px; white-space: nowrap; }
#pane-source .src-file { margin: 10px 0 2px; font-size: 13px; overflow-wrap: anywhere; }
#pane-source .src-missing { color: #8a93a3; font-style: italic; }
#pane-source .src-rows { font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
#pane-source .src-row { display: grid; grid-template-columns: minmax(120px, 220px) 4.5em minmax(0, 1fr);
  gap: 0 8px; align-items: start; border-bottom: 1px solid #f3f4f6; }
#pane-source .src-row.src-idle { color: #a0a7b4; }
#pane-source .src-row.src-current { background: #fff4c2; }
#pane-source .src-time { display: flex; align-items: center; gap: 6px; cursor: pointer; min-width: 0; }
#pane-source .src-time:hover { background: #eef3ff; }
#pane-source .src-bar { display: flex; height: 9px; flex: 0 0 auto; background: #f1f3f6; }
#pane-source .src-bar span { height: 100%; }
#pane-source .src-us { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: 11px; }
#pane-source .src-no { text-align: right; color: #8a93a3; }
#pane-source .src-code { white-space: pre-wrap; overflow-wrap: anywhere; min-width: 0; }
#pane-source .src-graph { font-size: 10px; margin-left: 6px; cursor: pointer; }
.src-links a { display: inline-block; margin-right: 10px; }
`;

const SOURCE = { data: null, byKey: new Map(), byLeaf: new Map(), rows: new Map(), max: 0,
                 opened: false };

function sourceKey(file, line) { return `${file}:${line}`; }

function sourceBar(x, width) {
  const bar = el("span", { class: "src-bar", style: `width:${width}px` });
  if (!x) return bar;
  for (const term of SOURCE.data.terms) {
    const t = x.terms[term] || 0;
    if (t > 0) bar.append(el("span", { style: `width:${(width * t / SOURCE.max).toFixed(2)}px;background:${SOURCE_TERM_COLORS[term] || "#777"}` }));
  }
  return bar;
}

function sourceTip(x) {
  const terms = SOURCE.data.terms.filter((t) => x.terms[t]).map((t) => `  ${t}: ${us(x.terms[t])}`);
  return [`${x.file}:${x.line}`, `${us(x.us)} (${pct(x.pct)} of all task time), ${x.tasks} tasks`,
          `AIC ${us(x.aic_us)}  AIV ${us(x.aiv_us)}`, "by cost term:", ...terms,
          `leaves: ${x.leaves.join(", ")}`, "click: mark its tasks in the swimlane"].join("\n");
}

function sourceRow(file, n, text, x) {
  const time = x ? el("span", { class: "src-time", title: sourceTip(x), "data-testid": "source-time",
                                onclick: () => sourceShowTasks(file, n) },
                      sourceBar(x, 60), el("span", { class: "src-us" }, `${usNum(x.us)} us ${x.pct.toFixed(1)}%`))
    : el("span", {});
  const code = el("span", { class: "src-code" }, text === null ? "" : text);
  if (x && DATA.graph) {
    code.append(el("a", { class: "src-graph", href: "#", title: "show this line's ops in the graph",
                          onclick: (ev) => { ev.preventDefault(); sourceShowInGraph(file, n); } }, "graph"));
  }
  const row = el("div", { class: x ? "src-row" : "src-row src-idle", "data-testid": x ? "source-line" : "source-idle",
                          "data-file": file, "data-line": n },
                 time, el("span", { class: "src-no" }, String(n)), code);
  if (x) SOURCE.rows.set(sourceKey(file, n), row);
  return row;
}

function sourceFile(file, text, lines) {
  const box = el("section", { "data-testid": "source-file" },
    el("h2", { class: "src-file", title: file }, file || "(ops without a source line)"));
  const rows = el("div", { class: "src-rows" });
  if (text) {
    const at = new Map(lines.map((x) => [x.line, x]));
    text.forEach((t, k) => rows.append(sourceRow(file, k + 1, t, at.get(k + 1))));
  } else {
    if (file) box.append(el("p", { class: "src-missing" }, "source not available (the file is not readable here)"));
    for (const x of lines) rows.append(sourceRow(file, x.line, null, x));
  }
  box.append(rows);
  return box;
}

function sourceRender(pane, d) {
  const legend = el("span", { class: "src-legend" }, ...d.terms.map((t) =>
    el("span", {}, el("span", { class: "swatch", style: `background:${SOURCE_TERM_COLORS[t] || "#777"}` }), t)));
  const head = el("div", { class: "src-head" },
    el("h2", {}, `Time by source line: ${d.lines.length} lines, ${usNum(d.total_us)} us of task time`),
    legend);
  const note = el("p", { class: "hint" }, "A task's time is split over its leaf's lines by the cost model's terms. " +
    "Click a line's time to mark its tasks in the swimlane." +
    (d.unattributed_us ? ` Unattributed (leaves without source lines): ${usNum(d.unattributed_us)} us.` : ""));
  const byFile = new Map();
  for (const x of d.lines) {
    if (!byFile.has(x.file)) byFile.set(x.file, []);
    byFile.get(x.file).push(x);
  }
  pane.replaceChildren(head, note,
    ...[...byFile].map(([file, lines]) => sourceFile(file, d.files[file] || null, lines)));
}

function sourceTasksOf(x) {
  const want = new Set(x.leaves);
  const out = [];
  for (let i = 0; i < M.n; i++) if (want.has(M.strings[M.leaf[i]])) out.push(i);
  return out;
}

function sourceShowTasks(file, line) {
  const x = SOURCE.byKey.get(sourceKey(file, line));
  if (!x) return 0;
  const tasks = sourceTasksOf(x);
  const mark = new Uint8Array(M.n);
  for (const i of tasks) mark[i] = 1;
  S.graphMark = tasks.length ? mark : null;
  showTab("swimlane");
  $("status").textContent = tasks.length ? `${tasks.length} task${tasks.length === 1 ? "" : "s"} of line ${line} marked (Esc clears)` : "";
  updateMark();
  return tasks.length;
}

// the row of (file, line): the exact file, else a file of the same name (the graph's and the
// hints' files are the trace's, but a page may have been moved)
function sourceFind(file, line) {
  const exact = SOURCE.rows.get(sourceKey(file, line));
  if (exact) return exact;
  const base = String(file).split(/[\\/]/).pop();
  const rows = [...document.querySelectorAll(`#pane-source .src-row[data-line="${Number(line)}"]`)];
  return rows.find((r) => r.dataset.file === file) ||
    rows.find((r) => r.dataset.file.split(/[\\/]/).pop() === base) || null;
}

function sourceShowLine(file, line) {
  const row = sourceFind(file, line);
  if (!row) return false;
  SOURCE.opened = true;
  showTab("source");
  for (const r of document.querySelectorAll("#pane-source .src-current")) r.classList.remove("src-current");
  row.classList.add("src-current");
  row.scrollIntoView({ block: "center" });
  return true;
}

function sourceShowInGraph(file, line) {
  const frame = $("graph-frame");
  if (!DATA.graph || !frame.contentWindow) return false;
  showTab("graph");
  frame.contentWindow.postMessage({ type: "openpto-show-line", file, line }, "*");
  return true;
}

// the lines of task i's leaf, biggest share first
function sourceLinesOfTask(i) {
  if (i < 0) return [];
  return (SOURCE.byLeaf.get(M.strings[M.leaf[i]]) || []).slice();
}

function sourceOnSelect(i) {
  const lines = sourceLinesOfTask(i);
  if (!lines.length) return;
  const box = el("div", { class: "src-links", "data-testid": "task-source-lines" },
    el("h3", {}, "Source lines"),
    ...lines.map((x) => el("a", { href: "#", title: `${x.file}:${x.line}: open in the Source tab`,
                                  "data-testid": "task-source-line",
                                  onclick: (ev) => { ev.preventDefault(); sourceShowLine(x.file, x.line); } },
                           `${String(x.file).split(/[\\/]/).pop()}:${x.line} (${x.pct.toFixed(1)}%)`)));
  $("panel-details").append(box);
}

EXTENSIONS.push({
  init(analyses) {
    const d = analyses && analyses.by_line;
    if (!d || !Array.isArray(d.lines) || !d.lines.length) return;
    SOURCE.data = d;
    SOURCE.max = Math.max(...d.lines.map((x) => x.us), 1e-12);
    for (const x of d.lines) {
      SOURCE.byKey.set(sourceKey(x.file, x.line), x);
      for (const leaf of x.leaves) {
        if (!SOURCE.byLeaf.has(leaf)) SOURCE.byLeaf.set(leaf, []);
        SOURCE.byLeaf.get(leaf).push(x);
      }
    }
    for (const list of SOURCE.byLeaf.values()) list.sort((a, b) => b.us - a.us);
    document.head.append(el("style", { id: "source-style" }, SOURCE_CSS));
    sourceRender($("pane-source"), d);
    $("tab-source").hidden = false;
    // opened the first time, the tab shows its heaviest line (not line 1 of a long file)
    $("tab-source").addEventListener("click", () => {
      if (SOURCE.opened) return;
      SOURCE.opened = true;
      const top = d.lines[0];
      const row = document.querySelector("#pane-source .src-current") || sourceFind(top.file, top.line);
      if (row) row.scrollIntoView({ block: "center" });
    });
    window.addEventListener("message", (ev) => {
      const frame = $("graph-frame");
      const m = ev.data;
      if (!frame.contentWindow || ev.source !== frame.contentWindow) return;
      if (m && typeof m === "object" && m.type === "openpto-show-line") sourceShowLine(m.file, m.line);
    });
    EXTENSION_HOOKS.sourceLines = () => d.lines.map((x) => ({ file: x.file, line: x.line, us: x.us, pct: x.pct,
                                                             aic_us: x.aic_us, aiv_us: x.aiv_us, terms: { ...x.terms } }));
    EXTENSION_HOOKS.showLine = sourceShowLine;
    EXTENSION_HOOKS.showLineTasks = sourceShowTasks;
    EXTENSION_HOOKS.showLineInGraph = sourceShowInGraph;
    EXTENSION_HOOKS.currentLine = () => {
      const r = document.querySelector("#pane-source .src-current");
      return r ? { file: r.dataset.file, line: Number(r.dataset.line) } : null;
    };
    EXTENSION_HOOKS.taskSourceLines = (i) => sourceLinesOfTask(i).map((x) => ({ file: x.file, line: x.line }));
  },
  select(i) { if (SOURCE.data) sourceOnSelect(i); },
});
