// mutation_oracle.h — what the mutation test (test_sim_mutation.cpp) knows of a program from its
// text alone, independently of the simulator: the bytes each instruction names (docs/isa.md),
// facts per region, and a static happens-before: the program run untimed, queue by queue, with
// flags and semaphores as tokens consumed in order and barriers as joins (the ordering the ISA
// promises whatever the timing), used to decide whether a mutation changed the order of any two
// conflicting accesses.
#ifndef GS_MUTATION_ORACLE_H
#define GS_MUTATION_ORACLE_H

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "prog.h"
}

using Lists = std::vector<std::vector<GsInst>>;

// ---- what the program text says: accesses and regions ----

struct Access {
  uint32_t r, tile;
  bool write;
  int64_t lo, hi;  // the bytes named
};

inline int64_t esize(const GsInst &in) { return arch_dtype_bytes((GsDtype)in.dtype); }

// One side of a mov: [off, off + (planes-1)·pstride + (rows-1)·stride + row) with 0 = default.
inline Access mov_side(const GsInst &in, bool dst) {
  int64_t bytes = inst_mov_bytes(&in), rows = std::max<int64_t>(1, inst_mov_rows(&in));
  int64_t planes = std::max<int64_t>(1, inst_mov_planes(&in)), row = bytes / (rows * planes);
  int64_t off = dst ? inst_mov_dst_off(&in) : inst_mov_src_off(&in);
  int64_t st = dst ? inst_mov_dst_stride(&in) : inst_mov_src_stride(&in);
  int64_t ps = dst ? inst_mov_dst_pstride(&in) : inst_mov_src_pstride(&in);
  if (!st) st = row;
  if (!ps) ps = rows * st;
  int i = dst ? 0 : 1;
  return Access{in.r[i], in.t[i], dst, off, off + (planes - 1) * ps + (rows - 1) * st + row};
}

// The regions an instruction reads and writes, with the bytes the ISA says it touches
// (docs/isa.md): gemm a a_elems (0: m×k), b k×n, dst m×n; vec a a_elems (0: elems), b b_elems, dst from
// dst_off one result per element or per group; a gather's index list idx_bytes.
inline std::vector<Access> accesses(const GsInst &in) {
  std::vector<Access> v;
  int64_t es = esize(in);
  if (in.op == I_MOV) {
    if (in.r[2]) v.push_back(Access{in.r[2], in.t[2], false, 0, inst_mov_idx_bytes(&in)});
    v.push_back(mov_side(in, false));
    v.push_back(mov_side(in, true));
  } else if (in.op == I_GEMM) {
    int64_t m = inst_gemm_m(&in), n = inst_gemm_n(&in), k = inst_gemm_k(&in);
    int64_t an = inst_gemm_a_elems(&in) ? inst_gemm_a_elems(&in) : m * k;  // packed taps
    v.push_back(Access{in.r[1], in.t[1], false, 0, an * es});
    v.push_back(Access{in.r[2], in.t[2], false, 0, k * n * es});
    if (in.flags & 1) v.push_back(Access{in.r[0], in.t[0], false, 0, m * n * es});
    v.push_back(Access{in.r[0], in.t[0], true, 0, m * n * es});
  } else if (in.op == I_VEC) {
    GsVop op = (GsVop)in.sub;
    int64_t e = inst_vec_elems(&in), p = inst_vec_param(&in), d = inst_vec_dst_off(&in);
    int64_t an = inst_vec_a_elems(&in) ? inst_vec_a_elems(&in) : e;
    v.push_back(Access{in.r[1], in.t[1], false, 0, an * es});
    if (in.r[2]) v.push_back(Access{in.r[2], in.t[2], false, 0, inst_vec_b_elems(&in) * es});
    v.push_back(Access{in.r[0], in.t[0], true, d, d + isa_vop_out_elems(op, e, p) * es});
  }
  return v;
}

inline bool is_sync(int op) {
  return op == I_SIGNAL || op == I_WAIT || op == I_BARRIER || op == I_SEMPOST || op == I_SEMWAIT;
}

struct RegionFacts {
  bool read = false, written = false, freed = false;
  std::set<uint32_t> tiles;   // every tile written into it, and its initial one
  int64_t extent = 0;         // the last byte any named access reaches, + 1
  int level = -1, aq = -1;    // its buffer level; the queue and index of its alloc
  int64_t bytes = 0;          // its size (the last alloc's)
  int64_t buf = -1, boff = 0; // its buffer (level, cluster, core as one key) and offset there
  std::vector<std::pair<int64_t, int64_t>> reads;  // the bytes each named read reaches
  size_t ai = 0;
  std::set<int> free_queues;  // the queues that free it
};

