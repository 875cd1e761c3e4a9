// ---- draw.js: rows layout, colours and the canvas frame (overview, ruler, lanes) ----
// A frame draws only what is visible: per lane a binary search finds the first task that can
// reach the window, and runs of tasks thinner than a pixel merge into one rectangle, so a frame
// costs about (visible lanes x canvas width) rectangles whatever the trace size.

const LABEL_W = 130;
const OVERVIEW_H = 14;
const RULER_H = 24;
const HEADER_H = OVERVIEW_H + RULER_H;
const LANE_H = 16;
const MIN_LANE_H = 2;           // lanes squeezed to fit several runs on one screen
const GROUP_H = 18;
const MAX_OUTLINES = 5000;
const MAX_ARROWS = 3000;
const CORE_COLORS = { aic: "#e2873b", aiv: "#4a8fd9", hub: "#9aa3ad", fake: "#c2c7ce",
                      aicpu: "#8e6bbf", other: "#3aa59b" };

// header rows per (run, group) and lane rows under the expanded ones; y is in content space.
// With several runs stacked (a diff) the lanes get thinner, down to MIN_LANE_H, so every run
// shows on the first screen; collapsing a group gives the others more height.
function layoutRows(M, S) {
  const groups = new Map();
  let expanded = 0;
  M.lanes.forEach((ln) => {
    const key = ln.run + ":" + KIND_GROUP[ln.kind];
    groups.set(key, (groups.get(key) || 0) + 1);
    if (!S.collapsed.has(key)) expanded++;
  });
  S.laneH = LANE_H;
  if (M.runs.length > 1 && expanded) {
    const free = S.H - HEADER_H - groups.size * GROUP_H;
    // (a fraction of a pixel too: the canvas blends it, and the last run still fits)
    // (in 1/8 px steps, so the sum of the rows never rounds past the canvas)
    S.laneH = Math.max(MIN_LANE_H, Math.min(LANE_H, Math.floor((8 * free) / expanded) / 8));
  }
  const laneH = S.laneH;
  const rows = [];
  const laneRow = new Int32Array(M.lanes.length).fill(-1);
  let y = 0;
  let prev = null;
  let inGroup = 0;
  M.lanes.forEach((ln, l) => {
    const key = ln.run + ":" + KIND_GROUP[ln.kind];
    if (key !== prev) {
      // (stacked runs are A, B, ... in the headers; their full names are the hover text)
      const prefix = M.runs.length > 1 ? runLetter(ln.run) + " \u00b7 " : "";
      const n = groups.get(key);
      rows.push({ type: "group", key, y, h: GROUP_H,
                  label: `${prefix}${KIND_GROUP[ln.kind]} (${n} lane${n === 1 ? "" : "s"})` });
      y += GROUP_H;
      prev = key;
      inGroup = 0;
    }
    if (!S.collapsed.has(key)) {
      laneRow[l] = rows.length;
      rows.push({ type: "lane", lane: l, y, h: laneH, nth: inGroup++ });
      y += laneH;
    }
  });
  S.rows = rows;
  S.laneRow = laneRow;
  S.contentH = y;
}

function runLetter(ri) {
  return String.fromCharCode(65 + ri);
}

function hsl(ordinal, sat, light) {
  return `hsl(${(ordinal * 137.508 + 205) % 360},${sat}%,${light}%)`;
}

