// simtest.h — helpers for the simulator tests: tiny.cfg's machine as a GsArch built by hand
// (every value below is the one in configs/tiny.cfg, so hand calculations in the tests use the
// same numbers), and a small builder for programs.
#ifndef GS_SIMTEST_H
#define GS_SIMTEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

#include <cstring>
#include <string>

#include "sim.h"

// SystemC's main() calls this (each test program defines it).
extern "C" int sc_main(int argc, char **argv);
#include "timing.h"

// configs/tiny.cfg, field by field.
static inline void tiny_arch(GsArch *a) {
  memset(a, 0, sizeof *a);
  a->name = "tiny";
  a->clock_mhz = 1000;
  a->nclusters = 2;
  a->cluster_link_bytes_per_cycle = 16;
  a->cluster_link_latency_cycles = 10;
  a->chunk_bytes = 2048;  // tiny.cfg sets it: the hand derivations assume 2 KiB chunks
  a->ddr_channels = 2;
  a->ddr_bandwidth_gb_per_s = 32;
  a->ddr_latency_ns = 100;
  a->ddr_burst_bytes = 64;
  a->ddr_capacity_bytes = 1024LL << 20;
  a->ddr_interleave_bytes = 256;
  a->gb_bytes = 256 << 10;
  a->gb_ports = 2;
  a->gb_port_bytes_per_cycle = 32;
  a->gb_latency_cycles = 10;
  a->noc_link_bytes_per_cycle = 16;
  a->noc_latency_cycles = 5;
  a->dma_engines = 2;
  a->dma_latency_cycles = 20;
  a->ncore_kinds = 1;
  GsCoreKind *k = &a->core_kinds[0];
  k->name = "pe";
  k->count = 2;
  k->lb_bytes = 64 << 10;
  k->lb_ports = 2;
  k->lb_port_bytes_per_cycle = 64;
  k->lb_latency_cycles = 2;
  k->nunits = 3;
  k->unit[0] = 0;
  k->unit[1] = 1;
  k->unit[2] = 2;
  k->dma_engines = 1;
  a->nunit_kinds = 3;
  GsUnitKind *m = &a->units[0];
  m->name = "mme";
  m->caps = CAP_MATRIX;
  m->shape = MAT_CUBE;
  m->cube_m = m->cube_n = m->cube_k = 4;
  m->mac_rate[DT_FP16] = 1;
  m->mac_rate[DT_INT8] = 2;
  m->matrix_latency_cycles = 8;
  GsUnitKind *v = &a->units[1];
  v->name = "vec";
  v->caps = CAP_VECTOR;
  v->lanes[DT_FP16] = 16;
  v->lanes[DT_FP32] = 8;
  v->lanes[DT_INT8] = 32;
  v->op_cost[VC_SIMPLE] = 1;
  v->op_cost[VC_MUL] = 1;
  v->op_cost[VC_DIV] = 4;
  v->op_cost[VC_TRANSC] = 8;
  v->op_cost[VC_REDUCE] = 2;
  v->vector_latency_cycles = 4;
  GsUnitKind *s = &a->units[2];
  s->name = "scl";
  s->caps = CAP_SCALAR;
  s->scalar_ops_per_cycle = 1;
  a->cores_per_cluster = 2;
  a->ddr_bytes_per_cycle = 32;    // 32 GB/s * 1e3 / 1000 MHz
  a->ddr_latency_cycles = 100;    // 100 ns at 1 GHz
}

// A deterministic random generator for the generated programs (xorshift64*, no time seed).
struct SimtestRng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  int64_t below(int64_t n) { return (int64_t)(next() % (uint64_t)n); }
};

// tiny.cfg's queue indices on a core: 0 dma_in, 1 dma_out, 2 mme, 3 vec, 4 scl.
enum { TQ_IN = 0, TQ_OUT = 1, TQ_MME = 2, TQ_VEC = 3, TQ_SCL = 4 };

// A queue of a program under construction, by its coordinates: prog_queue() may move the
// queue array when it creates another queue, so a GsQueue pointer is looked up at each use.
struct QRef {
  int cluster, core, index;
};

