// test_sim_mutation.cpp — the mutation test: the simulator must report every fault
// it can see in a scheduler's program. Programs: two small models (tests/cases/gtg: tiny_cnn,
// and all_ops with every op kind) × tvm, astitch, graphturbo × three configs (tiny; goya, whose
// GEMM core has no LB or DMA and is fed by cluster DMA and semaphores; stcp920, with a GB and
// cluster DMA), each scheduled, then mutated one fault at a time, of fifteen kinds: a deleted
// wait, signal, semwait, sempost or barrier; two neighbouring instructions swapped; a written or
// a read tile changed; a transfer's destination or source offset moved by a row; an allocation
// shrunk, or moved onto a live one; a free moved to just after its allocation; a load or a
// store deleted. Up to 6 of each kind a program, chosen by a fixed-seed generator.
//
// The waits and signals the emitter folds into instructions are written out as instructions of
// their own first (lists_of), so a deleted wait or signal is one of them too.
//
// Oracle. Every run is made with the checks on a thread and inline, which must agree (simulate).
// The unmutated program must run cleanly. A mutant is reported (exit 2), or survives
// (exit 0); every survivor must be classified by an argument made here from the program text
// alone, never from the simulator:
//   benign      the mutation cannot change what any instruction reads: two neighbours that
//               commute (no synchronisation between them, no region one writes, allocates or
//               frees that the other touches, no overlapping bytes allocated or freed), two
//               releases or two acquires swapped, an allocation shrunk past every byte any
//               instruction names, a free moved early for a region nothing accesses, a changed
//               write of bytes (or a region) that no instruction reads and no output holds
//               (every operand an instruction reads is named with its extent: isa.def);
//   gap: position  a source offset moved inside a region whose every write (and initial tile)
//               is the tile the read expects: the ISA names which tile a region holds, not
//               which part of it an access should read (docs/timing.md, "Tiles per byte range").
// Anything else is unexplained and fails the test. The programs' outputs are the ones the
// emitter marks (alloc final=); the test checks them against its own rule from the program text:
// a DDR region that transfers write and no instruction reads or frees, its writes all one tile.
//
// SystemC elaborates once per process: each config runs in a child process.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "simtest.h"

extern "C" {
#include "graph.h"
#include "lower.h"
}

enum Kind {
  K_DEL_WAIT, K_DEL_SIGNAL, K_DEL_SEMWAIT, K_DEL_SEMPOST, K_DEL_BARRIER, K_SWAP, K_DST_TILE,
  K_SRC_TILE, K_DST_OFF, K_SRC_OFF, K_SHRINK, K_OVERLAP, K_EARLY_FREE, K_DEL_LOAD, K_DEL_STORE,
  K_COUNT
};
static const char *const kKindName[K_COUNT] = {
    "delete wait", "delete signal", "delete semwait", "delete sempost", "delete barrier",
    "swap neighbours", "change written tile", "change read tile", "move dst offset",
    "move src offset", "shrink allocation", "overlap allocation", "early free", "delete load",
    "delete store"};
enum Outcome { O_REPORTED, O_BENIGN, O_GAPPOS, O_UNEXPLAINED, O_COUNT };
static const char *const kOutcomeName[O_COUNT] = {"reported", "benign", "gap: position", "UNEXPLAINED"};
enum { PER_KIND = 6 };

#include "mutation_oracle.h"

// ---- mutations ----


struct Mutant {
  Kind kind;
  size_t q, i;     // the instruction mutated (swap: i and i + 1; early free: the free)
  size_t to = 0;   // early free: where the free goes
  int64_t value = 0;
};

// Is region r marked as a program output (alloc final=) in L?
static bool is_output(const Lists &L, uint32_t r) {
  for (const auto &q : L)
    for (const GsInst &in : q)
      if (in.op == I_ALLOC && in.r[0] == r && in.t[1]) return true;
  return false;
}

static bool writes_region(const GsInst &in) { return in.op == I_MOV || in.op == I_GEMM || in.op == I_VEC; }

static bool is_store(const GsInst &in, const std::map<uint32_t, RegionFacts> &f) {
  return in.op == I_MOV && f.at(in.r[0]).level == LVL_DDR;
}

// The row of a mov (the unit its offsets move by).
static int64_t mov_row(const GsInst &in) {
  int64_t rows = std::max<int64_t>(1, inst_mov_rows(&in)), planes = std::max<int64_t>(1, inst_mov_planes(&in));
  return inst_mov_bytes(&in) / (rows * planes);
}

