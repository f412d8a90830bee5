/* test_arch.c — architecture configs: peak figures of every shipped config against values
 * computed here by hand from the published figures (the configs' sources
 * named next to each), derived fields, core numbering, --set overrides, defaults,
 * arch_load_string, error collection and the describe round trip.
 * Run from the repository root (tests/run.sh does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diag_testlib.h"
#include "arch.h"

/* |got - want| <= rel * |want| */
#define assert_close(got, want, rel)                                                         \
  do {                                                                                       \
    double g_ = (got), w_ = (want);                                                          \
    if (!(g_ - w_ <= (rel) * (w_ < 0 ? -w_ : w_) && w_ - g_ <= (rel) * (w_ < 0 ? -w_ : w_))) \
      fail_msg("%s = %.17g, expected %.17g", #got, g_, w_);                                  \
  } while (0)
#define EXACT 1e-12

static GsArch *load(const char *path) {
  GsDiag d;
  diag_init(&d);
  d.max_errors = 20;
  GsArch *a = arch_load(path, NULL, 0, &d);
  if (!a) fail_msg("%s does not load", path);
  return a;
}

static GsArch *load_set(const char *path, const char *const *sets, int n) {
  GsDiag d;
  diag_init(&d);
  d.max_errors = 20;
  GsArch *a = arch_load(path, sets, n, &d);
  if (!a) fail_msg("%s with --set does not load", path);
  return a;
}

static const GsUnitKind *unit_named(const GsArch *a, const char *name) {
  for (int i = 0; i < a->nunit_kinds; i++)
    if (strcmp(a->units[i].name, name) == 0) return &a->units[i];
  fail_msg("no unit kind %s", name);
  return NULL;
}

/* STCP920 (GraphTurbo Eq. (2) [S1]; NeuralScale, CARRV'21 [S13]): d = 4 clusters, c = 8
 * cores, MME 64x32 = 2048 fp16 MAC/cycle, 4096 int8, 1 GHz, 136 GB/s DDR, 64 KiB LB,
 * 8 MiB LLB per cluster. */
static void test_stcp920(void **state) {
  (void)state;
  GsArch *a = load("configs/stcp920.cfg");
  double fp16 = 4.0 * 8 * (64 * 32) * 2 * 1e9; /* = 131.072e12 */
  assert_close(arch_peak_flops(a, DT_FP16), fp16, EXACT);
  assert_close(arch_peak_flops(a, DT_INT8), 2 * fp16, EXACT);
  /* vendor headline [S13]: 128 TFLOPS fp16, 256 TOPS int8 (rounded down) */
  assert_close(arch_peak_flops(a, DT_FP16), 128e12, 0.025);
  assert_close(arch_peak_flops(a, DT_INT8), 256e12, 0.025);
  assert_close(arch_peak_macs_per_cycle(a, DT_FP16), 32.0 * 2048, EXACT);
  assert_int_equal(a->nclusters * a->cores_per_cluster, 32);
  assert_int_equal(a->core_kinds[0].lb_bytes, 64 * 1024);
  assert_int_equal(a->gb_bytes, 8 * 1024 * 1024);
  assert_close(a->ddr_bytes_per_cycle, 136e9 / 1e9, EXACT); /* 136 B/cycle at 1 GHz */
  assert_int_equal(a->ddr_channels, 4);
  assert_close(arch_peak_flops(a, DT_FP32), 0, EXACT); /* the MME has no fp32 */
  const GsUnitKind *vme = unit_named(a, "vme");
  assert_int_equal(vme->lanes[DT_FP16], 64); /* [S13] 64 fp16 MACs/cycle */
  arch_free(a);
}

/* Same chip with the per-core buffers of [S13] Table 6: 1 MiB + 256 KiB + 256 KiB. */
static void test_stcp920_hw(void **state) {
  (void)state;
  GsArch *a = load("configs/stcp920-hw.cfg");
  GsArch *p = load("configs/stcp920.cfg");
  assert_int_equal(a->core_kinds[0].lb_bytes, 1024 * 1024 + 256 * 1024 + 256 * 1024);
  assert_close(arch_peak_flops(a, DT_FP16), arch_peak_flops(p, DT_FP16), EXACT);
  assert_close(a->ddr_bytes_per_cycle, p->ddr_bytes_per_cycle, EXACT);
  assert_int_equal(a->gb_bytes, p->gb_bytes);
  arch_free(a);
  arch_free(p);
}

/* Ascend 910 (Hot Chips 31 [S2]): 32 cores, cube 16x16x16 = 4096 fp16 MAC/cycle, int8
 * 8192; published 256 TFLOPS fp16 / 512 TOPS int8 at ~1 GHz; HBM 1.2 TB/s; 32 MiB L2. */
static void test_ascend910(void **state) {
  (void)state;
  GsArch *a = load("configs/ascend910.cfg");
  double fp16 = 32.0 * (16 * 16 * 16) * 2 * 1e9; /* = 262.1e12 */
  assert_close(arch_peak_flops(a, DT_FP16), fp16, EXACT);
  double f = arch_peak_flops(a, DT_FP16);
  assert_true(f >= 256e12 && f <= 268e12); /* the acceptance band */
  assert_close(arch_peak_flops(a, DT_INT8), 512e12, 0.03);
  assert_close(a->ddr_bytes_per_cycle, 1.2e12 / 1e9, EXACT);
  assert_int_equal(a->gb_bytes, 32 * 1024 * 1024);
  const GsUnitKind *v = unit_named(a, "vector");
  assert_int_equal(v->lanes[DT_FP16], 2048 / 16); /* 2048-bit vector [S2] */
  assert_int_equal(v->lanes[DT_INT8], 2048 / 8);
  assert_int_equal(v->lanes[DT_FP32], 2048 / 32);
  arch_free(a);
}

/* Ascend 310 ([S4]): 2 cores, 8 TFLOPS fp16, 16 TOPS int8; 8 MiB L2 ([S6] l2_size). */
static void test_ascend310(void **state) {
  (void)state;
  GsArch *a = load("configs/ascend310.cfg");
  assert_close(arch_peak_flops(a, DT_FP16), 2.0 * 2048 * 2 * 1e9, EXACT);
  assert_close(arch_peak_flops(a, DT_FP16), 8e12, 0.03);
  assert_close(arch_peak_flops(a, DT_INT8), 16e12, 0.03);
  assert_int_equal(a->gb_bytes, 8388608);
  /* UB exposed to tiling is 253952 B [S6]: L1 + L0A + L0B + L0C + UB */
  assert_int_equal(a->core_kinds[0].lb_bytes, 1048576 + 65536 + 65536 + 262144 + 253952);
  arch_free(a);
}

/* Goya (GraphTurbo Fig. 1 [S1]; habanalabs driver [S8]): one cluster of 8 TPC cores with LB
 * and 1 GEMM core without LB; cores numbered by core kind in file order. */
static void test_goya_numbering(void **state) {
  (void)state;
  GsArch *a = load("configs/goya.cfg");
  assert_int_equal(a->nclusters, 1);
  assert_int_equal(a->cores_per_cluster, 8 + 1);
  for (int c = 0; c < 8; c++) {
    assert_int_equal(arch_core_kind_of(a, c), 0);
    assert_string_equal(arch_core(a, c)->name, "tpc");
    assert_int_equal(arch_core(a, c)->lb_bytes, 81 * 1024);
    const GsUnitKind *u = &a->units[arch_core(a, c)->unit[0]];
    assert_true(u->caps == CAP_VECTOR);
  }
  assert_int_equal(arch_core_kind_of(a, 8), 1);
  const GsCoreKind *g = arch_core(a, 8);
  assert_string_equal(g->name, "gemm");
  assert_int_equal(g->lb_bytes, 0);
  assert_int_equal(g->nunits, 1);
  assert_true(a->units[g->unit[0]].caps == CAP_MATRIX);
  assert_int_equal(a->dma_engines, 5); /* DMA_MAX_NUM [S8] */
  /* 1.575 GHz [S8]; 100 ns -> ceil(157.5) = 158 cycles */
  assert_int_equal(a->ddr_latency_cycles, 158);
  assert_close(a->ddr_bytes_per_cycle, 42.656e9 / 1.575e9, EXACT);
  /* SRAM 0x32A0000 bytes [S8] minus the 32 KiB the driver reserves */
  assert_int_equal(a->gb_bytes, 0x32A0000 - 32 * 1024);
  /* TPC: 2048-bit SIMD = 256 int8 lanes [S12]; 8 TPCs */
  const GsUnitKind *vpu = unit_named(a, "vpu");
  assert_int_equal(vpu->lanes[DT_INT8] * 8, 2048);
  assert_close(arch_peak_flops(a, DT_INT8), 65536.0 * 2 * 1.575e9, EXACT);
  arch_free(a);
}

/* IPU GC2 on a C2 card ([S14], GraphTurbo Fig. 1): 2 IPUs x 1216 tiles, 256 KiB per tile,
 * no GB; 124.5 TFLOPS fp16 and 31.1 TFLOPS fp32 per IPU. */
static void test_ipu_gc2(void **state) {
  (void)state;
  GsArch *a = load("configs/ipu-gc2.cfg");
  assert_int_equal(a->nclusters, 2);
  assert_int_equal(a->cores_per_cluster, 1216);
  assert_int_equal(a->gb_bytes, 0);
  assert_int_equal(a->core_kinds[0].lb_bytes, 256 * 1024);
  assert_close(arch_peak_flops(a, DT_FP16), 2 * 1216.0 * 32 * 2 * 1.6e9, EXACT);
  assert_close(arch_peak_flops(a, DT_FP16) / 2, 124.5e12, 0.01);
  assert_close(arch_peak_flops(a, DT_FP32) / 2, 31.1e12, 0.01);
  const GsUnitKind *u = &a->units[a->core_kinds[0].unit[0]];
  assert_true(u->caps == (CAP_MATRIX | CAP_VECTOR));
  assert_int_equal(a->core_kinds[0].nunits, 1);
  arch_free(a);
}

/* TPU v1 ([S19]): 256x256 weight-stationary systolic MXU, int8, 700 MHz: 92 TOPS;
 * DDR3 34 GB/s; 24 MiB Unified Buffer. */
static void test_tpuv1(void **state) {
  (void)state;
  GsArch *a = load("configs/tpuv1.cfg");
  assert_close(arch_peak_flops(a, DT_INT8), 256.0 * 256 * 2 * 700e6, EXACT); /* 91.75e12 */
  assert_close(arch_peak_flops(a, DT_INT8), 92e12, 0.005);
  const GsUnitKind *m = unit_named(a, "mxu");
  assert_int_equal(m->shape, MAT_SYSTOLIC);
  assert_int_equal(m->dataflow, DF_WEIGHT_STATIONARY);
  assert_close(arch_unit_base_macs(m), 65536, EXACT);
  assert_close(a->ddr_bytes_per_cycle, 34e9 / 700e6, EXACT);
  assert_int_equal(a->ddr_latency_cycles, 70); /* 100 ns x 0.7 GHz, no rounding up to 71 */
  assert_int_equal(a->gb_bytes, 24 * 1024 * 1024);
  arch_free(a);
}

/* tiny.cfg: every figure from its round numbers. */
static void test_tiny(void **state) {
  (void)state;
  GsArch *a = load("configs/tiny.cfg");
  assert_int_equal(a->cores_per_cluster, 2);
  assert_close(a->ddr_bytes_per_cycle, 32e9 / 1e9, EXACT);
  assert_int_equal(a->ddr_latency_cycles, 100);
  assert_int_equal(a->ddr_interleave_bytes, 256);
  assert_int_equal(a->ddr_capacity_bytes, 1024LL << 20);
  const GsCoreKind *c = &a->core_kinds[0];
  assert_int_equal(c->nunits, 3);
  assert_string_equal(a->units[c->unit[0]].name, "mme"); /* queue order of the file */
  assert_string_equal(a->units[c->unit[1]].name, "vec");
  assert_string_equal(a->units[c->unit[2]].name, "scl");
  const GsUnitKind *m = unit_named(a, "mme");
  assert_close(arch_unit_macs_per_cycle(m, DT_FP16), 4 * 4 * 4, EXACT);
  assert_close(arch_unit_macs_per_cycle(m, DT_INT8), 2 * 4 * 4 * 4, EXACT);
  assert_close(arch_unit_macs_per_cycle(m, DT_FP32), 0, EXACT);
  assert_close(arch_peak_macs_per_cycle(a, DT_FP16), 2 * 2 * 64, EXACT);
  const GsUnitKind *v = unit_named(a, "vec");
  assert_int_equal(v->op_cost[VC_TRANSC], 8);
  assert_int_equal(v->lanes[DT_BF16], 0); /* default */
  assert_int_equal(a->gb_bytes, 256 * 1024);
  arch_free(a);
}

static void test_set_overrides(void **state) {
  (void)state;
  const char *sets[] = {"chip.clock_mhz=500",      "core.pe.lb_kib = 128",
                        "unit.mme.rate_int8=4",    "chip.clusters=3",
                        "chip.clusters=5",         "cluster.gb_kib=0",
                        "unit.vec.lanes_bf16=16"};
  GsArch *a = load_set("configs/tiny.cfg", sets, 7);
  assert_close(a->ddr_bytes_per_cycle, 32e9 / 500e6, EXACT); /* 64 B/cycle */
  assert_int_equal(a->ddr_latency_cycles, 50);
  assert_int_equal(a->core_kinds[0].lb_bytes, 128 * 1024);
  assert_close(arch_unit_macs_per_cycle(unit_named(a, "mme"), DT_INT8), 4.0 * 64, EXACT);
  assert_int_equal(a->nclusters, 5); /* the last --set wins */
  assert_int_equal(a->gb_bytes, 0);  /* the gb_* keys of the file are then unused, no error */
  assert_int_equal(unit_named(a, "vec")->lanes[DT_BF16], 16);
  assert_close(arch_peak_flops(a, DT_FP16), 5.0 * 2 * 64 * 2 * 500e6, EXACT);
  arch_free(a);
}

static const char *minimal =
    "[chip]\nname = m\nclock_mhz = 2000\nclusters = 1\n"
    "[ddr]\nchannels = 1\nbandwidth_gb_per_s = 10\nlatency_ns = 10.2\ncapacity_mib = 1\n"
    "[cluster]\ngb_kib = 0\nnoc_link_bytes_per_cycle = 8\nnoc_latency_cycles = 1\n"
    "dma_engines = 1\ndma_latency_cycles = 0\n"
    "[core.c]\ncount = 3\nlb_kib = 0\nunits = s\n"
    "[unit.s]\nclass = scalar\nscalar_ops_per_cycle = 2\n";

static void test_load_string_defaults(void **state) {
  (void)state;
  GsDiag d;
  diag_init(&d);
  GsArch *a = arch_load_string("mini", minimal, NULL, 0, &d);
  assert_non_null(a);
  assert_int_equal(d.nerrors, 0);
  assert_string_equal(a->name, "m");
  assert_string_equal(a->source_file, "mini");
  assert_int_equal(a->ddr_burst_bytes, 64);       /* defaults of the schema table */
  assert_int_equal(a->ddr_interleave_bytes, 256);
  assert_close(a->cluster_link_bytes_per_cycle, 0, EXACT);
  assert_int_equal(a->core_kinds[0].dma_engines, 1);
  assert_int_equal(a->ddr_capacity_bytes, 1 << 20);
  assert_close(a->ddr_bytes_per_cycle, 10e9 / 2e9, EXACT);
  assert_int_equal(a->ddr_latency_cycles, 21); /* ceil(10.2 ns x 2 GHz = 20.4) */
  assert_int_equal(a->cores_per_cluster, 3);
  assert_close(arch_peak_flops(a, DT_FP16), 0, EXACT); /* no matrix unit */
  arch_free(a);
}

/* Errors are collected (up to max_errors printed) and the load fails; messages carry
 * name:line and the key. */
static void test_errors_collected(void **state) {
  (void)state;
  DiagText dt;
  GsDiag *d = diag_text_begin(&dt);
  d->max_errors = 10;
  char text[2048];
  /* line 3: clock_mhz; line 4: clusters; line 19: units */
  snprintf(text, sizeof text, "%s", minimal);
  char *p = strstr(text, "clock_mhz = 2000");
  memcpy(p, "clock_mhz = -1  ", 16);
  p = strstr(text, "clusters = 1");
  memcpy(p, "clusters = x", 12);
  p = strstr(text, "units = s");
  memcpy(p, "units = q", 9);
  GsArch *a = arch_load_string("bad", text, NULL, 0, d);
  char *buf = diag_text_end(&dt);
  assert_null(a);
  assert_int_equal(d->nerrors, 3);
  assert_non_null(strstr(buf, "bad:3: error: chip.clock_mhz: -1 is out of range"));
  assert_non_null(strstr(buf, "bad:4: error: chip.clusters: expected an integer"));
  assert_non_null(strstr(buf, "bad:19: error: core.c.units: 'q' is not a defined unit kind"));
  free(buf);
}

/* The text part of --describe is itself a config: loading it gives the same machine and the
 * same description (apart from the first line, which names the source). */
static void test_describe_round_trip(void **state) {
  (void)state;
  static const char *cfgs[] = {"configs/tiny.cfg",      "configs/stcp920.cfg",
                               "configs/stcp920-hw.cfg", "configs/ascend910.cfg",
                               "configs/ascend310.cfg", "configs/goya.cfg",
                               "configs/ipu-gc2.cfg",   "configs/tpuv1.cfg"};
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    GsArch *a = load(cfgs[i]);
    char *t1 = NULL, *t2 = NULL;
    size_t l1 = 0, l2 = 0;
    FILE *m = open_memstream(&t1, &l1);
    arch_describe(a, m, 0);
    fclose(m);
    GsDiag d;
    diag_init(&d);
    GsArch *b = arch_load_string(cfgs[i], t1, NULL, 0, &d);
    if (!b) fail_msg("describe output of %s does not re-load", cfgs[i]);
    m = open_memstream(&t2, &l2);
    arch_describe(b, m, 0);
    fclose(m);
    assert_string_equal(t1, t2);
    for (int t = 0; t < DT_COUNT; t++)
      assert_close(arch_peak_flops(b, (GsDtype)t), arch_peak_flops(a, (GsDtype)t), EXACT);
    free(t1);
    free(t2);
    arch_free(a);
    arch_free(b);
  }
}

