// ---- model.js: the embedded runs decoded into typed arrays, lane indexes and statistics ----
// Every task of every run gets one global index; the columns below are indexed by it. Lanes
// hold their tasks sorted by start (laneOff/order), which is what makes drawing, hit testing
// and range statistics a binary search instead of a scan.

const KIND_GROUP = { aic: "AIC", aiv: "AIV", hub: "HUB", fake: "Fake", aicpu: "AICPU",
                     other: "Other" };
const CORE_KINDS = ["aic", "aiv", "hub", "fake", "aicpu", "other"];
// the analyses' page parts register here: { init(analyses) }, called once the page is set up
// (`analyses` is null on a diff page), and optionally { select(i) }, called after the details
// panel shows task i (-1: none); they add their test hooks to EXTENSION_HOOKS
const EXTENSIONS = [];
const EXTENSION_HOOKS = {};

function pushAll(dst, src) {
  for (let i = 0; i < src.length; i++) dst.push(src[i]);
}

function buildModel(data) {
  let n = 0;
  for (const r of data.runs) n += r.lane.length;
  const M = {
    n, runs: [], lanes: [], strings: [],
    lane: new Int32Array(n), start: new Float64Array(n), dur: new Float64Array(n),
    name: new Int32Array(n), leaf: new Int32Array(n), root: new Int32Array(n),
    label: new Int32Array(n), run: new Uint8Array(n), kind: new Uint8Array(n),
  };
  let base = 0;
  data.runs.forEach((r, ri) => {
    const sBase = M.strings.length;
    const lBase = M.lanes.length;
    pushAll(M.strings, r.strings);
    for (const [name, kind] of r.lanes) {
      M.lanes.push({ name, kind, run: ri, group: ri + ":" + kind, maxDur: 0 });
    }
    for (let i = 0; i < r.lane.length; i++) {
      const g = base + i;
      M.lane[g] = lBase + r.lane[i];
      M.start[g] = r.start[i];
      M.dur[g] = r.dur[i];
      M.name[g] = sBase + r.name[i];
      M.leaf[g] = sBase + r.leaf[i];
      M.root[g] = sBase + r.root[i];
      M.label[g] = sBase + r.label[i];
      M.run[g] = ri;
      M.kind[g] = CORE_KINDS.indexOf(M.lanes[M.lane[g]].kind);
    }
    const cols = new Map(r.args.map((c) => [c.k, c]));
    M.runs.push({ title: r.title, base, count: r.lane.length, sBase, lBase,
                  nLanes: r.lanes.length, args: r.args, cols, generator: r.generator,
                  kernel: r.kernel });
    base += r.lane.length;
  });
  indexLanes(M);
  indexFlows(M, data.runs);
  M.bySimId = new Map();
  M.runs.forEach((run, ri) => {
    for (let i = 0; i < run.count; i++) {
      const v = argValue(M, run.base + i, "sim_task_id");
      if (v === undefined) continue;
      const key = String(v);
      if (!M.bySimId.has(key)) M.bySimId.set(key, []);
      M.bySimId.get(key).push(run.base + i);
    }
  });
  return M;
}

// laneOff[l]..laneOff[l+1] slices `order`, the lane's tasks by start time
function indexLanes(M) {
  const nl = M.lanes.length;
  const off = new Int32Array(nl + 1);
  for (let i = 0; i < M.n; i++) off[M.lane[i] + 1]++;
  for (let l = 0; l < nl; l++) off[l + 1] += off[l];
  const fill = off.slice(0, nl);
  const order = new Int32Array(M.n);
  for (let i = 0; i < M.n; i++) order[fill[M.lane[i]]++] = i;
  const start = M.start;
  for (let l = 0; l < nl; l++) {
    const seg = order.subarray(off[l], off[l + 1]);
    seg.sort((a, b) => start[a] - start[b] || a - b);
    let maxDur = 0;
    for (const i of seg) maxDur = Math.max(maxDur, M.dur[i]);
    M.lanes[l].maxDur = maxDur;
  }
  M.laneOff = off;
  M.order = order;
}

