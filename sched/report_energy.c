/* report_energy.c — the energy part of the run report and of --compare (docs/energy.md).
 *
 * The run's energy is energy_compute over the simulator's action counts and the run's time.
 * A task (kernel, or a graphturbo instance's layer) is charged the dynamic energy of the
 * actions between the episode before it and its own, like its cycles (report_task_cycles),
 * and the chip's static power over those cycles; so the tasks' energies add up to the run's
 * whenever their cycles add up to the run's cycles. Text, JSON and CSV print the same figures.
 */
#include <string.h>

#include "report.h"

int report_energy(const GsSchedSummary *m, const GsRunStats *r, GsEnergy *e) {
  memset(e, 0, sizeof *e);
  if (!m->arch->energy.present) return 0;
  energy_compute(m->arch, &r->actions, (double)r->cycles / (m->arch->clock_mhz * 1e6), e);
  return 1;
}

void report_task_energy(const GsSchedSummary *m, const GsRunStats *r, const uint64_t *cyc, double *pj) {
  memset(pj, 0, sizeof(double) * (size_t)m->ntasks);
  const GsArch *a = m->arch;
  if (!a->energy.present || !r->episode_actions || r->nepisodes != m->nepisodes) return;
  for (int e = 1; e < r->nepisodes; e++) {
    int t = m->episode_task[e];
    if (t < 0 || t >= m->ntasks) continue;
    GsActions d;
    GsEnergy x;
    energy_actions_sub(&d, &r->episode_actions[e], &r->episode_actions[e - 1]);
    energy_compute(a, &d, 0, &x);
    pj[t] += x.dynamic_pj;
  }
  double static_w = energy_static_mw(a) * 1e-3, hz = a->clock_mhz * 1e6;
  for (int t = 0; t < m->ntasks; t++) pj[t] += static_w * (double)cyc[t] / hz * 1e12;
}

/* An energy in joules with a prefix that keeps 4 digits readable: "12.35 mJ". */
static void fmt_j(double pj, char *buf, size_t n) {
  static const char *const pre[] = {"pJ", "nJ", "uJ", "mJ", "J", "kJ"};
  double v = pj;
  int i = 0;
  while (v >= 1000 && i < 5) v /= 1000, i++;
  snprintf(buf, n, "%.4g %s", v, pre[i]);
}

void report_energy_text(FILE *out, const GsSchedSummary *m, const GsRunStats *r, const GsRunSummary *s) {
  GsEnergy e;
  if (!report_energy(m, r, &e)) {
    fprintf(out, "energy          none (the config has no [energy] section)\n");
    return;
  }
  char t[32], d[32], st[32], ps[32];
  fmt_j(e.total_pj, t, sizeof t);
  fmt_j(e.dynamic_pj, d, sizeof d);
  fmt_j(e.static_pj, st, sizeof st);
  fmt_j(m->batch > 0 ? e.total_pj / (double)m->batch : 0, ps, sizeof ps);
  double j = e.total_pj * 1e-12;
  fprintf(out, "energy          %s = dynamic %s + static %s; %s per sample; average power %.4g W; "
               "%.4g TFLOP/J (TOPS/W)\n",
          t, d, st, ps, s->time_s > 0 ? j / s->time_s : 0,
          j > 0 ? (double)m->total_flops / j * 1e-12 : 0);
  fprintf(out, "energy by part ");
  for (int u = 0; u < r->nunits; u++)
    for (int k = 0; k < m->arch->nunit_kinds; k++)
      if (strcmp(m->arch->units[k].name, r->units[u].name) == 0) {
        fmt_j(e.unit_pj[k], t, sizeof t);
        fprintf(out, " %s %s,", r->units[u].name, t);
      }
  const char *names[] = {"lb", "gb", "noc", "cluster link", "ddr", "dma", "static"};
  double v[] = {e.lb_pj, e.gb_pj, e.noc_pj, e.link_pj, e.ddr_pj, e.dma_pj, e.static_pj};
  for (int i = 0; i < 7; i++) {
    fmt_j(v[i], t, sizeof t);
    fprintf(out, " %s %s%s", names[i], t, i < 6 ? "," : "\n");
  }
}

void report_energy_json(FILE *out, const GsSchedSummary *m, const GsRunStats *r, const GsRunSummary *s) {
  GsEnergy e;
  if (!report_energy(m, r, &e)) {
    fputs("\"energy\": null", out);
    return;
  }
  double j = e.total_pj * 1e-12;
  fprintf(out, "\"energy\": {\"total_j\": %.9g, \"dynamic_j\": %.9g, \"static_j\": %.9g, "
               "\"per_sample_j\": %.9g, \"power_w\": %.9g, \"flop_per_j\": %.9g, \"units_j\": {",
          j, e.dynamic_pj * 1e-12, e.static_pj * 1e-12, m->batch > 0 ? j / (double)m->batch : 0,
          s->time_s > 0 ? j / s->time_s : 0, j > 0 ? (double)m->total_flops / j : 0);
  for (int k = 0; k < m->arch->nunit_kinds; k++) {
    fprintf(out, "%s", k ? ", " : "");
    util_json_str(out, m->arch->units[k].name);
    fprintf(out, ": %.9g", e.unit_pj[k] * 1e-12);
  }
  fprintf(out, "}, \"parts_j\": {\"mac\": %.9g, \"pe_input\": %.9g, \"pe_weight\": %.9g, "
               "\"pe_psum\": %.9g, \"vec\": %.9g, \"scalar\": %.9g, "
               "\"lb\": %.9g, \"gb\": %.9g, \"noc\": %.9g, \"cluster_link\": %.9g, \"ddr\": %.9g, "
               "\"dma\": %.9g, \"static\": %.9g}}",
          e.mac_pj * 1e-12, e.pe_input_pj * 1e-12, e.pe_weight_pj * 1e-12, e.pe_psum_pj * 1e-12,
          e.vec_pj * 1e-12, e.scalar_pj * 1e-12,
          e.lb_pj * 1e-12, e.gb_pj * 1e-12, e.noc_pj * 1e-12, e.link_pj * 1e-12,
          e.ddr_pj * 1e-12, e.dma_pj * 1e-12, e.static_pj * 1e-12);
}

/* --compare, text: where each strategy's energy went, in joules. */
void report_compare_energy_text(FILE *out, const GsSchedSummary *const *ls, const GsRunStats *const *rs,
                                int n) {
  GsEnergy e;
  if (!report_energy(ls[0], rs[0], &e)) {
    fprintf(out, "\nenergy: none (the config has no [energy] section)\n");
    return;
  }
  fprintf(out, "\nenergy by part, J (compute: every unit's MACs, operands in the arrays, vector "
               "and scalar ops; link: between clusters)\n");
  fprintf(out, "%-21s %11s %11s %11s %11s %11s %11s %11s %11s %11s\n", "strategy", "total",
          "compute", "lb", "gb", "noc", "link", "ddr", "dma", "static");
  for (int i = 0; i < n; i++) {
    report_energy(ls[i], rs[i], &e);
    fprintf(out, "%-21s %11.4g %11.4g %11.4g %11.4g %11.4g %11.4g %11.4g %11.4g %11.4g\n",
            ls[i]->strategy, e.total_pj * 1e-12,
            (e.mac_pj + e.pe_pj + e.vec_pj + e.scalar_pj) * 1e-12, e.lb_pj * 1e-12,
            e.gb_pj * 1e-12, e.noc_pj * 1e-12, e.link_pj * 1e-12, e.ddr_pj * 1e-12,
            e.dma_pj * 1e-12, e.static_pj * 1e-12);
  }
}