// per-task palette index for a colour mode, the palette (normal and dimmed) and the legend
function computeColors(M, mode) {
  let keys = mode === "core" ? M.kind : M[mode];
  if (mode !== "core" && M.runs.length > 1) {
    // each run has its own string table: key by the text, so a leaf has one colour in both
    const first = new Map();
    const canon = M.strings.map((t, k) => (first.has(t) ? first.get(t) : (first.set(t, k), k)));
    keys = keys.map((k) => (k >= 0 && k < canon.length ? canon[k] : k));
  }
  const freq = new Map();
  for (let i = 0; i < M.n; i++) freq.set(keys[i], (freq.get(keys[i]) || 0) + 1);
  const ordered = [...freq.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const slot = new Map(ordered.map(([k], o) => [k, o]));
  const palette = [];
  const dim = [];
  const legend = [];
  ordered.forEach(([k, count], o) => {
    const name = mode === "core" ? CORE_KINDS[k].toUpperCase() : M.strings[k] || "(none)";
    const color = mode === "core" ? CORE_COLORS[CORE_KINDS[k]] : hsl(o, 62, 58);
    palette.push(color);
    dim.push(mode === "core" ? color + "40" : hsl(o, 28, 88));
    legend.push({ name, color, count });
  });
  const taskColor = new Int32Array(M.n);
  for (let i = 0; i < M.n; i++) taskColor[i] = slot.get(keys[i]);
  return { mode, taskColor, palette, dim, legend };
}

function plotScale(S) {
  return (S.W - LABEL_W) / (S.t1 - S.t0);
}

function timeToX(S, t) {
  return LABEL_W + (t - S.t0) * plotScale(S);
}

function rowY(S, row) {
  return HEADER_H + row.y - S.scrollY;
}

// the 1-2-5 step that puts ticks at least minPx apart, and its display unit
function tickStep(usPerPx, minPx) {
  const raw = usPerPx * minPx;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

const UNITS = [[1e6, "s"], [1e3, "ms"], [1, "us"], [1e-3, "ns"], [1e-6, "ps"]];

function formatTime(us, step) {
  const ref = Math.abs(step || us) || 1;
  const [scale, unit] = UNITS.find(([s]) => ref >= s) || UNITS[UNITS.length - 1];
  const digits = step ? Math.max(0, Math.ceil(-Math.log10(step / scale) - 1e-9)) : 3;
  return `${(us / scale).toFixed(Math.min(digits, 6))} ${unit}`;
}

function drawFrame(M, S) {
  const ctx = S.ctx;
  const { W, H } = S;
  ctx.setTransform(S.dpr, 0, 0, S.dpr, 0, 0);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, W, H);
  ctx.font = "10px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  const k = plotScale(S);
  S.overlayDrawn = 0;
  for (const row of S.rows) {
    const y = rowY(S, row);
    if (y + row.h < HEADER_H || y > H) continue;
    if (row.type === "group") {
      ctx.fillStyle = "#e4e8ef";
      ctx.fillRect(0, y, W, row.h);
      ctx.fillStyle = "#1d2330";
      ctx.font = "bold 11px system-ui, sans-serif";
      const arrow = S.collapsed.has(row.key) ? "\u25b8 " : "\u25be ";
      ctx.fillText(arrow + row.label, 6, y + row.h / 2);
      ctx.font = "10px system-ui, sans-serif";
      continue;
    }
    ctx.fillStyle = row.lane % 2 ? "#f7f8fa" : "#ffffff";
    ctx.fillRect(LABEL_W, y, W - LABEL_W, row.h);
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, Math.max(y, HEADER_H), W - LABEL_W, row.h);
    ctx.clip();
    drawLaneOverlay(S, ctx, row.lane, y, row.h);
    drawLaneTasks(M, S, ctx, row.lane, y, k, row.h);
    ctx.restore();
    ctx.fillStyle = "#f0f2f5";
    ctx.fillRect(0, y, LABEL_W, row.h);
  }
  drawLaneLabels(M, S, ctx);
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, HEADER_H, W - LABEL_W, H - HEADER_H);
  ctx.clip();
  drawOutlines(M, S, ctx);
  drawArrows(M, S, ctx);
  drawRange(S, ctx);
  ctx.restore();
  drawRuler(S, ctx, k);
  drawOverview(S, ctx);
}

// a lane's overlay (blockers.js): S.overlays maps a lane index to {t0, t1, color} arrays of
// stretches drawn beneath the lane's tasks, in its idle space
function drawLaneOverlay(S, ctx, l, y, h) {
  const o = S.overlays && S.overlays.get(l);
  if (!o) return;
  for (let k = 0; k < o.t0.length; k++) {
    if (o.t1[k] < S.t0 || o.t0[k] > S.t1) continue;
    const x0 = Math.max(LABEL_W, timeToX(S, o.t0[k]));
    const x1 = Math.min(S.W, timeToX(S, o.t1[k]));
    ctx.fillStyle = o.color[k];
    ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
    S.overlayDrawn++;
  }
}

// each lane's name in the label column; lanes thinner than a line of text (stacked runs) are
// named every k-th, k lanes being a line high, in a font no taller than the lanes left in the
// group (so no name runs into the next group's header)
function drawLaneLabels(M, S, ctx) {
  S.laneLabels = [];
  ctx.fillStyle = "#394150";
  S.rows.forEach((row, r) => {
    const y = rowY(S, row);
    if (row.type !== "lane" || y + row.h < HEADER_H || y > S.H) return;
    const every = Math.ceil(10 / row.h);
    if (row.nth % every) return;
    let room = 0;
    for (let q = r; q < S.rows.length && q < r + every && S.rows[q].type === "lane"; q++) room += S.rows[q].h;
    room = Math.min(room, 10);
    if (room < 6 && row.nth > 0) return;
    ctx.font = `${Math.max(6, Math.min(10, room))}px system-ui, sans-serif`;
    const name = M.lanes[row.lane].name;
    ctx.fillText(name, 14, y + room / 2);
    S.laneLabels.push({ lane: row.lane, name, y: y + room / 2, h: room, top: y, rowH: row.h });
  });
  ctx.font = "10px system-ui, sans-serif";
}