/* A float with 17 significant digits survives describe -> load exactly. */
static void test_round_trip_exact_float(void **state) {
  (void)state;
  const char *sets[] = {"chip.clock_mhz=333.33333333333331", "ddr.latency_ns=0.1"};
  GsArch *a = load_set("configs/tiny.cfg", sets, 2);
  char *t = NULL;
  size_t l = 0;
  FILE *m = open_memstream(&t, &l);
  arch_describe(a, m, 0);
  fclose(m);
  GsDiag d;
  diag_init(&d);
  GsArch *b = arch_load_string("rt", t, NULL, 0, &d);
  assert_non_null(b);
  assert_true(b->clock_mhz == a->clock_mhz);
  assert_true(b->ddr_latency_ns == 0.1);
  assert_true(b->ddr_bytes_per_cycle == a->ddr_bytes_per_cycle);
  assert_int_equal(b->ddr_latency_cycles, 1); /* ceil(0.1 ns x 0.333 GHz = 0.033) */
  free(t);
  arch_free(a);
  arch_free(b);
}

/* Syntax variants that must not change the machine: a UTF-8 BOM, CRLF line ends,
 * indentation, blank lines and both comment styles. */
static void test_syntax_variants(void **state) {
  (void)state;
  size_t len;
  char *text = util_read_file("configs/tiny.cfg", &len);
  assert_non_null(text);
  char *v = malloc(3 * len + 16);
  size_t o = 0;
  memcpy(v, "\xEF\xBB\xBF", 3);
  o = 3;
  for (size_t i = 0; i < len; i++) {
    if (i == 0 || text[i - 1] == '\n') v[o++] = '\t'; /* indent every line */
    if (text[i] == '\n') {
      static const char eol[] = "  \r\n\r\n# c\r\n"; /* trailing blanks, CRLF, blank, comment */
      memcpy(v + o, eol, sizeof eol - 1);
      o += sizeof eol - 1;
    } else v[o++] = text[i];
  }
  v[o] = 0;
  GsArch *a = load("configs/tiny.cfg");
  GsDiag d;
  diag_init(&d);
  GsArch *b = arch_load_string("configs/tiny.cfg", v, NULL, 0, &d);
  assert_non_null(b);
  char *t1 = NULL, *t2 = NULL;
  size_t l1 = 0, l2 = 0;
  FILE *m = open_memstream(&t1, &l1);
  arch_describe(a, m, 1);
  fclose(m);
  m = open_memstream(&t2, &l2);
  arch_describe(b, m, 1);
  fclose(m);
  assert_string_equal(t1, t2);
  free(t1);
  free(t2);
  free(text);
  free(v);
  arch_free(a);
  arch_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stcp920),          cmocka_unit_test(test_stcp920_hw),
      cmocka_unit_test(test_ascend910),        cmocka_unit_test(test_ascend310),
      cmocka_unit_test(test_goya_numbering),   cmocka_unit_test(test_ipu_gc2),
      cmocka_unit_test(test_tpuv1),            cmocka_unit_test(test_tiny),
      cmocka_unit_test(test_set_overrides),    cmocka_unit_test(test_load_string_defaults),
      cmocka_unit_test(test_errors_collected), cmocka_unit_test(test_describe_round_trip),
      cmocka_unit_test(test_round_trip_exact_float), cmocka_unit_test(test_syntax_variants),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
