/* isa_tiny_arch.h — configs/tiny.cfg as a GtArch filled by hand, for the ISA tests (they must
 * not depend on the config parser). Values copied from configs/tiny.cfg; only the fields the
 * assembler and program_check read matter, the rest are filled for completeness. A second
 * core kind "gemm" (no LB, one matrix unit) is added when `hetero` is set, to test queue names
 * across core kinds (like Goya's TPC + GEMM cores). */
#ifndef ISA_TINY_ARCH_H
#define ISA_TINY_ARCH_H
#include <string.h>

#include "arch.h"

static inline void tiny_arch(GtArch *a, int hetero) {
  memset(a, 0, sizeof *a);
  a->name = "tiny";
  a->clock_mhz = 1000;
  a->nclusters = 2;
  a->ddr_channels = 2;
  a->gb_bytes = 256 * 1024;
  a->dma_engines = 2;
  a->nunit_kinds = 3;
  GtUnitKind *m = &a->units[0], *v = &a->units[1], *s = &a->units[2];
  m->name = "mme";
  m->caps = CAP_MATRIX;
  m->shape = MAT_CUBE;
  m->cube_m = m->cube_n = m->cube_k = 4;
  m->mac_rate[DT_FP16] = 1;
  m->mac_rate[DT_INT8] = 2;
  v->name = "vec";
  v->caps = CAP_VECTOR;
  v->lanes[DT_FP16] = 16;
  v->lanes[DT_FP32] = 8;
  v->lanes[DT_INT8] = 32;
  s->name = "scl";
  s->caps = CAP_SCALAR;
  s->scalar_ops_per_cycle = 1;
  GtCoreKind *k = &a->core_kinds[0];
  k->name = "pe";
  k->count = 2;
  k->lb_bytes = 64 * 1024;
  k->nunits = 3;
  k->unit[0] = 0;
  k->unit[1] = 1;
  k->unit[2] = 2;
  k->dma_engines = 1;
  a->ncore_kinds = 1;
  if (hetero) {
    GtCoreKind *g = &a->core_kinds[1];
    g->name = "gemm";
    g->count = 1;
    g->lb_bytes = 0;
    g->nunits = 2;
    g->unit[0] = 0; /* mme */
    g->unit[1] = 0; /* a second mme: queue name mme.1 */
    a->ncore_kinds = 2;
  }
  a->cores_per_cluster = hetero ? 3 : 2;
}
#endif