// the box of a task in a lane row of height h: inset 2 px, or less on a thin lane
function boxInset(h) {
  return h >= 10 ? 2 : h >= 5 ? 1 : 0;
}

function drawLaneTasks(M, S, ctx, l, y, k, h) {
  const { t0, t1 } = S;
  const inset = boxInset(h);
  const boxH = h - 2 * inset;
  const colors = S.colors;
  const mark = S.mark;
  const end = M.laneOff[l + 1];
  let runX0 = 0;
  let runX1 = -1;
  let runColor = null;
  const flush = () => {
    if (runColor === null) return;
    ctx.fillStyle = runColor;
    ctx.fillRect(runX0, y + inset, Math.max(1, runX1 - runX0), boxH);
    runColor = null;
  };
  for (let p = lowerBound(M, l, t0 - M.lanes[l].maxDur); p < end; p++) {
    const i = M.order[p];
    const s = M.start[i];
    if (s > t1) break;
    const e = s + M.dur[i];
    if (e < t0) continue;
    const x0 = LABEL_W + (s - t0) * k;
    const x1 = LABEL_W + (e - t0) * k;
    const c = colors.taskColor[i];
    const color = mark && !mark[i] ? colors.dim[c] : colors.palette[c];
    if (x1 - x0 < 2) {
      // NOTE: sub-pixel tasks merge into one run per pixel span (first task's colour)
      if (runColor !== null && x0 <= runX1 + 1) {
        runX1 = Math.max(runX1, x1, x0 + 1);
        continue;
      }
      flush();
      runX0 = x0;
      runX1 = Math.max(x1, x0 + 1);
      runColor = color;
      continue;
    }
    flush();
    const w = x1 - x0;
    ctx.fillStyle = color;
    ctx.fillRect(x0, y + inset, w > 4 ? w - 1 : w, boxH);
    if (w > 40 && h >= 10) {
      const text = M.strings[M.name[i]];
      const chars = Math.floor((w - 6) / 5.5);
      ctx.fillStyle = mark && !mark[i] ? "#9aa1ad" : "#10141c";
      ctx.fillText(text.length > chars ? text.slice(0, Math.max(0, chars - 1)) + "\u2026" : text,
                   Math.max(x0, LABEL_W) + 3, y + h / 2);
    }
  }
  flush();
}

function taskBox(M, S, i) {
  const r = S.laneRow[M.lane[i]];
  if (r < 0) return null;
  const k = plotScale(S);
  const x0 = LABEL_W + (M.start[i] - S.t0) * k;
  const x1 = LABEL_W + (M.start[i] + M.dur[i] - S.t0) * k;
  const row = S.rows[r];
  const inset = boxInset(row.h);
  return { x0, x1: Math.max(x1, x0 + 1), y: rowY(S, row) + inset, h: row.h - 2 * inset };
}

function strokeTask(M, S, ctx, i, color, width) {
  const b = taskBox(M, S, i);
  if (!b || b.x1 < LABEL_W || b.x0 > S.W) return;
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.strokeRect(b.x0 - width / 2, b.y - width / 2, b.x1 - b.x0 + width, b.h + width);
}

function drawOutlines(M, S, ctx) {
  const matches = S.search.matches;
  if (matches.length <= MAX_OUTLINES) {
    for (const i of matches) {
      if (M.start[i] <= S.t1 && M.start[i] + M.dur[i] >= S.t0) strokeTask(M, S, ctx, i, "#f2a900", 1);
    }
  }
  if (S.search.cur >= 0) strokeTask(M, S, ctx, matches[S.search.cur], "#d46b00", 2.5);
  if (S.selected >= 0) strokeTask(M, S, ctx, S.selected, "#111827", 2);
}

// dependency edges of the selection's cone, end of predecessor -> start of successor
function drawArrows(M, S, ctx) {
  if (!S.cone) return;
  ctx.strokeStyle = "rgba(17, 24, 39, 0.55)";
  ctx.lineWidth = 1;
  ctx.beginPath();
  let drawn = 0;
  for (const [a, b] of S.cone.edges) {
    const pa = taskBox(M, S, a);
    const pb = taskBox(M, S, b);
    if (!pa || !pb) continue;
    const ya = pa.y + pa.h / 2;
    const yb = pb.y + pb.h / 2;
    const mid = (pa.x1 + pb.x0) / 2;
    ctx.moveTo(pa.x1, ya);
    ctx.bezierCurveTo(mid, ya, mid, yb, pb.x0, yb);
    ctx.moveTo(pb.x0, yb);
    ctx.lineTo(pb.x0 - 4, yb - 3);
    ctx.moveTo(pb.x0, yb);
    ctx.lineTo(pb.x0 - 4, yb + 3);
    if (++drawn >= MAX_ARROWS) break;
  }
  ctx.stroke();
}