inline std::map<uint32_t, RegionFacts> region_facts(const Lists &L) {
  std::map<uint32_t, RegionFacts> f;
  for (size_t q = 0; q < L.size(); q++)
    for (size_t i = 0; i < L[q].size(); i++) {
      const GsInst &in = L[q][i];
      if (in.op == I_ALLOC) {
        RegionFacts &g = f[in.r[0]];
        g.level = in.sub;
        g.bytes = inst_alloc_bytes(&in);
        g.boff = inst_alloc_offset(&in);
        g.buf = in.sub == LVL_DDR ? 0 : (in.sub * 4096 + inst_alloc_cluster(&in)) * 65536 + (in.sub == LVL_LB ? inst_alloc_core(&in) : 0);
        g.aq = (int)q;
        g.ai = i;
        if (in.t[0]) g.tiles.insert(in.t[0]);
      } else if (in.op == I_FREE) {
        f[in.r[0]].freed = true;
        f[in.r[0]].free_queues.insert((int)q);
      }
      for (const Access &a : accesses(in)) {
        RegionFacts &g = f[a.r];
        (a.write ? g.written : g.read) = true;
        if (a.write) g.tiles.insert(a.tile);
        g.extent = std::max(g.extent, a.hi);
        if (!a.write) g.reads.push_back({a.lo, a.hi});
      }
    }
  return f;
}

// The program's outputs the emitter marked (alloc final=), checked against a rule of the
// program text: a DDR region that transfers write and no instruction reads or frees, whose
// writes all name one tile, must be marked with that tile. Returns how many are marked, or -1
// (with the region in *missed) when the emitter missed one.
inline int count_outputs(const Lists &L, const std::map<uint32_t, RegionFacts> &f, uint32_t *missed) {
  int n = 0;
  for (const auto &q : L)
    for (const GsInst &in : q) {
      if (in.op != I_ALLOC) continue;
      n += in.t[1] != 0;
      const RegionFacts &g = f.at(in.r[0]);
      if (in.sub != LVL_DDR || !g.written || g.read || g.freed || g.tiles.size() != 1) continue;
      if (in.t[1] != *g.tiles.begin()) {
        *missed = in.r[0];
        return -1;
      }
    }
  return n;
}

// Does a named read of region g reach any byte of [lo, hi)?
inline bool bytes_read(const RegionFacts &g, int64_t lo, int64_t hi) {
  for (const auto &r : g.reads)
    if (r.first < hi && lo < r.second) return true;
  return false;
}

// ---- static happens-before ----

using Clock = std::vector<uint32_t>;

// The program run untimed: every queue as far as it can, round robin, until none can move.
// clk[q][i]: queue q's clock at its instruction i. The k-th consumption of a flag or semaphore
// is ordered after its k-th release only while its releases are ordered among themselves (then
// every timing pairs them so); from the first release that is not ordered after the one before
// it, the flag or semaphore orders nothing here (which release a consumption takes would depend
// on timing).
struct StaticHb {
  bool deadlock = false;
  std::vector<std::vector<Clock>> clk;
  std::vector<std::vector<uint32_t>> own;  // q's own epoch at instruction i
  bool ordered(int qa, size_t ia, int qb, size_t ib) const {
    if (qa == qb) return ia < ib;
    return clk[(size_t)qb][ib][(size_t)qa] >= own[(size_t)qa][ia];
  }
};

inline void join_into(Clock &c, const Clock &t) {
  for (size_t i = 0; i < c.size(); i++) c[i] = std::max(c[i], t[i]);
}

// The key of a flag (target queue, flag) or a semaphore/barrier (scope, cluster, id).
inline std::string sync_key(const GsProgram *p, int q, const GsInst &in) {
  const GsQueue &Q = p->queues[q];
  char k[96];
  if (in.op == I_SIGNAL)
    snprintf(k, sizeof k, "f%d.%lld", prog_find_queue(p, Q.cluster, Q.core, in.sub), (long long)inst_signal_flag(&in));
  else if (in.op == I_WAIT) snprintf(k, sizeof k, "f%d.%lld", q, (long long)inst_wait_flag(&in));
  else snprintf(k, sizeof k, "%c%d.%lld", in.op == I_BARRIER ? 'b' : 's', in.sub == SCOPE_CHIP ? -1 : Q.cluster,
                (long long)(in.op == I_BARRIER ? inst_barrier_id(&in) : in.op == I_SEMPOST ? inst_sempost_id(&in) : inst_semwait_id(&in)));
  return k;
}

struct SyncState {
  std::map<std::string, std::deque<Clock>> tokens;
  std::map<std::string, std::pair<int, uint32_t>> last;  // the last release: queue, epoch
  std::set<std::string> ambiguous;                       // releases not ordered among themselves
  struct Bar {
    std::vector<int> arrived;
    Clock join;
  };
  std::map<std::string, Bar> bars;
  std::vector<char> at_barrier;
};