// predecessors and successors as CSR arrays (predOff/predList, succOff/succList)
function indexFlows(M, runs) {
  const src = [];
  const dst = [];
  runs.forEach((r, ri) => {
    const b = M.runs[ri].base;
    for (let k = 0; k < r.flow_src.length; k++) {
      src.push(b + r.flow_src[k]);
      dst.push(b + r.flow_dst[k]);
    }
  });
  const csr = (from, to) => {
    const off = new Int32Array(M.n + 1);
    for (const f of from) off[f + 1]++;
    for (let i = 0; i < M.n; i++) off[i + 1] += off[i];
    const fill = off.slice(0, M.n);
    const list = new Int32Array(from.length);
    for (let k = 0; k < from.length; k++) list[fill[from[k]]++] = to[k];
    return [off, list];
  };
  [M.succOff, M.succList] = csr(src, dst);
  [M.predOff, M.predList] = csr(dst, src);
  M.nFlows = src.length;
}

function neighbours(M, i, dir) {
  const [off, list] = dir === "pred" ? [M.predOff, M.predList] : [M.succOff, M.succList];
  return Array.from(list.subarray(off[i], off[i + 1]));
}

// first position k in the lane's order with start >= t
function lowerBound(M, l, t) {
  let lo = M.laneOff[l];
  let hi = M.laneOff[l + 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (M.start[M.order[mid]] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function argValue(M, i, key) {
  const run = M.runs[M.run[i]];
  const col = run.cols.get(key);
  if (!col) return undefined;
  const local = i - run.base;
  if (col.num) return col.num[local] === null ? undefined : col.num[local];
  const s = col.str[local];
  return s < 0 ? undefined : M.strings[run.sBase + s];
}

function argsOf(M, i) {
  const run = M.runs[M.run[i]];
  const out = [];
  for (const col of run.args) {
    const v = argValue(M, i, col.k);
    if (v !== undefined) out.push([col.k, v]);
  }
  return out;
}

function lanesOfRun(M, ri, kinds) {
  const out = [];
  M.lanes.forEach((ln, l) => { if (ln.run === ri && kinds.includes(ln.kind)) out.push(l); });
  return out;
}

// busy time of lane l clipped to [t0, t1], and the tasks overlapping it
function laneOverlap(M, l, t0, t1, visit) {
  let busy = 0;
  for (let k = lowerBound(M, l, t0 - M.lanes[l].maxDur); k < M.laneOff[l + 1]; k++) {
    const i = M.order[k];
    const s = M.start[i];
    if (s > t1) break;
    const clip = Math.min(s + M.dur[i], t1) - Math.max(s, t0);
    if (clip < 0 || (clip === 0 && M.dur[i] > 0)) continue;
    busy += clip;
    if (visit) visit(i, clip);
  }
  return busy;
}

// AIC / AIV / AICore utilisation of run ri over [t0, t1] (PyPTO's formula: busy time over
// lanes x span, idle lanes included) and per-leaf count / busy in range / average duration
function rangeStats(M, ri, t0, t1) {
  const span = t1 - t0;
  const util = {};
  let allBusy = 0;
  let allLanes = 0;
  const leaves = new Map();
  const visit = (i, clip) => {
    const key = M.leaf[i];
    let e = leaves.get(key);
    if (!e) leaves.set(key, (e = { leaf: M.strings[key], count: 0, busy: 0, total: 0 }));
    e.count++;
    e.busy += clip;
    e.total += M.dur[i];
  };
  for (const kind of ["aic", "aiv"]) {
    const ls = lanesOfRun(M, ri, [kind]);
    let busy = 0;
    for (const l of ls) busy += laneOverlap(M, l, t0, t1, visit);
    util[kind] = ls.length && span > 0 ? (100 * busy) / (ls.length * span) : 0;
    allBusy += busy;
    allLanes += ls.length;
  }
  for (const l of lanesOfRun(M, ri, ["hub", "fake", "other"])) laneOverlap(M, l, t0, t1, visit);
  const rows = [...leaves.values()].map((e) => ({ ...e, avg: e.total / e.count }));
  rows.sort((a, b) => b.busy - a.busy || (a.leaf < b.leaf ? -1 : 1));
  return { run: M.runs[ri].title, t0, t1, span, aicUtil: util.aic, aivUtil: util.aiv,
           aicoreUtil: allLanes && span > 0 ? (100 * allBusy) / (allLanes * span) : 0,
           leaves: rows };
}

// the numbers of the summary header: kernel time (AIC/AIV span), end-to-end (launch at 0 or
// the first event, to the last end of any event), utilisation over the kernel span, tasks
function runSummary(M, ri) {
  const run = M.runs[ri];
  let k0 = Infinity;
  let k1 = -Infinity;
  let e1 = -Infinity;
  let first = 0;
  const counts = {};
  for (let i = run.base; i < run.base + run.count; i++) {
    const kind = CORE_KINDS[M.kind[i]];
    counts[kind] = (counts[kind] || 0) + 1;
    const end = M.start[i] + M.dur[i];
    first = Math.min(first, M.start[i]);
    e1 = Math.max(e1, end);
    if (kind === "aic" || kind === "aiv") {
      k0 = Math.min(k0, M.start[i]);
      k1 = Math.max(k1, end);
    }
  }
  const kernel = k1 > k0 ? k1 - k0 : 0;
  const stats = kernel > 0 ? rangeStats(M, ri, k0, k1) : null;
  const tasks = run.count - (counts.aicpu || 0);
  return { title: run.title, kernelUs: kernel, kernelStart: k0, e2eUs: e1 > first ? e1 - first : 0,
           utilPct: stats ? stats.aicoreUtil : 0, aicUtilPct: stats ? stats.aicUtil : 0,
           aivUtilPct: stats ? stats.aivUtil : 0, tasks, counts,
           coreLanes: lanesOfRun(M, ri, ["aic", "aiv"]).length };
}

function laneStats(M, l, span) {
  const n = M.laneOff[l + 1] - M.laneOff[l];
  let busy = 0;
  for (let k = M.laneOff[l]; k < M.laneOff[l + 1]; k++) busy += M.dur[M.order[k]];
  const first = n ? M.start[M.order[M.laneOff[l]]] : 0;
  let last = 0;
  for (let k = M.laneOff[l]; k < M.laneOff[l + 1]; k++) {
    last = Math.max(last, M.start[M.order[k]] + M.dur[M.order[k]]);
  }
  return { lane: M.lanes[l].name, tasks: n, busy, util: span > 0 ? (100 * busy) / span : 0,
           first, last };
}

// tasks whose name, leaf, root or label matches q (text: case-insensitive substring;
// /pattern/flags: a regular expression), in time order; {error} for a bad pattern
function searchTasks(M, q) {
  if (!q) return { matches: [] };
  let test;
  const m = /^\/(.+)\/([a-z]*)$/.exec(q);
  if (m) {
    let re;
    try {
      re = new RegExp(m[1], m[2].replace(/[gy]/g, ""));
    } catch (e) {
      return { matches: [], error: e.message };
    }
    test = (s) => re.test(s);
  } else {
    const ql = q.toLowerCase();
    test = (s) => s.toLowerCase().includes(ql);
  }
  // NOTE: test each distinct string once, then tasks by index: names repeat a lot
  const hit = new Uint8Array(M.strings.length);
  const seen = new Uint8Array(M.strings.length);
  const check = (s) => {
    if (!seen[s]) { seen[s] = 1; hit[s] = test(M.strings[s]) ? 1 : 0; }
    return hit[s];
  };
  const matches = [];
  for (let i = 0; i < M.n; i++) {
    if (check(M.name[i]) || check(M.leaf[i]) || check(M.root[i]) || check(M.label[i])) {
      matches.push(i);
    }
  }
  matches.sort((a, b) => M.start[a] - M.start[b] || M.lane[a] - M.lane[b]);
  return { matches };
}

// tasks within `depth` dependency steps of i (upstream and downstream; -1 = unlimited)
function dependencyCone(M, i, depth) {
  const mark = new Uint8Array(M.n);
  mark[i] = 1;
  const edges = [];
  for (const [off, list, up] of [[M.predOff, M.predList, true], [M.succOff, M.succList, false]]) {
    let frontier = [i];
    for (let d = 0; frontier.length && (depth < 0 || d < depth); d++) {
      const next = [];
      for (const t of frontier) {
        for (let k = off[t]; k < off[t + 1]; k++) {
          const o = list[k];
          edges.push(up ? [o, t] : [t, o]);
          if (!mark[o]) { mark[o] = 1; next.push(o); }
        }
      }
      frontier = next;
    }
  }
  return { mark, edges };
}