// A program under construction.
struct Prog {
  GsProgram *p = prog_new();
  ~Prog() { prog_free(p); }
  QRef q(int cluster, int core, int index) {
    prog_queue(p, cluster, core, index);
    return QRef{cluster, core, index};
  }
  uint32_t region(const char *name) { return prog_new_region(p, name); }
  uint32_t tile(const char *name) { return prog_new_tile(p, name); }
  GsInst *emit(QRef q, GsOpcode op) {
    GsInst *in = prog_emit(prog_queue(p, q.cluster, q.core, q.index));
    in->op = (uint8_t)op;
    return in;
  }
  void alloc(QRef q, uint32_t r, GsLevel lvl, int cluster, int core, int64_t off, int64_t bytes,
             uint32_t init = 0) {
    GsInst *in = emit(q, I_ALLOC);
    in->r[0] = r;
    in->sub = (uint8_t)lvl;
    inst_alloc_set_cluster(in, cluster);
    inst_alloc_set_core(in, core);
    inst_alloc_set_offset(in, off);
    inst_alloc_set_bytes(in, bytes);
    in->t[0] = init;
  }
  void free_(QRef q, uint32_t r) { emit(q, I_FREE)->r[0] = r; }
  GsInst *mov(QRef q, uint32_t dst, uint32_t dtile, uint32_t src, uint32_t stile, int64_t bytes) {
    GsInst *in = emit(q, I_MOV);
    in->r[0] = dst;
    in->t[0] = dtile;
    in->r[1] = src;
    in->t[1] = stile;
    inst_mov_set_bytes(in, bytes);
    return in;
  }
  GsInst *gemm(QRef q, uint32_t d, uint32_t dt, uint32_t a, uint32_t at, uint32_t b, uint32_t bt,
               int64_t m, int64_t n, int64_t k, GsDtype t) {
    GsInst *in = emit(q, I_GEMM);
    in->r[0] = d; in->t[0] = dt; in->r[1] = a; in->t[1] = at; in->r[2] = b; in->t[2] = bt;
    inst_gemm_set_m(in, m); inst_gemm_set_n(in, n); inst_gemm_set_k(in, k);
    in->dtype = (uint8_t)t;
    return in;
  }
  GsInst *vec(QRef q, GsVop op, uint32_t d, uint32_t dt, uint32_t a, uint32_t at, int64_t elems,
              GsDtype t, uint32_t b = 0, uint32_t bt = 0) {
    GsInst *in = emit(q, I_VEC);
    in->sub = (uint8_t)op;
    in->r[0] = d; in->t[0] = dt; in->r[1] = a; in->t[1] = at; in->r[2] = b; in->t[2] = bt;
    inst_vec_set_elems(in, elems);
    if (b) inst_vec_set_b_elems(in, elems);  // b as large as a unless the test says otherwise
    in->dtype = (uint8_t)t;
    return in;
  }
  void scalar(QRef q, int64_t ops) { inst_scalar_set_ops(emit(q, I_SCALAR), ops); }
  void signal(QRef q, int target, int64_t flag) {
    GsInst *in = emit(q, I_SIGNAL);
    in->sub = (uint8_t)target;
    inst_signal_set_flag(in, flag);
  }
  void wait(QRef q, int64_t flag) { inst_wait_set_flag(emit(q, I_WAIT), flag); }
  void barrier(QRef q, GsScope s, int64_t id, int64_t count) {
    GsInst *in = emit(q, I_BARRIER);
    in->sub = (uint8_t)s;
    inst_barrier_set_id(in, id);
    inst_barrier_set_count(in, count);
  }
  void sem(QRef q, bool post, GsScope s, int64_t id) {
    GsInst *in = emit(q, post ? I_SEMPOST : I_SEMWAIT);
    in->sub = (uint8_t)s;
    if (post) inst_sempost_set_id(in, id);
    else inst_semwait_set_id(in, id);
  }
};

// A test program's sc_main on tiny.cfg's machine: *sim elaborated for *arch, the tests run,
// the simulator deleted (SystemC elaborates once per process).
template <size_t N>
int simtest_main_tiny(GsArch *arch, Simulator **sim, const CMUnitTest (&tests)[N]) {
  tiny_arch(arch);
  *sim = new Simulator(arch);
  int rc = _cmocka_run_group_tests("tests", tests, N, NULL, NULL);
  delete *sim;
  return rc;
}

#endif