// One step of queue q (its instruction at pc); false when it cannot move now.
inline bool hb_step(const GsProgram *p, const Lists &L, int q, std::vector<size_t> &pc,
                    std::vector<Clock> &C, SyncState &st, StaticHb &h) {
  size_t n = C.size();
  const GsInst &in = L[(size_t)q][pc[(size_t)q]];
  Clock &c = C[(size_t)q];
  if (!is_sync(in.op)) {
    h.clk[(size_t)q][pc[(size_t)q]] = c;
    h.own[(size_t)q][pc[(size_t)q]] = c[(size_t)q];
  } else if (in.op == I_SIGNAL || in.op == I_SEMPOST) {
    std::string k = sync_key(p, q, in);
    auto prev = st.last.find(k);
    if (prev != st.last.end() && prev->second.first != q && c[(size_t)prev->second.first] < prev->second.second)
      st.ambiguous.insert(k);
    st.last[k] = {q, c[(size_t)q]};
    st.tokens[k].push_back(st.ambiguous.count(k) ? Clock(n, 0) : c);
    c[(size_t)q]++;
  } else if (in.op == I_WAIT || in.op == I_SEMWAIT) {
    std::deque<Clock> &t = st.tokens[sync_key(p, q, in)];
    if (t.empty()) return false;
    join_into(c, t.front());
    t.pop_front();
  } else {  // a barrier: arrive once, then move when the episode completes
    SyncState::Bar &b = st.bars[sync_key(p, q, in)];
    if (!st.at_barrier[(size_t)q]) {
      st.at_barrier[(size_t)q] = 1;
      b.join.resize(n, 0);
      join_into(b.join, c);
      c[(size_t)q]++;
      b.arrived.push_back(q);
      if ((int64_t)b.arrived.size() == inst_barrier_count(&in)) {
        for (int a : b.arrived) {
          join_into(C[(size_t)a], b.join);
          st.at_barrier[(size_t)a] = 0;
          pc[(size_t)a]++;
        }
        b = SyncState::Bar();
        return true;
      }
    }
    return false;
  }
  pc[(size_t)q]++;
  return true;
}

inline StaticHb static_hb(const GsProgram *p, const Lists &L) {
  size_t n = L.size();
  StaticHb h;
  SyncState st;
  h.clk.resize(n);
  h.own.resize(n);
  std::vector<Clock> C(n, Clock(n, 0));
  for (size_t q = 0; q < n; q++) {
    h.clk[q].resize(L[q].size());
    h.own[q].resize(L[q].size());
    C[q][q] = 1;
  }
  std::vector<size_t> pc(n, 0);
  st.at_barrier.assign(n, 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t q = 0; q < n; q++)
      while (pc[q] < L[q].size() && hb_step(p, L, (int)q, pc, C, st, h)) moved = true;
  }
  for (size_t q = 0; q < n; q++) h.deadlock |= pc[q] < L[q].size();
  return h;
}

// Every pair of accesses of one region from two queues that conflict (a write and an access of
// a common byte, or an alloc/free and any access): +1 when the first (in queue order) happens
// before the second, -1 the reverse, 0 unordered. `pos` maps an instruction (queue, index of the
// program the pairs are listed for) to its index in the program h was computed for.
struct Touch {
  int q;
  size_t i;
  bool write;
  int64_t lo, hi;  // hi = INT64_MAX: the whole region
};

inline std::map<uint32_t, std::vector<Touch>> touches(const Lists &L) {
  std::map<uint32_t, std::vector<Touch>> t;
  for (size_t q = 0; q < L.size(); q++)
    for (size_t i = 0; i < L[q].size(); i++) {
      const GsInst &in = L[q][i];
      if (in.op == I_ALLOC || in.op == I_FREE) t[in.r[0]].push_back(Touch{(int)q, i, true, 0, INT64_MAX});
      for (const Access &a : accesses(in))
        t[a.r].push_back(Touch{(int)q, i, a.write, a.lo, a.hi});
    }
  return t;
}

// Does the mutant (its static happens-before hm, with instruction positions mapped by pos) order
// every conflicting pair of the original (ho) in the same direction?
template <class Pos>
bool same_order(const Lists &L, const StaticHb &ho, const StaticHb &hm, Pos pos) {
  for (const auto &reg : touches(L)) {
    const std::vector<Touch> &v = reg.second;
    for (size_t a = 0; a < v.size(); a++) {
      if (!v[a].write) continue;
      for (size_t b = 0; b < v.size(); b++) {
        const Touch &x = v[a], &y = v[b];
        if (x.q == y.q || (y.write && b < a) || x.hi <= y.lo || y.hi <= x.lo) continue;
        int d0 = ho.ordered(x.q, x.i, y.q, y.i) ? 1 : ho.ordered(y.q, y.i, x.q, x.i) ? -1 : 0;
        size_t xi = pos(x.q, x.i), yi = pos(y.q, y.i);
        int d1 = hm.ordered(x.q, xi, y.q, yi) ? 1 : hm.ordered(y.q, yi, x.q, xi) ? -1 : 0;
        if (d0 != d1) { if (getenv("MUT_DEBUG")) fprintf(stderr, "# pair r%u q%d#%zu q%d#%zu d0=%d d1=%d\n", reg.first, x.q, x.i, y.q, y.i, d0, d1); return false; }
      }
    }
  }
  return true;
}

#endif