// The offset `dst ? dst_off : src_off` moved by a row inside the region, or -1 when it cannot.
static int64_t moved_offset(const GsInst &in, bool dst, int64_t region_bytes) {
  Access a = mov_side(in, dst);
  int64_t d = mov_row(in), off = dst ? inst_mov_dst_off(&in) : inst_mov_src_off(&in);
  if (a.hi + d <= region_bytes) return off + d;
  return off >= d ? off - d : -1;
}

// The nearest earlier alloc in the same queue of the same buffer as the alloc at L[q][i], which
// is freed only later in this queue (or never): it is live when the alloc at i runs.
static int live_neighbour(const Lists &L, size_t q, size_t i, const std::map<uint32_t, RegionFacts> &f) {
  const GsInst &b = L[q][i];
  for (size_t j = i; j-- > 0;) {
    const GsInst &a = L[q][j];
    if (a.op != I_ALLOC || a.sub != b.sub || a.sub == LVL_DDR ||
        inst_alloc_cluster(&a) != inst_alloc_cluster(&b) ||
        (a.sub == LVL_LB && inst_alloc_core(&a) != inst_alloc_core(&b)))
      continue;
    const RegionFacts &g = f.at(a.r[0]);
    bool freed_before = false;
    for (size_t k = j + 1; k < i; k++) freed_before |= L[q][k].op == I_FREE && L[q][k].r[0] == a.r[0];
    bool other_queue = g.free_queues.size() > (g.free_queues.count((int)q) ? 1u : 0u);
    if (!freed_before && !other_queue) return (int)j;
  }
  return -1;
}

// Every candidate of `kind` in the program; a Mutant each.
static std::vector<Mutant> candidates(Kind kind, const Lists &L, const std::map<uint32_t, RegionFacts> &f) {
  static const int del_op[] = {I_WAIT, I_SIGNAL, I_SEMWAIT, I_SEMPOST, I_BARRIER};
  std::vector<Mutant> v;
  for (size_t q = 0; q < L.size(); q++)
    for (size_t i = 0; i < L[q].size(); i++) {
      const GsInst &in = L[q][i];
      Mutant m{kind, q, i};
      bool ok = false;
      switch (kind) {
      case K_DEL_WAIT: case K_DEL_SIGNAL: case K_DEL_SEMWAIT: case K_DEL_SEMPOST: case K_DEL_BARRIER:
        ok = in.op == del_op[kind - K_DEL_WAIT]; break;
      case K_SWAP: ok = i + 1 < L[q].size() && memcmp(&in, &L[q][i + 1], sizeof in) != 0; break;
      case K_DST_TILE: ok = writes_region(in); break;
      case K_SRC_TILE: ok = writes_region(in); m.value = in.r[2] && (i & 1) ? 2 : 1; break;
      case K_DST_OFF: case K_SRC_OFF: {
        if (in.op != I_MOV) break;
        bool dst = kind == K_DST_OFF;
        m.value = moved_offset(in, dst, f.at(in.r[dst ? 0 : 1]).bytes);
        ok = m.value >= 0;
        break;
      }
      case K_SHRINK:
        if (in.op == I_ALLOC) m.value = inst_alloc_bytes(&in) / 2 / 64 * 64;
        ok = m.value > 0;
        break;
      case K_OVERLAP: {
        if (in.op != I_ALLOC) break;
        int j = live_neighbour(L, q, i, f);
        ok = j >= 0 && inst_alloc_offset(&L[q][(size_t)j]) != inst_alloc_offset(&in);
        if (ok) m.value = inst_alloc_offset(&L[q][(size_t)j]);
        break;
      }
      case K_EARLY_FREE: {
        if (in.op != I_FREE) break;
        const RegionFacts &g = f.at(in.r[0]);
        m.to = g.aq == (int)q && g.ai < i ? g.ai + 1 : 0;
        ok = m.to < i;
        break;
      }
      case K_DEL_LOAD: ok = in.op == I_MOV && !is_store(in, f); break;
      case K_DEL_STORE: ok = is_store(in, f); break;
      default: break;
      }
      if (ok) v.push_back(m);
    }
  return v;
}

