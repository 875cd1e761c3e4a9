// The compiled simulator core: `machine/simulate.py` (THE model, the readable specification)
// transcribed to C++ for speed. It must decide exactly what the Python model decides, bit for
// bit: every floating-point operation below is the Python one, in the same order and
// association (built with -ffp-contract=off: no fused multiply-adds), events run in
// (time, order raised) order, and the running set iterates in the order tasks began.
// tests/machine/test_sim_cores.py holds the two equal; change the Python model first.
//
// Input: the task table as arrays (one row per task, in task order; `machine/task_table.py`),
// the machine constants as a dict. Output: arrays per task (core, start, end, L2-hit and HBM
// bytes, ready), the AICPU records, the flows and the stats sums (`machine/compiled.py`).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;
using i64 = std::int64_t;

namespace {

constexpr i64 NEVER = -(i64(1) << 62);   // the stamp of a line never touched
const double NaN = std::numeric_limits<double>::quiet_NaN();

// the columns of one run, kept alive while it runs (a column of another dtype is converted)
std::vector<py::object> *kept = nullptr;

template <typename T>
const T *data(const py::dict &d, const char *key, size_t expect) {
    if (!d.contains(key))
        throw std::invalid_argument(std::string("simcore: the task table has no column ") + key);
    auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(d[key]);
    if (!a)
        throw std::invalid_argument(std::string("simcore: column ") + key + " is not numeric");
    if (size_t(a.size()) != expect)
        throw std::invalid_argument(std::string("simcore: column ") + key +
                                    " has the wrong length");
    kept->push_back(a);
    return a.data();
}

i64 floor_div(i64 a, i64 b) {
    i64 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// ---------------------------------------------------------------- L2 (`memory.L2`)
// The plain definition: per storage a recency stamp per line; the clock counts the lines
// brought in; a line hits while fewer than max_lines came in since it was last touched.
struct Storage {
    std::vector<i64> stamps;
    i64 untouched = 0;   // lines from here on were never touched: all misses
};

struct Boxes {   // one CSR of GM boxes (storage, offsets, extents)
    const i64 *ptr, *storage, *dim_ptr, *offs, *ext;
};

Boxes boxes(const py::dict &d, const std::string &p, i64 n) {
    Boxes b;
    b.ptr = data<i64>(d, (p + "_ptr").c_str(), n + 1);
    const size_t count = size_t(b.ptr[n]);
    b.storage = data<i64>(d, (p + "_storage").c_str(), count);
    b.dim_ptr = data<i64>(d, (p + "_dim_ptr").c_str(), count + 1);
    const size_t dims = size_t(b.dim_ptr[count]);
    b.offs = data<i64>(d, (p + "_offs").c_str(), dims);
    b.ext = data<i64>(d, (p + "_ext").c_str(), dims);
    return b;
}

struct Accesses : Boxes {   // the boxes of the reads or the writes, and their tensors
    const i64 *shape;
    const double *itemsize;
    const std::uint8_t *uncached;
};

struct L2 {
    i64 line, max_lines, clock = 0;
    // log2(line) when the line is a power of two, else -1; with whole-byte items a byte
    // offset's line is then a shift (an arithmetic shift floors, as Python's // does)
    i64 shift = -1;
    bool byte_lines = false;   // set per box: shift >= 0 and an integer itemsize
    void set_line(i64 l) {
        line = l;
        shift = -1;
        for (i64 k = 0; k < 62; ++k) if ((i64(1) << k) == l) shift = k;
    }
    std::unordered_map<i64, Storage> states;

    void run(Storage &st, i64 first, i64 last, i64 &hit, i64 &total) {
        i64 n = last + 1 - first;
        i64 old = clock - max_lines;
        i64 h = 0;
        if (first < st.untouched) {
            i64 seen = std::min(last, st.untouched - 1);
            if (seen >= i64(st.stamps.size())) seen = i64(st.stamps.size()) - 1;
            for (i64 k = first; k <= seen; ++k) h += st.stamps[k] >= old;
        }
        clock += n - h;
        if (n > 0) {
            if (last >= i64(st.stamps.size())) st.stamps.resize(last + 1, NEVER);
            std::fill(st.stamps.begin() + first, st.stamps.begin() + last + 1, clock);
        }
        if (last >= st.untouched) st.untouched = last + 1;
        hit += h;
        total += n;
    }

    // (bytes of all the boxes, lines that hit, lines touched, whether any box was cached)
    void access(const Accesses &a, i64 task, double &nbytes, i64 &hit, i64 &total,
                bool &cached) {
        nbytes = 0.0; hit = 0; total = 0; cached = false;
        for (i64 b = a.ptr[task]; b < a.ptr[task + 1]; ++b) {
            const i64 d0 = a.dim_ptr[b], rank = a.dim_ptr[b + 1] - d0;
            const i64 *offs = a.offs + d0, *ext = a.ext + d0, *shape = a.shape + d0;
            const double itemsize = a.itemsize[b];
            byte_lines = shift >= 0 && itemsize == std::floor(itemsize);
            i64 size = 1;
            for (i64 k = 0; k < rank; ++k) size *= ext[k];
            nbytes += double(size) * itemsize;
            if (a.uncached[b]) continue;
            cached = true;
            Storage &st = states[a.storage[b]];
            bool empty = false;
            for (i64 k = 0; k < rank; ++k) empty |= ext[k] == 0;
            if (!rank || empty) {
                // `segments` yields no run; the fast paths of `access` take one-run boxes
                // whatever their extents: one partial row (rank 2, ext[0] == 1) or unit outer
                // dims, a run from the box's first element of ext[-1] elements
                bool one_row = rank == 2 && ext[0] == 1;
                i64 units = 0;
                for (i64 k = 0; k + 1 < rank; ++k) units += ext[k] == 1;
                if (rank && (one_row || units == rank - 1)) {
                    i64 start = 0;
                    for (i64 k = 0; k < rank; ++k) start = start * shape[k] + offs[k];
                    one_run(st, start, ext[rank - 1], itemsize, hit, total);
                }
                continue;
            }
            // dims k+1.. whole: rows of dim k are contiguous with each other
            i64 k = rank - 1;
            while (k > 0 && offs[k] == 0 && ext[k] == shape[k]) --k;
            std::vector<i64> stride(rank, 1);
            for (i64 j = rank - 2; j >= 0; --j) stride[j] = stride[j + 1] * shape[j + 1];
            const i64 length = ext[k] * stride[k];
            // the runs in row-major order of the outer dims 0..k-1 (the last fastest)
            if (k == 1 && byte_lines) {   // NOTE: the common strided box: rows of a matrix
                const i64 isz = i64(itemsize), step = stride[0];
                i64 start = offs[1] * stride[1] + offs[0] * step;
                for (i64 row = 0; row < ext[0]; ++row, start += step)
                    run(st, (start * isz) >> shift, ((start + length) * isz - 1) >> shift, hit,
                        total);
                continue;
            }
            std::vector<i64> idx(k, 0);
            while (true) {
                i64 start = offs[k] * stride[k];
                for (i64 j = 0; j < k; ++j) start += (offs[j] + idx[j]) * stride[j];
                one_run(st, start, length, itemsize, hit, total);
                i64 j = k - 1;
                while (j >= 0 && ++idx[j] == ext[j]) idx[j--] = 0;
                if (j < 0) break;
            }
        }
    }

    void one_run(Storage &st, i64 start, i64 length, double itemsize, i64 &hit, i64 &total) {
        if (shift >= 0 && itemsize == std::floor(itemsize)) {   // integer bytes, 2^k lines
            const i64 isz = i64(itemsize);
            run(st, (start * isz) >> shift, ((start + length) * isz - 1) >> shift, hit, total);
            return;
        }
        // int(x) truncates toward zero, // floors (the Python of `_runs`)
        i64 first = floor_div(i64(std::trunc(double(start) * itemsize)), line);
        i64 last = floor_div(i64(std::trunc(double(start + length) * itemsize - 1)), line);
        run(st, first, last, hit, total);
    }
};

// ---------------------------------------------------------------- the machine
struct Timing {   // `timing.CoreTiming`
    double in_bw, out_bw, head, fill, drain;
    bool cube;
};

// `result.AicpuRun`s as columns (kind 0 build, 1 resolve, 2 dispatch), handed to numpy as
// they are. NOTE: as one vector of structs they grew by doubling and were then copied into
// columns: at 1M tasks (1.5M records) three times their size in fresh pages, faulted in
struct Records {
    std::vector<i64> thread, kind, count, window;
    std::vector<double> start, end;
    size_t size() const { return thread.size(); }
    void reserve(size_t k) {
        thread.reserve(k); kind.reserve(k); count.reserve(k); window.reserve(k);
        start.reserve(k); end.reserve(k);
    }
    void push(i64 th, i64 k, double t0, double t1, i64 c, i64 w) {
        thread.push_back(th); kind.push_back(k); start.push_back(t0); end.push_back(t1);
        count.push_back(c); window.push_back(w);
    }
};

struct Event {   // NOTE: 24 bytes: the heap moves these
    double time;
    std::uint64_t seq;
    i64 code;   // task * 4 + kind: 0 READY, 1 BEGIN, 2 END, 3 DONE
    int kind() const { return int(code & 3); }
    i64 task() const { return code >> 2; }
};
struct Later {
    bool operator()(const Event &a, const Event &b) const {
        return a.time > b.time || (a.time == b.time && a.seq > b.seq);
    }
};

// The END events of the running tasks: one (time, seq) per task, the earliest found by a scan
// when asked after a change, so re-timing a task moves its one END event instead of leaving a
// stale one behind (the Python model raises a new event and skips the stale one: the same
// order, since both order by (time, seq raised)). NOTE: a flat array, not a heap: at most one
// task runs per core, and a bandwidth change re-times most of them at once.
struct Ends {
    std::vector<i64> tasks;   // the tasks with an END event
    std::vector<i64> where;   // per task its index in `tasks`, -1 if absent
    std::vector<double> time;
    std::vector<std::uint64_t> seq;
    i64 first = -1;           // the earliest, valid unless `stale`
    bool stale = false;

    void reset(i64 n) {
        tasks.clear(); where.assign(n, -1); time.assign(n, 0.0); seq.assign(n, 0);
        first = -1; stale = false;
    }
    bool empty() const { return tasks.empty(); }
    bool before(i64 a, i64 b) const {
        return time[a] < time[b] || (time[a] == time[b] && seq[a] < seq[b]);
    }
    void set(i64 p, double t, std::uint64_t s) {
        time[p] = t; seq[p] = s;
        if (where[p] < 0) { where[p] = i64(tasks.size()); tasks.push_back(p); }
        if (stale) return;
        if (first < 0 || (p != first && before(p, first))) first = p;   // (first < 0: it was empty)
        else if (p == first) stale = true;   // it moved: it may no longer be the earliest
    }
    i64 top() {
        if (stale || first < 0) {
            first = tasks[0];
            for (i64 p : tasks) if (before(p, first)) first = p;
            stale = false;
        }
        return first;
    }
    void pop() {   // the earliest one
        const i64 p = top(), k = where[p], last = tasks.back();
        tasks[k] = last; where[last] = k;
        tasks.pop_back(); where[p] = -1;
        first = -1;
        stale = !tasks.empty();   // the next earliest is not known until scanned
    }
};

struct Tasks {
    i64 n;
    const i64 *id, *window, *instance, *pred_ptr, *preds;
    const std::int8_t *kind;
    const std::uint8_t *empty;
    const double *mte2, *mte3, *mte2_moved, *mte3_moved, *mte1_cycles, *cube_cycles,
        *vector_cycles, *fix_cycles;
    Accesses reads, writes;
};

class Simulator {
  public:
    // constants
    i64 aic, aiv, slots, mode, threads;
    std::vector<i64> owner;
    double dispatch_cost, resolve_cost, notice, cold, window_base, instance_cycles,
        edge_cycles, launch_cycles, hbm_bw, l2_bw, l2_capacity;
    Timing timing[2];
    // state across windows
    L2 l2;
    double written = 0.0;
    std::vector<char> warm;
    Records records;                      // builds and scheduler work, in time order
    std::vector<i64> last;                // per thread its last record (-1: none)
    const Tasks &t;
    // outputs per task (task order)
    // per task, written into the numpy arrays returned (no copy)
    py::array_t<i64> core_out;
    py::array_t<double> start_out, end_out, hit_out, hbm_out, ready_out;
    i64 *core_g;
    double *start, *end, *hit, *hbm, *ready;
    std::vector<i64> flow_pred, flow_succ;
    std::vector<i64> win_number, win_instances, win_tasks, win_cross;

    Simulator(const py::dict &c, const Tasks &tasks) : t(tasks) {
        aic = py::cast<i64>(c["aic"]); aiv = py::cast<i64>(c["aiv"]);
        slots = py::cast<i64>(c["slots"]); mode = py::cast<i64>(c["mode"]);
        threads = py::cast<i64>(c["threads"]);
        owner = py::cast<std::vector<i64>>(c["owner"]);
        dispatch_cost = py::cast<double>(c["dispatch_cost"]);
        resolve_cost = py::cast<double>(c["resolve_cost"]);
        notice = py::cast<double>(c["notice"]); cold = py::cast<double>(c["cold"]);
        window_base = py::cast<double>(c["window_base"]);
        instance_cycles = py::cast<double>(c["instance_cycles"]);
        edge_cycles = py::cast<double>(c["edge_cycles"]);
        launch_cycles = py::cast<double>(c["launch_cycles"]);
        hbm_bw = py::cast<double>(c["hbm_bw"]); l2_bw = py::cast<double>(c["l2_bw"]);
        l2_capacity = py::cast<double>(c["l2_capacity"]);
        l2.set_line(py::cast<i64>(c["l2_line"])); l2.max_lines = py::cast<i64>(c["l2_max_lines"]);
        auto tm = py::cast<std::vector<std::vector<double>>>(c["timing"]);
        for (int k = 0; k < 2; ++k)
            timing[k] = Timing{tm[k][0], tm[k][1], tm[k][2], tm[k][3], tm[k][4], k == 0};
        warm.assign(aic + aiv, 0);
        make_shares();
        lineup.resize(aic + aiv);
        i64 most = -1;
        bool negative = false;
        for (i64 i = 0; i < t.n; ++i) { most = std::max(most, t.id[i]); negative |= t.id[i] < 0; }
        dense_ids = !negative && most < 4 * t.n + 1024;
        if (dense_ids) { pos_of.assign(most + 1, -1); pos_window.assign(most + 1, 0); }
        last.assign(threads + 1, -1);
        const i64 n = t.n;
        flow_pred.reserve(size_t(t.pred_ptr[n]));   // (at most one flow per edge)
        // (a dispatch and a resolve per task at most, and a build per window: reserved, not
        // touched, so only the records made fault their pages in)
        records.reserve(2 * size_t(n) + 64);
        flow_succ.reserve(size_t(t.pred_ptr[n]));
        auto column = [n](py::array_t<double> &a, double fill) {
            a = py::array_t<double>(n);
            std::fill(a.mutable_data(), a.mutable_data() + n, fill);
            return a.mutable_data();
        };
        core_out = py::array_t<i64>(n);
        core_g = core_out.mutable_data();
        std::fill(core_g, core_g + n, i64(-1));
        start = column(start_out, NaN); end = column(end_out, 0.0); hit = column(hit_out, 0.0);
        hbm = column(hbm_out, 0.0); ready = column(ready_out, NaN);
    }

    void run_all() {
        // the windows in order, each one's tasks in task order (`simulate._windows`)
        std::map<i64, std::vector<i64>> windows;
        for (i64 i = 0; i < t.n; ++i) windows[t.window[i]].push_back(i);
        double build_end = 0.0, prev_end = 0.0;
        for (auto &[w, members] : windows) {
            Window win(*this, members);
            double start_build = build_end;
            build_end = start_build + (window_base + instance_cycles * double(win.instances)
                                       + edge_cycles * double(win.cross));
            records.push(0, 0, start_build, build_end, 0, w);
            win_number.push_back(w); win_instances.push_back(win.instances);
            win_tasks.push_back(i64(members.size())); win_cross.push_back(win.cross);
            double a = build_end + launch_cycles, b = prev_end + notice;
            double launch = b > a ? b : a;
            prev_end = win.run(launch);
        }
        build_end_ = build_end;
    }
    double build_end_ = 0.0;

    // per core the tasks dispatched to it and not ended (`ModelWindow.lineup`); empty
    // between windows, kept to spare the allocations
    std::vector<std::deque<i64>> lineup;
    // task id -> its position in the current window, when the ids are dense
    bool dense_ids = false;
    i64 window_serial = 0;
    std::vector<i64> pos_of, pos_window;

    // `SchedulerThreads.work`
    std::vector<double> thread_free;
    std::vector<i64> thread_dispatched;
    double work(i64 th, int kind, double now, double cycles, i64 count) {
        double t0 = thread_free[th];
        if (now > t0) t0 = now;
        double t1 = t0 + cycles;
        thread_free[th] = t1;
        i64 r = last[th];
        if (r >= 0 && records.end[r] == t0 && records.kind[r] == kind) {
            records.end[r] = t1;
            records.count[r] += count;
        } else {
            records.push(th, kind, t0, t1, count, -1);
            last[th] = i64(records.size()) - 1;
        }
        if (kind == 2) thread_dispatched[th] += count;
        return t1;
    }

    // per count of sharers n, each one's HBM and L2 share (hbm_bw / n, l2_bw / n)
    std::vector<double> hbm_share, l2_share;
    void make_shares() {
        const i64 most = aic + aiv + 2;
        hbm_share.assign(most + 1, 0.0); l2_share.assign(most + 1, 0.0);
        for (i64 k = 1; k <= most; ++k) {
            hbm_share[k] = hbm_bw / double(k);
            l2_share[k] = l2_bw / double(k);
        }
    }

    // `timing.busy_cycles`. NOTE: a zero byte count skips its division (0 / x is +0.0, and
    // x + 0.0 is x for the non-negative x here: the same value)
    static double busy_cycles(double in_scale, double compute, double out_moved, double t_out,
                              const Timing &core, double hit, double hbm, bool has_out,
                              bool write_back, double hbm_share, double l2_share) {
        double core_bw = core.in_bw, out_core_bw = core.out_bw;
        double in_bw = core_bw <= hbm_share ? core_bw : hbm_share;
        double l2_in_bw = core_bw * 2;
        if (l2_share < l2_in_bw) l2_in_bw = l2_share;
        double moving = hbm != 0.0 ? hbm / in_bw : 0.0;
        if (hit != 0.0) moving = moving + hit / l2_in_bw;
        double busiest = moving * in_scale;
        if (compute > busiest) busiest = compute;
        if (has_out) {
            double out_bw = write_back ? l2_share : hbm_share;
            if (out_core_bw <= out_bw) out_bw = out_core_bw;
            if (out_moved / out_bw > t_out) t_out = out_moved / out_bw;
        }
        return t_out > busiest ? t_out : busiest;
    }

    struct Window {
        Simulator &sim;
        const Tasks &t;
        std::vector<i64> ids;      // global row of each position
        std::vector<int> kinds;
        std::vector<i64> remaining;
        std::vector<i64> succ_ptr, succ;   // successors: succ[succ_ptr[p]..succ_ptr[p+1])
        std::vector<i64> roots;
        i64 instances = 0, cross = 0;
        // run state
        std::priority_queue<Event, std::vector<Event>, Later> events;
        Ends ends;
        std::vector<i64> last_of_core;   // the last task in each core's lineup
        std::uint64_t seq = 0;
        double now = 0.0;
        std::deque<i64> queues[2];
        std::vector<i64> producer;
        std::vector<double> dispatched, free_at;
        std::vector<i64> used;
        std::vector<std::deque<i64>> &lineup;   // the simulator's: empty between windows
        std::vector<char> write_back;
        std::vector<i64> resolved;
        std::vector<i64> retimed;   // scratch of `share`
        // `flow.Flows`: the running set in the order begun (positions in `order`, -1 where a
        // task left, compacted when half are holes), and progress
        std::vector<i64> order, order_at;
        i64 holes = 0;
        std::vector<char> fixed_busy;   // its busiest pipe takes the same time at any share
        i64 running = 0;
        std::vector<double> busy, left, mark, tail_lat;
        std::vector<double> in_scale, compute, out_moved, fix;

        Window(Simulator &s, const std::vector<i64> &members) : sim(s), t(s.t), ids(members), lineup(s.lineup) {
            const i64 n = i64(ids.size());
            // task id -> position (the last one, as a dict keeps it): dense ids index an
            // array stamped with the window's serial, others go through a hash map
            const i64 serial = ++sim.window_serial;
            std::unordered_map<i64, i64> position;
            const bool dense = sim.dense_ids;
            if (!dense) position.reserve(size_t(n) * 2);
            for (i64 p = 0; p < n; ++p) {
                const i64 id = t.id[ids[p]];
                if (dense) { sim.pos_of[id] = p; sim.pos_window[id] = serial; }
                else position[id] = p;
            }
            auto find = [&](i64 id) -> i64 {
                if (dense) {
                    return id >= 0 && id < i64(sim.pos_of.size()) && sim.pos_window[id] == serial
                        ? sim.pos_of[id] : -1;
                }
                auto it = position.find(id);
                return it == position.end() ? -1 : it->second;
            };
            kinds.resize(n); remaining.assign(n, 0); succ_ptr.assign(n + 1, 0);
            std::vector<i64> inst, pred_pos;
            inst.reserve(n);
            for (i64 p = 0; p < n; ++p) {
                const i64 i = ids[p];
                kinds[p] = t.kind[i];
                inst.push_back(t.instance[i]);
                const i64 a = t.pred_ptr[i], b = t.pred_ptr[i + 1];
                if (a == b) { roots.push_back(p); continue; }
                remaining[p] = b - a;
                for (i64 e = a; e < b; ++e) {
                    const i64 j = find(t.preds[e]);
                    if (j < 0)
                        throw std::invalid_argument("simcore: task " + std::to_string(t.id[i])
                                                    + " waits for task "
                                                    + std::to_string(t.preds[e])
                                                    + ", which is not in its window");
                    if (t.instance[ids[j]] != t.instance[i]) ++cross;
                    ++succ_ptr[j + 1];
                    pred_pos.push_back(j);
                }
            }
            // the successors as one CSR, each task's in the order its edges came (the order
            // the Python model appends them)
            for (i64 p = 0; p < n; ++p) succ_ptr[p + 1] += succ_ptr[p];
            succ.resize(size_t(succ_ptr[n]));
            std::vector<i64> fill(succ_ptr.begin(), succ_ptr.end() - 1);
            size_t e = 0;
            for (i64 p = 0; p < n; ++p) {
                const i64 i = ids[p];
                for (i64 k = t.pred_ptr[i]; k < t.pred_ptr[i + 1]; ++k) succ[fill[pred_pos[e++]]++] = p;
            }
            std::sort(inst.begin(), inst.end());
            instances = i64(std::unique(inst.begin(), inst.end()) - inst.begin());
        }

        void schedule(double time, int kind, i64 p) {
            events.push(Event{time, seq++, p * 4 + kind});
        }

        double run(double start) {
            const i64 n = i64(ids.size());
            if (!n) return start;
            const i64 cores = sim.aic + sim.aiv;
            free_at.assign(cores, start); used.assign(cores, 0);
            last_of_core.assign(cores, -1);
            sim.thread_free.assign(sim.threads + 1, start);
            sim.thread_dispatched.assign(sim.threads + 1, 0);
            producer.assign(n, -1); dispatched.assign(n, 0.0);
            write_back.assign(n, 0); order.clear(); order_at.assign(n, -1); fixed_busy.assign(n, 0);
            memo_k.assign(size_t(n) * 4, -1); memo_busy.resize(size_t(n) * 4);
            holes = 0;
            busy.assign(n, 0.0); left.assign(n, 1.0); mark.assign(n, 0.0);
            tail_lat.assign(n, 0.0);
            in_scale.resize(n); compute.resize(n); out_moved.resize(n); fix.resize(n);
            for (i64 p = 0; p < n; ++p) {   // `timing.task_terms`
                const i64 i = ids[p];
                double mte2 = t.mte2[i], moved = t.mte2_moved[i];
                in_scale[p] = (moved > mte2 && mte2 > 0) ? moved / mte2 : 1.0;
                if (kinds[p] == 0) {
                    compute[p] = t.mte1_cycles[i];
                    if (t.cube_cycles[i] >= compute[p]) compute[p] = t.cube_cycles[i];
                } else {
                    compute[p] = t.vector_cycles[i];
                }
                double mte3 = t.mte3[i];
                out_moved[p] = t.mte3_moved[i] > mte3 ? t.mte3_moved[i] : mte3;
                fix[p] = t.fix_cycles[i];
            }
            ends.reset(n);
            retimed.reserve(size_t(sim.aic + sim.aiv) + 1);
            for (i64 p : roots) schedule(start, 0, p);
            while (!events.empty() || !ends.empty()) {
                Event e;
                if (!ends.empty() && (events.empty() || [&] {
                        const Event &top = events.top();
                        const i64 q = ends.top();
                        return ends.time[q] < top.time ||
                               (ends.time[q] == top.time && ends.seq[q] < top.seq);
                    }())) {
                    const i64 q = ends.top();
                    ends.pop();
                    e = Event{ends.time[q], ends.seq[q], q * 4 + 2};
                } else {
                    e = events.top();
                    events.pop();
                }
                now = e.time;
                const i64 p = e.task();
                switch (e.kind()) {
                    case 0:
                        queues[kinds[p]].push_back(p);
                        sim.ready[ids[p]] = now;
                        dispatch(kinds[p]);
                        break;
                    case 1: begin(p); break;
                    case 2: finish_run(p); break;   // (its one END: `Ends` keeps the latest)
                    default: done(p); dispatch(kinds[p]); break;
                }
            }
            // the flows: (pred id, succ id) per edge, preds in the order they were resolved
            for (i64 p : resolved)
                for (i64 k = succ_ptr[p]; k < succ_ptr[p + 1]; ++k) {
                    sim.flow_pred.push_back(t.id[ids[p]]);
                    sim.flow_succ.push_back(t.id[ids[succ[k]]]);
                }
            double last_end = start;
            for (i64 p = 0; p < n; ++p) {
                double e = sim.end[ids[p]];
                if (e > last_end) last_end = e;
            }
            return last_end;
        }

        // NOTE: the running set's size moves by one per begin or end, so a task is asked
        // its pipe time at the same few counts of sharers over and over: the last four
        // answers are kept per task (a slot per count mod 4; the same value a new
        // computation gives, so the timeline is unchanged)
        std::vector<i64> memo_k;
        std::vector<double> memo_busy;
        double busy_at(i64 p, i64 sharers) {
            const size_t slot = size_t(p) * 4 + size_t(sharers & 3);
            if (memo_k[slot] == sharers) return memo_busy[slot];
            memo_k[slot] = sharers;
            return memo_busy[slot] = busy_uncached(p, sharers);
        }

        double busy_uncached(i64 p, i64 sharers) {
            const i64 i = ids[p];
            return busy_cycles(in_scale[p], compute[p], out_moved[p], fix[p], sim.timing[kinds[p]],
                               sim.hit[i], sim.hbm[i], t.mte3[i] != 0.0, write_back[p],
                               sim.hbm_share[sharers], sim.l2_share[sharers]);
        }

        double lead(i64 p) {
            const Timing &c = sim.timing[kinds[p]];
            return t.mte2[ids[p]] != 0.0 ? c.head + c.fill : c.head;
        }
        double tail_of(i64 p) {
            return t.mte3[ids[p]] != 0.0 ? sim.timing[kinds[p]].drain : 0.0;
        }

        void retime_one(i64 p, double e) {
            ends.set(p, e, seq++);
            const i64 g = sim.core_g[ids[p]];
            if (last_of_core[g] == p) free_at[g] = e;
        }

        void share(std::vector<i64> &retimed, i64 sharers) {   // `Flows._share`
            for (i64 j : order) {
                // NOTE: a task whose pipe takes the same time at one sharer as at the most
                // there can be takes it at every count between (each term only grows as the
                // share shrinks): `fresh == busy` would hold, so it is skipped unasked
                if (j < 0 || fixed_busy[j]) continue;
                double fresh = busy_at(j, sharers);
                if (fresh == busy[j]) continue;
                if (now > mark[j]) {
                    double rest = left[j] - (now - mark[j]) / busy[j];
                    if (rest <= 0.0) continue;
                    left[j] = rest;
                    mark[j] = now;
                }
                busy[j] = fresh;
                retimed.push_back(j);
            }
        }

        double end_of(i64 p) { return mark[p] + left[p] * busy[p] + tail_lat[p]; }

        void begin(i64 p) {
            const i64 i = ids[p];
            sim.start[i] = now;
            if (t.empty[i]) {
                retime_one(p, now + sim.timing[kinds[p]].head);
                return;
            }
            tail_lat[p] = tail_of(p);
            mark[p] = now + lead(p);
            retimed.clear();
            share(retimed, running + 1);
            // join the running set at its end
            order_at[p] = i64(order.size());
            order.push_back(p);
            ++running;
            const i64 most = sim.aic + sim.aiv + 1;
            busy[p] = busy_at(p, running);
            fixed_busy[p] = busy_at(p, 1) == busy_at(p, most) && busy[p] == busy_at(p, 1);
            retimed.push_back(p);
            for (i64 j : retimed) retime_one(j, end_of(j));
        }

        void finish_run(i64 p) {   // `ModelWindow.end`
            const i64 i = ids[p], g = sim.core_g[i];
            sim.end[i] = now;
            if (!t.empty[i]) {
                order[order_at[p]] = -1;
                if (2 * ++holes > i64(order.size())) {   // compact, keeping the order
                    i64 k = 0;
                    for (i64 j : order) if (j >= 0) { order_at[j] = k; order[k++] = j; }
                    order.resize(size_t(k));
                    holes = 0;
                }
                --running;
                if (running) {
                    retimed.clear();
                    share(retimed, running);
                    for (i64 j : retimed) retime_one(j, end_of(j));
                }
            }
            auto &line = lineup[g];
            line.pop_front();
            if (!line.empty()) {
                double d = dispatched[line.front()];
                schedule(d > now ? d : now, 1, line.front());
            } else {
                free_at[g] = now;
            }
            schedule(now + sim.notice, 3, p);
        }

        void done(i64 p) {   // `ModelWindow.finish`
            const i64 g = sim.core_g[ids[p]];
            --used[g];
            const i64 count = succ_ptr[p + 1] - succ_ptr[p];
            if (!count) return;
            double cost = sim.resolve_cost * double(count);
            double at = sim.work(sim.owner[g], 1, now, cost, count);
            resolved.push_back(p);
            for (i64 k = succ_ptr[p]; k < succ_ptr[p + 1]; ++k) {
                const i64 s = succ[k];
                --remaining[s];
                producer[s] = kinds[s] == kinds[p] ? g : -1;
                if (remaining[s] == 0) schedule(at, 0, s);
            }
        }

        i64 choose(int ty, i64 prod) {   // `Cores.choose`
            if ((sim.mode & 1) && prod >= 0 && used[prod] == 0) return prod;
            const i64 lo = ty == 0 ? 0 : sim.aic, hi = ty == 0 ? sim.aic : sim.aic + sim.aiv;
            // one pass, the least by (busy slots, [its thread's dispatches,] free_at, index)
            // among the cores with a free slot: the fewest-slots pool's least, as `choose`
            i64 best = -1;
            if (sim.mode & 2) {
                for (i64 g = lo; g < hi; ++g) {
                    if (used[g] >= sim.slots) continue;
                    if (best < 0 || used[g] < used[best]) { best = g; continue; }
                    if (used[g] != used[best]) continue;
                    const i64 a = sim.thread_dispatched[sim.owner[g]],
                              b = sim.thread_dispatched[sim.owner[best]];
                    if (a < b || (a == b && free_at[g] < free_at[best])) best = g;
                }
                return best;
            }
            for (i64 g = lo; g < hi; ++g) {
                const i64 u = used[g];
                if (u >= sim.slots) continue;
                if (best < 0 || u < used[best] || (u == used[best] && free_at[g] < free_at[best]))
                    best = g;
            }
            return best;
        }

        void dispatch(int ty) {
            auto &q = queues[ty];
            const bool lifo = sim.mode & 1;
            while (!q.empty()) {
                i64 p = lifo ? q.back() : q.front();
                i64 g = choose(ty, producer[p]);
                if (g < 0) return;
                if (lifo) q.pop_back(); else q.pop_front();
                start_task(p, g);
            }
        }

        void start_task(i64 p, i64 g) {   // `ModelWindow.start`
            const i64 i = ids[p];
            double d = sim.work(sim.owner[g], 2, now, sim.dispatch_cost, 1);
            dispatched[p] = d;
            // `memory.Memory.serve`
            double reads_total, h = 0.0;
            i64 hit_lines, total_lines;
            bool cached;
            sim.l2.access(t.reads, i, reads_total, hit_lines, total_lines, cached);
            const double mte2 = t.mte2[i], mte3 = t.mte3[i];
            if (total_lines) {
                h = reads_total * double(hit_lines) / double(total_lines);
                if (mte2 <= h) h = mte2;
            }
            bool cached_writes = false;
            if (t.writes.ptr[i + 1] > t.writes.ptr[i]) {
                double wb; i64 wh, wt;
                sim.l2.access(t.writes, i, wb, wh, wt, cached_writes);
            }
            bool wb = cached_writes && sim.written + mte3 <= sim.l2_capacity;
            sim.written += mte3;
            sim.core_g[i] = g; sim.hit[i] = h; sim.hbm[i] = mte2 - h;
            write_back[p] = wb;
            lineup[g].push_back(p);
            last_of_core[g] = p;
            ++used[g];
            double begin_at = d > free_at[g] ? d : free_at[g];
            if (lineup[g].size() == 1) {
                if (!sim.warm[g]) { sim.warm[g] = 1; begin_at += sim.cold; }
                schedule(begin_at, 1, p);
            }
            const Timing &c = sim.timing[kinds[p]];
            double cycles;
            if (t.empty[i]) {
                cycles = c.head;
            } else {
                const i64 sharers = running + 1;
                double b = busy_cycles(in_scale[p], compute[p], out_moved[p], fix[p], c, h,
                                       mte2 - h, mte3 != 0.0, wb, sim.hbm_share[sharers],
                                       sim.l2_share[sharers]);
                cycles = lead(p) + b + tail_of(p);
            }
            free_at[g] = begin_at + cycles;
        }
    };
};

template <typename T>
py::array_t<T> out(const std::vector<T> &v) {
    py::array_t<T> a(v.size());
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

// a vector handed over to numpy without a copy: the array owns it (NOTE: the large outputs,
// flows and records, were copied once more and their fresh pages faulted in twice)
template <typename T>
py::array_t<T> out(std::vector<T> &&v) {
    auto *owned = new std::vector<T>(std::move(v));
    py::capsule free_it(owned, [](void *p) { delete static_cast<std::vector<T> *>(p); });
    return py::array_t<T>({owned->size()}, {sizeof(T)}, owned->data(), free_it);
}

Accesses accesses(const py::dict &d, const std::string &p, i64 n) {
    Accesses a;
    static_cast<Boxes &>(a) = boxes(d, p, n);
    const size_t count = size_t(a.ptr[n]), dims = size_t(a.dim_ptr[count]);
    a.shape = data<i64>(d, (p + "_shape").c_str(), dims);
    a.itemsize = data<double>(d, (p + "_itemsize").c_str(), count);
    a.uncached = data<std::uint8_t>(d, (p + "_uncached").c_str(), count);
    return a;
}

py::dict run(const py::dict &table, const py::dict &constants) {
    std::vector<py::object> keep;
    kept = &keep;
    Tasks t;
    t.n = py::cast<i64>(table["n"]);
    const size_t n = size_t(t.n);
    t.id = data<i64>(table, "id", n);
    t.window = data<i64>(table, "window", n);
    t.instance = data<i64>(table, "instance", n);
    t.kind = data<std::int8_t>(table, "kind", n);
    t.empty = data<std::uint8_t>(table, "empty", n);
    t.mte2 = data<double>(table, "mte2_bytes", n);
    t.mte3 = data<double>(table, "mte3_bytes", n);
    t.mte2_moved = data<double>(table, "mte2_moved", n);
    t.mte3_moved = data<double>(table, "mte3_moved", n);
    t.mte1_cycles = data<double>(table, "mte1_cycles", n);
    t.cube_cycles = data<double>(table, "cube_cycles", n);
    t.vector_cycles = data<double>(table, "vector_cycles", n);
    t.fix_cycles = data<double>(table, "fix_cycles", n);
    t.pred_ptr = data<i64>(table, "pred_ptr", n + 1);
    t.preds = data<i64>(table, "preds", size_t(t.pred_ptr[n]));
    t.reads = accesses(table, "read", t.n);
    t.writes = accesses(table, "write", t.n);
    Simulator sim(constants, t);
    {
        py::gil_scoped_release release;
        sim.run_all();
    }
    // the stats sums over the tasks that ran, in task order (`stats.Tally`)
    double first = std::numeric_limits<double>::infinity(), last = 0.0, busy_aic = 0.0,
           busy_aiv = 0.0, read = 0.0, write = 0.0, hit = 0.0, hbm = 0.0;
    i64 tasks = 0, tasks_aiv = 0, empty = 0;
    for (size_t i = 0; i < n; ++i) {
        if (std::isnan(sim.start[i])) continue;
        if (sim.start[i] < first) first = sim.start[i];
        if (sim.end[i] > last) last = sim.end[i];
        ++tasks;
        tasks_aiv += t.kind[i];
        if (t.kind[i]) busy_aiv += sim.end[i] - sim.start[i];
        else busy_aic += sim.end[i] - sim.start[i];
        empty += t.empty[i];
        read += t.mte2[i];
        write += t.mte3[i];
    }
    for (size_t i = 0; i < n; ++i) if (!std::isnan(sim.start[i])) hit += sim.hit[i];
    for (size_t i = 0; i < n; ++i) if (!std::isnan(sim.start[i])) hbm += sim.hbm[i];
    Records &r = sim.records;
    py::dict o;
    o["core"] = sim.core_out; o["start"] = sim.start_out; o["end"] = sim.end_out;
    o["hit"] = sim.hit_out; o["hbm"] = sim.hbm_out; o["ready"] = sim.ready_out;
    o["flow_pred"] = out(std::move(sim.flow_pred)); o["flow_succ"] = out(std::move(sim.flow_succ));
    o["record_thread"] = out(std::move(r.thread)); o["record_kind"] = out(std::move(r.kind));
    o["record_start"] = out(std::move(r.start)); o["record_end"] = out(std::move(r.end));
    o["record_count"] = out(std::move(r.count)); o["record_window"] = out(std::move(r.window));
    o["window"] = out(sim.win_number); o["window_instances"] = out(sim.win_instances);
    o["window_tasks"] = out(sim.win_tasks); o["window_cross_edges"] = out(sim.win_cross);
    o["build_end"] = sim.build_end_;
    o["tally"] = py::make_tuple(first, last, busy_aic, busy_aiv, tasks, tasks_aiv, empty,
                                read, write, hit, hbm);
    return o;
}


// ---------------------------------------------------------------- stitching's links
// `runtime.instance_links.InstanceLinker.link` transcribed: the dependencies between the instances of one
// window, from the GM boxes their tasks read and write (last writer / readers since, slot
// generations of workspace temps, a root's private workspace). It must find exactly the edges
// the Python one finds (tests/runtime/test_stitch_cores.py): the new predecessors of each task
// are the same set, sorted, minus those it has.
namespace link {

struct Entry {   // the ids of one (root, instance) that accessed one box
    i64 root, instance;
    std::vector<i64> ids;
};
struct Group { std::vector<Entry> entries; };

struct BoxHash {
    size_t operator()(const std::vector<i64> &v) const {
        size_t h = v.size();
        for (i64 x : v) h = h * 1000003u ^ std::hash<i64>()(x);
        return h;
    }
};

constexpr i64 MAX_CELLS = 64;

std::uint64_t mix(std::uint64_t h, i64 x) {
    h ^= std::uint64_t(x) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

// `stitch._BoxIndex`: the accesses of one slot, grouped by box, the boxes on a grid whose
// cell is the first box's extents (at least 1). NOTE: boxes and cells are found by a 64-bit
// hash of their ints, no key built per lookup: a box's candidates are compared exactly, and a
// cell shared by two hashes only adds candidates, which the overlap test filters.
struct Index {
    i64 rank = -1;
    bool mixed = false;                  // boxes of different ranks: every query scans all
    std::unordered_map<std::uint64_t, std::vector<i64>> where;   // hash of offs, ext -> boxes
    std::vector<i64> box_dims;           // per box: offs then ext, from box_at[b]
    std::vector<i64> box_at, box_rank;
    std::vector<Group> groups;
    std::vector<i64> cell;
    std::unordered_map<std::uint64_t, std::vector<i64>> cells;
    std::vector<i64> wide;               // boxes over MAX_CELLS cells: every query sees them
    std::vector<i64> seen;               // per box the query that last saw it
    i64 query = 0;
    i64 lo[16], hi[16], key[16];         // a box's cell range (ranks above 16: no grid)

    bool cells_of(const i64 *offs, const i64 *ext, i64 r) {
        if (r > 16) return false;
        i64 count = 1;
        for (i64 d = 0; d < r; ++d) {
            const i64 e = ext[d] > 1 ? ext[d] : 1;
            lo[d] = floor_div(offs[d], cell[d]);
            hi[d] = floor_div(offs[d] + e - 1, cell[d]);
            count *= hi[d] - lo[d] + 1;
            if (count > MAX_CELLS) return false;
        }
        return true;
    }

    template <typename F>
    void each_cell(i64 r, F f) {   // every cell of lo..hi, by its hash
        for (i64 d = 0; d < r; ++d) key[d] = lo[d];
        while (true) {
            std::uint64_t h = std::uint64_t(r);
            for (i64 d = 0; d < r; ++d) h = mix(h, key[d]);
            f(h);
            i64 d = r - 1;
            while (d >= 0 && ++key[d] > hi[d]) { key[d] = lo[d]; --d; }
            if (d < 0) return;
        }
    }

    static std::uint64_t hash_box(const i64 *offs, const i64 *ext, i64 r) {
        std::uint64_t h = std::uint64_t(r) * 31u;
        for (i64 d = 0; d < r; ++d) h = mix(mix(h, offs[d]), ext[d]);
        return h;
    }

    // NOTE: most slots hold a few boxes (a temp's copy per instance): up to SMALL boxes are
    // found by scanning them, and the hash maps (one allocation per entry) are built only when
    // a slot outgrows that
    static constexpr size_t SMALL = 8;
    bool indexed = false;

    bool same(i64 b, const i64 *offs, const i64 *ext, i64 r) const {
        return box_rank[b] == r && std::equal(offs, offs + r, box_dims.begin() + box_at[b]) &&
               std::equal(ext, ext + r, box_dims.begin() + box_at[b] + r);
    }

    void place(i64 b) {   // box b into the hash maps
        const i64 *offs = box_dims.data() + box_at[b], r = box_rank[b];
        where[hash_box(offs, offs + r, r)].push_back(b);
        if (mixed) return;
        if (cells_of(offs, offs + r, r)) each_cell(r, [&](std::uint64_t k) { cells[k].push_back(b); });
        else wide.push_back(b);
    }

    i64 box_of(const i64 *offs, const i64 *ext, i64 r, bool make) {
        if (indexed) {
            auto it = where.find(hash_box(offs, ext, r));
            if (it != where.end())
                for (i64 b : it->second)
                    if (same(b, offs, ext, r)) return b;
        } else {
            for (i64 b = 0; b < i64(box_rank.size()); ++b)
                if (same(b, offs, ext, r)) return b;
        }
        if (!make) return -1;
        if (rank < 0) {
            rank = r;
            cell.resize(r);
            for (i64 d = 0; d < r; ++d) cell[d] = ext[d] > 1 ? ext[d] : 1;
        }
        mixed = mixed || r != rank;
        const i64 b = i64(box_rank.size());
        box_at.push_back(i64(box_dims.size()));
        box_rank.push_back(r);
        box_dims.insert(box_dims.end(), offs, offs + r);
        box_dims.insert(box_dims.end(), ext, ext + r);
        groups.emplace_back();
        seen.push_back(0);
        if (indexed) {
            place(b);
        } else if (box_rank.size() > SMALL) {
            indexed = true;
            for (i64 k = 0; k <= b; ++k) place(k);
        }
        return b;
    }

    void add(i64 root, i64 instance, i64 id, const i64 *offs, const i64 *ext, i64 r) {
        Group &g = groups[box_of(offs, ext, r, true)];
        for (auto it = g.entries.rbegin(); it != g.entries.rend(); ++it)
            if (it->root == root && it->instance == instance) {
                if (it->ids.back() != id) it->ids.push_back(id);
                return;
            }
        g.entries.push_back(Entry{root, instance, {id}});
    }

    void supersede(i64 instance, const i64 *offs, const i64 *ext, i64 r, i64 keep_root) {
        const i64 b = box_of(offs, ext, r, false);
        if (b < 0) return;
        auto &es = groups[b].entries;
        es.erase(std::remove_if(es.begin(), es.end(), [&](const Entry &e) {
                     return e.root != keep_root && e.instance != instance;
                 }), es.end());
    }

    static bool overlap(const i64 *ao, const i64 *ae, const i64 *bo, const i64 *be, i64 r) {
        for (i64 d = 0; d < r; ++d)
            if (ao[d] >= bo[d] + be[d] || bo[d] >= ao[d] + ae[d]) return false;
        return true;
    }

    // every box `offs, ext` overlaps (a box of another rank always does, `stitch._overlap`)
    template <typename F>
    void overlapping(const i64 *offs, const i64 *ext, i64 r, F f) {
        if (box_rank.empty()) return;
        ++query;
        auto test = [&](i64 b) {
            if (seen[b] == query) return;
            seen[b] = query;
            const i64 *k = box_dims.data() + box_at[b];
            if (box_rank[b] != r || overlap(offs, ext, k, k + r, r)) f(groups[b]);
        };
        if (!indexed || mixed || r != rank || !cells_of(offs, ext, r)) {
            for (i64 b = 0; b < i64(box_rank.size()); ++b) test(b);
            return;
        }
        for (i64 b : wide) test(b);
        each_cell(r, [&](std::uint64_t k) {
            auto it = cells.find(k);
            if (it != cells.end()) for (i64 b : it->second) test(b);
        });
    }
};

struct PairHash {
    size_t operator()(const std::pair<i64, i64> &p) const {
        return std::hash<i64>()(p.first) * 1000003u ^ std::hash<i64>()(p.second);
    }
};

py::dict run(const py::dict &window) {
    std::vector<py::object> keep;
    kept = &keep;
    const i64 n = py::cast<i64>(window["n"]);
    const i64 *id = data<i64>(window, "id", n), *root = data<i64>(window, "root", n),
              *instance = data<i64>(window, "instance", n);
    const i64 *pred_ptr = data<i64>(window, "pred_ptr", n + 1);
    const i64 *preds = data<i64>(window, "preds", size_t(pred_ptr[n]));
    const Boxes reads = boxes(window, "read", n), writes = boxes(window, "write", n);
    // (root, storage) of each root's private workspace; (storage, root) of each creator
    const auto private_pairs = py::cast<std::vector<std::pair<i64, i64>>>(window["private"]);
    const auto creator_pairs = py::cast<std::vector<std::pair<i64, i64>>>(window["creators"]);
    // the windows: rows bounds[w]..bounds[w+1]-1, linked one after another (default: one)
    std::vector<i64> bounds = {0, n};
    if (window.contains("bounds")) bounds = py::cast<std::vector<i64>>(window["bounds"]);
    std::vector<i64> out_ptr(size_t(n) + 1, 0), found;
    i64 cross = 0;
    {
        py::gil_scoped_release release;
        std::unordered_map<std::pair<i64, i64>, char, PairHash> is_private, creates;
        for (auto &p : private_pairs) is_private[p] = 1;
        for (auto &p : creator_pairs) creates[p] = 1;
        // per storage: its slot's current copy (generation), who made it, and the accesses
        // of that copy. NOTE: an older copy is never looked at again, so its indexes are
        // dropped when a new copy starts (`InstanceLinker.link` keys them by (storage, copy))
        struct Slot {
            i64 generation = 0;
            bool made = false;
            std::pair<i64, i64> producer{0, 0};   // (root, instance) that made the copy
            Index reads, writes;
        };
        std::unordered_map<i64, Slot> slots;
        std::vector<i64> deps, have;
        size_t next_window = 1;
        for (i64 t = 0; t < n; ++t) {
            while (next_window < bounds.size() && t >= bounds[next_window]) {
                // a new window: nothing links across windows (they run one after another)
                slots.clear();
                ++next_window;
            }
            const i64 me = instance[t], r = root[t];
            for (i64 a = writes.ptr[t]; a < writes.ptr[t + 1]; ++a) {
                const i64 sid = writes.storage[a];
                if (creates.count({sid, r})) {
                    Slot &s = slots[sid];
                    if (!s.made || s.producer != std::make_pair(r, me)) {
                        s.made = true;
                        s.producer = {r, me};
                        ++s.generation;
                        s.reads = Index();
                        s.writes = Index();
                    }
                }
            }
            deps.clear();
            auto collect = [&](Index &index, const Boxes &b, i64 a) {
                const bool own_root = is_private.count({r, b.storage[a]}) > 0;
                const i64 d0 = b.dim_ptr[a], rank = b.dim_ptr[a + 1] - d0;
                index.overlapping(b.offs + d0, b.ext + d0, rank, [&](const Group &g) {
                    for (const Entry &e : g.entries)
                        if (!(own_root && e.root == r) && e.instance != me)
                            deps.insert(deps.end(), e.ids.begin(), e.ids.end());
                });
            };
            for (i64 a = reads.ptr[t]; a < reads.ptr[t + 1]; ++a)
                collect(slots[reads.storage[a]].writes, reads, a);
            for (i64 a = writes.ptr[t]; a < writes.ptr[t + 1]; ++a) {
                Slot &s = slots[writes.storage[a]];
                collect(s.writes, writes, a);
                collect(s.reads, writes, a);
            }
            // the new predecessors: sorted, without those it has
            std::sort(deps.begin(), deps.end());
            deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
            have.assign(preds + pred_ptr[t], preds + pred_ptr[t + 1]);
            std::sort(have.begin(), have.end());
            for (i64 x : deps)
                if (!std::binary_search(have.begin(), have.end(), x)) found.push_back(x);
            out_ptr[t + 1] = i64(found.size());
            cross += out_ptr[t + 1] - out_ptr[t];
            for (i64 a = reads.ptr[t]; a < reads.ptr[t + 1]; ++a) {
                const i64 d0 = reads.dim_ptr[a];
                slots[reads.storage[a]].reads.add(r, me, id[t], reads.offs + d0, reads.ext + d0,
                                                  reads.dim_ptr[a + 1] - d0);
            }
            for (i64 a = writes.ptr[t]; a < writes.ptr[t + 1]; ++a) {
                const i64 sid = writes.storage[a], d0 = writes.dim_ptr[a],
                          rank = writes.dim_ptr[a + 1] - d0;
                Slot &s = slots[sid];
                // a root's private workspace keeps its own root's accesses (-1: no root)
                const i64 keep_root = is_private.count({r, sid}) ? r : i64(-1);
                s.reads.supersede(me, writes.offs + d0, writes.ext + d0, rank, keep_root);
                s.writes.supersede(me, writes.offs + d0, writes.ext + d0, rank, keep_root);
                s.writes.add(r, me, id[t], writes.offs + d0, writes.ext + d0, rank);
            }
        }
    }
    // and every task's predecessors: those it had, then the new ones
    std::vector<i64> all_ptr(size_t(n) + 1, 0), all;
    all.reserve(size_t(pred_ptr[n]) + found.size());
    for (i64 t = 0; t < n; ++t) {
        all.insert(all.end(), preds + pred_ptr[t], preds + pred_ptr[t + 1]);
        all.insert(all.end(), found.begin() + out_ptr[t], found.begin() + out_ptr[t + 1]);
        all_ptr[t + 1] = i64(all.size());
    }
    py::dict o;
    o["pred_ptr"] = out(out_ptr);
    o["preds"] = out(found);
    o["all_pred_ptr"] = out(all_ptr);
    o["all_preds"] = out(all);
    o["cross_edges"] = cross;
    return o;
}

}  // namespace link

}  // namespace

PYBIND11_MODULE(_simcore, m) {
    m.doc() = "The compiled simulator core (see machine/compiled.py)";
    m.def("run", &run, py::arg("table"), py::arg("constants"));
    m.def("link", &link::run, py::arg("window"));
#ifdef SIMCORE_SOURCE
    m.attr("SOURCE") = SIMCORE_SOURCE;   // the hash of this file it was built from (setup.py)
#else
    m.attr("SOURCE") = "";
#endif
}