function drawRange(S, ctx) {
  const r = S.range || S.dragRange;
  if (!r) return;
  const x0 = timeToX(S, Math.min(r.t0, r.t1));
  const x1 = timeToX(S, Math.max(r.t0, r.t1));
  ctx.fillStyle = "rgba(91, 141, 239, 0.13)";
  ctx.fillRect(x0, HEADER_H, x1 - x0, S.H - HEADER_H);
  ctx.strokeStyle = "rgba(40, 90, 200, 0.8)";
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(x0, HEADER_H);
  ctx.lineTo(x0, S.H);
  ctx.moveTo(x1, HEADER_H);
  ctx.lineTo(x1, S.H);
  ctx.stroke();
}

function drawRuler(S, ctx, k) {
  const y0 = OVERVIEW_H;
  ctx.fillStyle = "#f0f2f5";
  ctx.fillRect(0, y0, S.W, RULER_H);
  ctx.fillStyle = "#394150";
  ctx.fillText("view " + formatTime(S.t1 - S.t0), 6, y0 + RULER_H / 2);
  const step = tickStep(1 / k, 90);
  ctx.strokeStyle = "#9aa3ad";
  ctx.lineWidth = 1;
  ctx.beginPath();
  S.ticks = [];
  for (let t = Math.ceil(S.t0 / step) * step; t <= S.t1; t += step) {
    const x = Math.round(timeToX(S, t)) + 0.5;
    ctx.moveTo(x, y0 + RULER_H - 7);
    ctx.lineTo(x, y0 + RULER_H);
    // a label right of its tick, or left of it where it would run past the canvas's edge
    const text = formatTime(t, step);
    const w = ctx.measureText(text).width;
    const lx = x + 3 + w > S.W - 2 ? x - 3 - w : x + 3;
    ctx.fillText(text, lx, y0 + RULER_H / 2 - 2);
    S.ticks.push({ text, x: lx, w });
  }
  ctx.stroke();
  const r = S.range || S.dragRange;
  if (r) {
    const x = timeToX(S, Math.max(r.t0, r.t1));
    ctx.fillStyle = "#1f4fbf";
    ctx.fillText("\u0394 " + formatTime(Math.abs(r.t1 - r.t0)), Math.min(x + 4, S.W - 80),
                 y0 + RULER_H - 6);
  }
  ctx.strokeStyle = "#c9ced6";
  ctx.beginPath();
  ctx.moveTo(0, HEADER_H - 0.5);
  ctx.lineTo(S.W, HEADER_H - 0.5);
  ctx.stroke();
}

// the whole run as a strip, with the visible window boxed
function drawOverview(S, ctx) {
  const [f0, f1] = S.full;
  ctx.fillStyle = "#dde3ec";
  ctx.fillRect(0, 0, S.W, OVERVIEW_H);
  ctx.fillStyle = "#394150";
  ctx.fillText("run " + formatTime(f1 - f0), 6, OVERVIEW_H / 2);
  const w = S.W - LABEL_W;
  const a = LABEL_W + ((S.t0 - f0) / (f1 - f0)) * w;
  const b = LABEL_W + ((S.t1 - f0) / (f1 - f0)) * w;
  ctx.fillStyle = "rgba(91, 141, 239, 0.45)";
  ctx.fillRect(Math.max(LABEL_W, a), 1, Math.max(2, Math.min(S.W, b) - Math.max(LABEL_W, a)),
               OVERVIEW_H - 2);
}

function rowAt(S, y) {
  const cy = y - HEADER_H + S.scrollY;
  for (const row of S.rows) if (cy >= row.y && cy < row.y + row.h) return row;
  return null;
}

// the task under (x, y), or the nearest one within 3 px on that lane; -1 if none
function taskAt(M, S, x, y) {
  const row = rowAt(S, y);
  if (!row || row.type !== "lane" || x < LABEL_W || y < HEADER_H) return -1;
  const l = row.lane;
  const k = plotScale(S);
  const t = S.t0 + (x - LABEL_W) / k;
  const tol = 3 / k;
  let best = -1;
  let bestDist = Infinity;
  for (let p = lowerBound(M, l, t - M.lanes[l].maxDur - tol); p < M.laneOff[l + 1]; p++) {
    const i = M.order[p];
    const s = M.start[i];
    if (s > t + tol) break;
    const e = s + M.dur[i];
    const d = t < s ? s - t : t > e ? t - e : 0;
    if (d <= tol && d <= bestDist) {
      best = i;
      bestDist = d;
    }
  }
  return best;
}