// The program with mutant m applied.
static Lists apply(const Lists &L, const Mutant &m, uint32_t spare_tile) {
  Lists M = L;
  std::vector<GsInst> &Q = M[m.q];
  GsInst &in = Q[m.i];
  switch (m.kind) {
  case K_SWAP: std::swap(Q[m.i], Q[m.i + 1]); break;
  case K_DST_TILE: in.t[0] = spare_tile; break;
  case K_SRC_TILE: in.t[m.value] = spare_tile; break;
  case K_DST_OFF: inst_mov_set_dst_off(&in, m.value); break;
  case K_SRC_OFF: inst_mov_set_src_off(&in, m.value); break;
  case K_SHRINK: inst_alloc_set_bytes(&in, m.value); break;
  case K_OVERLAP: inst_alloc_set_offset(&in, m.value); break;
  case K_EARLY_FREE: {
    GsInst f = in;
    Q.erase(Q.begin() + (ptrdiff_t)m.i);
    Q.insert(Q.begin() + (ptrdiff_t)m.to, f);
    break;
  }
  default: Q.erase(Q.begin() + (ptrdiff_t)m.i); break;  // the deletions
  }
  return M;
}

// ---- classifying a survivor (the header comment's arguments) ----

// Two instructions conflict: one writes, allocates or frees bytes of a region the other
// touches (by the bytes each names; an alloc or free: all of the region), or
// both allocate or free overlapping bytes of one buffer.
static bool conflict(const GsInst &a, const GsInst &b, const std::map<uint32_t, RegionFacts> &f) {
  auto touched = [](const GsInst &x) {
    std::vector<Access> t = accesses(x);
    if (x.op == I_ALLOC || x.op == I_FREE) t.push_back(Access{x.r[0], 0, true, 0, INT64_MAX});
    return t;
  };
  for (const Access &x : touched(a))
    for (const Access &y : touched(b))
      if (x.r == y.r && (x.write || y.write) && x.lo < y.hi && y.lo < x.hi)
        return true;
  bool bk_a = a.op == I_ALLOC || a.op == I_FREE, bk_b = b.op == I_ALLOC || b.op == I_FREE;
  if (!bk_a || !bk_b) return false;
  const RegionFacts &x = f.at(a.r[0]), &y = f.at(b.r[0]);
  return x.buf == y.buf && x.boff < y.boff + y.bytes && y.boff < x.boff + x.bytes;
}

// A swap of neighbours i, i+1 of queue q: benign when they do not conflict and either neither is
// synchronisation (they commute) or the static happens-before of the mutant orders every
// conflicting pair of accesses of the program as the original's does (and does not deadlock).
static Outcome classify_swap(const Mutant &m, const Lists &L, const Lists &M, const GsProgram *p,
                             const std::map<uint32_t, RegionFacts> &f, const StaticHb &ho) {
  const GsInst &a = L[m.q][m.i], &b = L[m.q][m.i + 1];
  if (conflict(a, b, f)) return O_UNEXPLAINED;
  if (!is_sync(a.op) && !is_sync(b.op)) return O_BENIGN;
  StaticHb hm = static_hb(p, M);
  if (hm.deadlock) return O_UNEXPLAINED;
  auto pos = [&](int q, size_t i) {
    if ((size_t)q != m.q || (i != m.i && i != m.i + 1)) return i;
    return i == m.i ? m.i + 1 : m.i;
  };
  return same_order(L, ho, hm, pos) ? O_BENIGN : O_UNEXPLAINED;
}

// A changed or missing write (its bytes [lo, hi) of region r): benign when no named read of the
// region reaches them (or no instruction reads the region at all), or when the next instructions
// of its queue overwrite them before any synchronisation or read. A program output is never
// benign.
static Outcome classify_write(const Lists &L, const Mutant &m, uint32_t r, int64_t lo, int64_t hi,
                              const std::map<uint32_t, RegionFacts> &f, bool output) {
  const RegionFacts &g = f.at(r);
  if (output) return O_UNEXPLAINED;
  if (!g.read) return O_BENIGN;  // no instruction reads the region (and it is no output)
  for (size_t j = m.i + 1; j < L[m.q].size(); j++) {  // overwritten before anyone could read it?
    const GsInst &x = L[m.q][j];
    if (is_sync(x.op)) break;
    bool read = false, covers = false;
    for (const Access &a : accesses(x))
      if (a.r == r) (a.write ? covers : read) |= a.write ? a.lo <= lo && a.hi >= hi : a.lo < hi && lo < a.hi;
    if (read) break;
    if (covers) return O_BENIGN;
  }
  return bytes_read(g, lo, hi) ? O_UNEXPLAINED : O_BENIGN;
}

