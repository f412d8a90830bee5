/* test_energy.c — sched/energy.c: the node scaling rule, energy_compute on hand-built action
 * counts, energy_actions_sub, the static power sum and the full-utilization figure, all
 * against values computed here from configs/tiny.cfg's [energy] figures (written next to each
 * check). Run from the repository root (tests/run.sh does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "energy.h"

#define assert_near(got, want)                                                               \
  do {                                                                                       \
    double g_ = (got), w_ = (want);                                                          \
    if (!(g_ - w_ <= 1e-9 * (w_ < 0 ? -w_ : w_) + 1e-12 && w_ - g_ <= 1e-9 * (w_ < 0 ? -w_ : w_) + 1e-12)) \
      fail_msg("%s = %.17g, expected %.17g", #got, g_, w_);                                  \
  } while (0)

static GsArch *load(const char *const *sets, int n) {
  GsDiag d;
  diag_init(&d);
  GsArch *a = arch_load("configs/tiny.cfg", sets, n, &d);
  if (!a) fail_msg("configs/tiny.cfg does not load");
  return a;
}

static int unit_index(const GsArch *a, const char *name) {
  for (int i = 0; i < a->nunit_kinds; i++)
    if (strcmp(a->units[i].name, name) == 0) return i;
  fail_msg("no unit kind %s", name);
  return -1;
}

/* scale = (node / table_node) x (vdd / table_vdd)^2 */
static void test_scale(void **state) {
  (void)state;
  GsArch *a = load(NULL, 0);
  assert_true(a->energy.present);
  assert_near(a->energy.scale, 22.5 / 45); /* tiny: 22.5 nm against 45 nm, same voltage */
  const char *sets[] = {"energy.node_nm=7", "energy.vdd_v=0.75"};
  GsArch *b = load(sets, 2);
  assert_near(b->energy.scale, 7.0 / 45 * (0.75 / 0.9) * (0.75 / 0.9));
  arch_free(a);
  arch_free(b);
}

/* tiny.cfg static: mme 10 x 4 + vec 5 x 4 + scl 1 x 4 (2 clusters x 2 cores) = 64 mW, LB 20 x 4,
 * GB 50 x 2, DDR 100, rest 200: 544 mW. */
static void test_static(void **state) {
  (void)state;
  GsArch *a = load(NULL, 0);
  assert_near(energy_static_mw(a), 544);
  arch_free(a);
}

/* One of each action, priced by hand (on-chip x 0.5; DDR and cluster link not scaled). */
static void test_compute(void **state) {
  (void)state;
  GsArch *a = load(NULL, 0);
  int mme = unit_index(a, "mme"), vec = unit_index(a, "vec"), scl = unit_index(a, "scl");
  GsActions x;
  memset(&x, 0, sizeof x);
  x.macs[mme][DT_FP16] = 1000;        /* x 2 pJ */
  x.macs[mme][DT_INT8] = 3000;        /* x 1 pJ */
  x.vec_passes[vec][VC_TRANSC] = 10;  /* x 16 pJ */
  x.vec_passes[vec][VC_DIV] = 5;      /* x 8 pJ */
  x.scalar_ops[scl] = 7;              /* x 4 pJ */
  x.lb_read[0] = 100;                 /* x 1 pJ/B */
  x.lb_write[0] = 50;                 /* x 2 */
  x.gb_read = 10;                     /* x 4 */
  x.gb_write = 20;                    /* x 6 */
  x.ddr_read = 3;                     /* x 40, unscaled */
  x.ddr_write = 2;                    /* x 50, unscaled */
  x.noc_bytes = 30;                   /* x 2 */
  x.cluster_link_bytes = 4;           /* x 10, unscaled */
  x.transfers = 2;                    /* x 100 */
  GsEnergy e;
  energy_compute(a, &x, 1e-6, &e);    /* one microsecond */
  assert_near(e.mac_pj, (1000 * 2 + 3000 * 1) * 0.5);
  assert_near(e.unit_pj[mme], 2500);
  assert_near(e.vec_pj, (10 * 16 + 5 * 8) * 0.5);
  assert_near(e.unit_pj[vec], 100);
  assert_near(e.scalar_pj, 7 * 4 * 0.5);
  assert_near(e.lb_pj, (100 * 1 + 50 * 2) * 0.5);
  assert_near(e.gb_pj, (10 * 4 + 20 * 6) * 0.5);
  assert_near(e.ddr_pj, 3 * 40 + 2 * 50);
  assert_near(e.noc_pj, 30 * 2 * 0.5);
  assert_near(e.link_pj, 4 * 10);
  assert_near(e.dma_pj, 2 * 100 * 0.5);
  double dyn = 2500 + 100 + 14 + 100 + 80 + 220 + 30 + 40 + 100;
  assert_near(e.dynamic_pj, dyn);
  assert_near(e.static_pj, 544e-3 * 1e-6 * 1e12); /* 544 mW for 1 us = 544000 pJ */
  assert_near(e.total_pj, dyn + 544000);
  arch_free(a);
}

/* The actions between two snapshots cost the difference of their energies. */
static void test_sub(void **state) {
  (void)state;
  GsArch *a = load(NULL, 0);
  GsActions x, y, d;
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  x.ddr_read = 100, y.ddr_read = 40;
  x.transfers = 5, y.transfers = 2;
  energy_actions_sub(&d, &x, &y);
  GsEnergy e;
  energy_compute(a, &d, 0, &e);
  assert_near(e.dynamic_pj, 60 * 40 + 3 * 100 * 0.5);
  assert_near(e.static_pj, 0);
  arch_free(a);
}

/* Full utilization on tiny, fp16: 2 x 2 cores x 64 MAC/cycle at 1 GHz = 2.56e11 MAC/s, 5.12e11
 * FLOP/s. A MAC is 2 pJ x 0.5 = 1 pJ for 2 FLOP: 0.5 pJ/FLOP; static 0.544 W / 5.12e11 FLOP/s. */
static void test_peak(void **state) {
  (void)state;
  GsArch *a = load(NULL, 0);
  double dyn, st, pj = energy_peak_pj_per_flop(a, DT_FP16, &dyn, &st);
  assert_near(dyn, 0.5);
  assert_near(st, 0.544 / 5.12e11 * 1e12);
  assert_near(pj, 0.5 + 0.544 / 5.12e11 * 1e12);
  assert_near(energy_peak_pj_per_flop(a, DT_FP32, NULL, NULL), 0); /* no fp32 MACs */
  arch_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scale), cmocka_unit_test(test_static), cmocka_unit_test(test_compute),
      cmocka_unit_test(test_sub),   cmocka_unit_test(test_peak),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
