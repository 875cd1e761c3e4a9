// ---- hints.js: the Hints side panel: the advisor's findings as perf_hints.log lists them ----
// (`pypto.toolkit.analyses.hints`). Each hint names its knob, the source line it is about, its
// summary and evidence; clicking it zooms the swimlane to the time it rests on and marks its
// tasks; clicking its line opens the Source tab there (when the page has one).

function hintsMarkTasks(names) {
  const want = new Set(names);
  const mark = new Uint8Array(M.n);
  let count = 0;
  for (let i = 0; i < M.n; i++) {
    if (want.has(M.strings[M.name[i]])) { mark[i] = 1; count++; }
  }
  S.graphMark = count ? mark : null;
  $("status").textContent = count ? `${count} task${count === 1 ? "" : "s"} of the hint marked (Esc clears)` : "";
  updateMark();
  return count;
}

function hintsShow(h) {
  if (h.time_range) {
    const [t0, t1] = h.time_range;
    const pad = Math.max((t1 - t0) * 0.05, 1e-3);
    setView(t0 - pad, t1 + pad);
  }
  showTab("swimlane");
  return hintsMarkTasks(h.tasks);
}

function hintsRender(box, hints) {
  box.replaceChildren(el("h3", {}, `${hints.length} hint${hints.length === 1 ? "" : "s"} (perf_hints.log)`));
  if (!hints.length) {
    box.append(el("p", { class: "hint" }, "The advisor found nothing to change in this run."));
    return;
  }
  hints.forEach((h, k) => {
    const line = h.line === "?" ? el("span", { class: "hint", title: "the trace has no source lines" }, "line ?")
      : el("a", { href: "#", "data-testid": "hint-line", title: "open the Source tab at this line",
                  onclick: (ev) => { ev.preventDefault(); hintsOpenLine(h.line); } }, h.line);
    const gain = h.gain_us === null ? "" : `up to ~${us(h.gain_us)}`;
    box.append(el("div", { class: "hint-item", "data-testid": "hint-item", "data-hint": k },
      el("div", { class: "hint-head" },
         el("code", { class: "hint-knob" }, h.knob), line,
         el("span", { class: "hint-gain" }, gain)),
      el("div", { class: "hint-summary clickable", title: "show its tasks in the swimlane",
                  onclick: () => hintsShow(h) }, h.summary),
      h.evidence.length ? el("ul", { class: "hint-evidence" }, ...h.evidence.map((e) => el("li", {}, e))) : null));
  });
}

function hintsOpenLine(line) {
  const at = line.lastIndexOf(":");
  if (EXTENSION_HOOKS.showLine) return EXTENSION_HOOKS.showLine(line.slice(0, at), Number(line.slice(at + 1)));
  return false;
}

EXTENSIONS.push({
  init(analyses) {
    const hints = analyses && analyses.hints;
    if (!hints) return;
    document.querySelector('.side-tab[data-panel="hints"]').hidden = false;
    hintsRender($("panel-hints"), hints);
    EXTENSION_HOOKS.hints = () => hints.map((h) => ({ knob: h.knob, line: h.line, summary: h.summary }));
    EXTENSION_HOOKS.showHint = (k) => hintsShow(hints[k]);
  },
});