static Outcome classify(const Mutant &m, const Lists &L, const Lists &M, const GsProgram *p,
                        const std::map<uint32_t, RegionFacts> &f, const StaticHb &ho) {
  const GsInst &in = L[m.q][m.i];
  switch (m.kind) {
  case K_SWAP: return classify_swap(m, L, M, p, f, ho);
  case K_DST_TILE: case K_DEL_LOAD: case K_DEL_STORE: case K_DST_OFF: {
    Access w = in.op == I_MOV ? mov_side(in, true) : accesses(in).back();
    int64_t lo = w.lo, hi = w.hi;
    if (m.kind == K_DST_OFF) hi += m.value > inst_mov_dst_off(&in) ? m.value - inst_mov_dst_off(&in) : 0;
    if (m.kind == K_DST_OFF) lo -= m.value < inst_mov_dst_off(&in) ? inst_mov_dst_off(&in) - m.value : 0;
    return classify_write(L, m, in.r[0], lo, hi, f, in.op == I_MOV && L[m.q][m.i].t[0] && is_output(L, in.r[0]));
  }
  case K_SRC_OFF: {
    const RegionFacts &g = f.at(in.r[1]);
    return g.tiles.size() == 1 && *g.tiles.begin() == in.t[1] ? O_GAPPOS : O_UNEXPLAINED;
  }
  case K_SHRINK: {
    const RegionFacts &g = f.at(in.r[0]);
    return g.extent > m.value ? O_UNEXPLAINED : O_BENIGN;
  }
  case K_EARLY_FREE: {
    const RegionFacts &g = f.at(in.r[0]);
    return !g.read && !g.written ? O_BENIGN : O_UNEXPLAINED;
  }
  default: return O_UNEXPLAINED;  // deleted synchronisation, an overlap with a live region
  }
}

// ---- running ----

// A GsProgram of instruction lists: the header and names of `base`, its own queues.
struct View {
  GsProgram p;
  std::vector<GsQueue> qs;
  View(const GsProgram *base, Lists &L) : p(*base), qs(base->queues, base->queues + base->nqueues) {
    for (size_t i = 0; i < qs.size(); i++) {
      qs[i].code = nullptr;
      qs[i].ninsts = qs[i].ncopied = 0;  // every instruction its own (L holds the copies too)
      qs[i].copies = nullptr;
      for (const GsInst &in : L[i]) *prog_emit(&qs[i]) = in;
    }
    p.queues = qs.data();
  }
  ~View() {
    for (GsQueue &q : qs) prog_queue_code_free(&q);
  }
  View(const View &) = delete;
  View &operator=(const View &) = delete;
};

// Every program runs twice: with the memory and race checks on a thread of their own, as the
// command line runs them, and inline on the simulating thread (sim/checker.h). The two must
// agree on the verdict, the message (which names the first failing access, its instruction and
// cycle) and, for a clean run, the cycles.
static SimResult simulate(Simulator *sim, const GsProgram *base, Lists &L) {
  View v(base, L);
  SimOptions o;
  SimResult r, inl;
  sim->run(&v.p, o, &r);
  o.checks_thread = false;
  sim->run(&v.p, o, &inl);
  if (r.status != inl.status || r.message != inl.message || r.cycles != inl.cycles)
    throw std::runtime_error("the checks on a thread and inline disagree:\n" + r.message +
                             "(" + std::to_string(r.cycles) + " cycles)\n---\n" + inl.message +
                             "(" + std::to_string(inl.cycles) + " cycles)");
  return r;
}

struct Tally {
  int n[K_COUNT][O_COUNT] = {};
  int programs = 0, outputs = 0;
  std::vector<std::string> unexplained;
};

// The program's queues with every wait and signal an instruction carries (GsInst) written out
// as a `wait` before it and a `signal` after it, the same program by the ISA's definition
// (docs/isa.md): the mutations delete and swap waits and signals as instructions.
static Lists lists_of(const GsProgram *p) {
  Lists L((size_t)p->nqueues);
  for (int i = 0; i < p->nqueues; i++) {
    GsInst *d = prog_queue_array(&p->queues[i]);
    for (int64_t k = 0; k < p->queues[i].ninsts; k++) {
      GsInst in = d[k], sig = {}, sig2 = {};
      for (uint8_t f : {in.wait, in.wait2}) {  // (wait2 only with wait, waited on after it)
        if (!f) continue;
        GsInst w = {};
        w.op = I_WAIT;
        inst_wait_set_flag(&w, f - 1);
        L[(size_t)i].push_back(w);
      }
      if (in.signal) {
        sig.op = I_SIGNAL;
        sig.sub = (uint8_t)(in.signal - 1);
        inst_signal_set_flag(&sig, in.signal_flag);
      }
      if (in.signal2) {  // (signal2 only with signal, signalled after it)
        sig2.op = I_SIGNAL;
        sig2.sub = (uint8_t)(in.signal2 - 1);
        inst_signal_set_flag(&sig2, in.signal2_flag);
      }
      in.wait = in.wait2 = in.signal = in.signal_flag = in.signal2 = in.signal2_flag = 0;
      L[(size_t)i].push_back(in);
      if (sig.op == I_SIGNAL) L[(size_t)i].push_back(sig);
      if (sig2.op == I_SIGNAL) L[(size_t)i].push_back(sig2);
    }
    free(d);
  }
  return L;
}

static std::string describe(const Mutant &m, const Lists &L, const GsProgram *p, const GsArch *a,
                            const char *prog) {
  char qn[64], text[512];
  gtasm_queue_name(a, &p->queues[m.q], qn, sizeof qn);
  gtasm_inst_format(a, p, &L[m.q][m.i], text, sizeof text);
  std::string s = std::string(prog) + ": " + kKindName[m.kind] + " at " + qn + " #" + std::to_string(m.i) +
                  " (" + text + ")";
  if (m.kind == K_SWAP) {
    gtasm_inst_format(a, p, &L[m.q][m.i + 1], text, sizeof text);
    s += " with (" + std::string(text) + ")";
  }
  return s;
}

// Schedules `model` with strategy s, checks the unmutated program, then runs up to PER_KIND
// mutants of each kind and tallies them.
static void mutate_program(Simulator *sim, const GsArch *a, const char *model, GsSchedKind s, Tally *t) {
  GsDiag d;
  diag_init(&d);
  std::string path = std::string("tests/cases/gtg/") + model + ".gtg";
  char *text = util_read_file(path.c_str(), NULL);
  GsGraph *g = text ? gtg_parse(path.c_str(), text, &d) : nullptr;
  if (g && std::string(a->name) == "goya" && graph_cast(g, DT_INT8, &d) != 0)  // Goya: no fp16
    throw std::runtime_error(path + " does not cast to int8");
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = s;
  o.batch = a->nclusters;
  GsLowered *l = g ? lower_run(g, a, &o, &d) : nullptr;
  if (!l) throw std::runtime_error(path + " does not schedule under " + lower_sched_name(s));
  uint32_t spare = prog_new_tile(l->prog, "mutant");  // a tile no instruction writes
  Lists L = lists_of(l->prog);
  std::map<uint32_t, RegionFacts> facts = region_facts(L);
  uint32_t missed = 0;
  int outs = count_outputs(L, facts, &missed);
  if (outs <= 0)
    throw std::runtime_error(path + ": the emitter did not mark output region r" + std::to_string(missed) +
                             " (alloc final=) under " + lower_sched_name(s));
  t->outputs += outs;
  SimResult base = simulate(sim, l->prog, L);
  if (base.status) throw std::runtime_error(path + " unmutated: " + base.message);
  std::string name = std::string(model) + "/" + lower_sched_name(s) + "/" + (a->name ? a->name : "?");
  StaticHb ho = static_hb(l->prog, L);
  if (ho.deadlock) throw std::runtime_error(path + ": the static happens-before deadlocks");
  SimtestRng rng{0x9e3779b97f4a7c15ull ^ (uint64_t)s ^ ((uint64_t)L.size() << 20)};
  for (int k = 0; k < K_COUNT; k++) {
    std::vector<Mutant> c = candidates((Kind)k, L, facts);
    for (int j = 0; j < PER_KIND && !c.empty(); j++) {
      size_t pick = (size_t)(rng.next() % c.size());
      Mutant m = c[pick];
      c.erase(c.begin() + (ptrdiff_t)pick);
      Lists M = apply(L, m, spare);
      SimResult r = simulate(sim, l->prog, M);
      Outcome out = r.status == 2 ? O_REPORTED
                    : r.status == 0 ? classify(m, L, M, l->prog, facts, ho) : O_UNEXPLAINED;
      t->n[k][out]++;
      if (getenv("MUT_SHOW") && out != O_REPORTED)
        fprintf(stderr, "# %s: %s\n", kOutcomeName[out], describe(m, L, l->prog, a, name.c_str()).c_str());
      if (out == O_UNEXPLAINED)
        t->unexplained.push_back(describe(m, L, l->prog, a, name.c_str()) + ": exit " +
                                 std::to_string(r.status) + " " + r.message.substr(0, 300));
    }
  }
  t->programs++;
  lower_free(l);
  graph_free(g);
  free(text);
}

// One config in this process: every model and strategy; the tally as text lines on `out`.
static int run_config(const char *cfg, FILE *out) {
  GsDiag d;
  diag_init(&d);
  GsArch *a = arch_load(cfg, NULL, 0, &d);
  if (!a) return 1;
  Simulator sim(a);
  Tally t;
  static const char *const models[] = {"tiny_cnn", "all_ops"};
  try {
    for (const char *m : models)
      for (int s = 0; s < SCHED_COUNT; s++) mutate_program(&sim, a, m, (GsSchedKind)s, &t);
  } catch (const std::exception &e) {
    fprintf(out, "error %s\n", e.what());
    return 1;
  }
  fprintf(out, "programs %d outputs %d\n", t.programs, t.outputs);
  for (int k = 0; k < K_COUNT; k++)
    for (int o = 0; o < O_COUNT; o++) fprintf(out, "n %d %d %d\n", k, o, t.n[k][o]);
  for (const std::string &u : t.unexplained) fprintf(out, "u %s\n", u.c_str());
  return 0;
}

// ---- the test: a child process per config (SystemC elaborates once per process) ----

struct Totals {
  int n[K_COUNT][O_COUNT] = {};
  int programs = 0, outputs = 0;
  std::vector<std::string> unexplained, errors;
};

// Runs config `cfg` in a child and adds what it printed to *t.
static void child(const char *cfg, Totals *t) {
  char path[] = "/tmp/gtsim_mutation_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    FILE *out = fdopen(fd, "w");
    int rc = run_config(cfg, out);
    fclose(out);
    _exit(rc);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  FILE *in = fdopen(fd, "r");
  rewind(in);
  char line[2048];
  while (fgets(line, sizeof line, in)) {
    int k, o, n, p, q;
    if (sscanf(line, "n %d %d %d", &k, &o, &n) == 3) t->n[k][o] += n;
    else if (sscanf(line, "programs %d outputs %d", &p, &q) == 2) t->programs += p, t->outputs += q;
    else if (line[0] == 'u') t->unexplained.push_back(line + 2);
    else if (line[0] == 'e') t->errors.push_back(std::string(cfg) + ": " + (line + 6));
  }
  fclose(in);
  unlink(path);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    t->errors.push_back(std::string(cfg) + ": the child ended with status " + std::to_string(st));
}

static void every_fault_reported_or_explained(void **) {
  Totals t;
  for (const char *cfg : {"configs/tiny.cfg", "configs/goya.cfg", "configs/stcp920.cfg"}) child(cfg, &t);
  for (const std::string &e : t.errors) fprintf(stderr, "# error: %s\n", e.c_str());
  assert_true(t.errors.empty());
  int total = 0, by_outcome[O_COUNT] = {};
  printf("# %d programs (%d outputs marked); mutants by kind: reported / benign / "
         "gap: position / unexplained\n", t.programs,
         t.outputs);
  for (int k = 0; k < K_COUNT; k++) {
    printf("#   %-20s", kKindName[k]);
    for (int o = 0; o < O_COUNT; o++) {
      printf(" %4d", t.n[k][o]);
      total += t.n[k][o];
      by_outcome[o] += t.n[k][o];
    }
    printf("\n");
  }
  printf("# %d mutants:", total);
  for (int o = 0; o < O_COUNT; o++) printf(" %s %d%s", kOutcomeName[o], by_outcome[o], o + 1 < O_COUNT ? "," : "\n");
  for (const std::string &u : t.unexplained) printf("# unexplained: %s", u.c_str());
  assert_true(total >= 1000);
  assert_int_equal(by_outcome[O_UNEXPLAINED], 0);
}

int sc_main(int, char **) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_fault_reported_or_explained),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
