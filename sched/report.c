/* report.c — the run report: summary (cycles, time, throughput, latency), per-unit utilization,
 * DDR traffic, the roofline bound, the Table-3 accounting of where kernel outputs live, and one
 * row per kernel; plus the --compare table. Text, JSON and CSV printers share the same figures
 * (report_summary), so the three formats cannot disagree.
 *
 * Roofline (docs/schedulers.md): bound = max(total FLOP / peak FLOP/s, compulsory DDR bytes /
 * DDR bandwidth); achieved = bound / simulated time (≤ 1 by construction of the bound).
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

void report_init_units(GsRunStats *r, const GsArch *a) {
  r->nunits = 0;
  for (int u = 0; u < a->nunit_kinds && r->nunits < GS_REPORT_MAX_UNITS; u++) {
    int64_t n = arch_unit_instances(a, u);
    if (!n) continue;
    GsUnitUse *x = &r->units[r->nunits++];
    memset(x, 0, sizeof *x);
    x->name = a->units[u].name;
    x->caps = a->units[u].caps;
    x->instances = n;
  }
}

/* The matrix units (or, on a chip without any, every unit) averaged per instance. */
GsTimeSplit report_time_split(const GsRunStats *r, const GsArch *a) {
  GsTimeSplit t;
  memset(&t, 0, sizeof t);
  int any_matrix = 0;
  for (int u = 0; u < r->nunits; u++) any_matrix |= (r->units[u].caps & CAP_MATRIX) != 0;
  double n = 0;
  for (int u = 0; u < r->nunits; u++) {
    const GsUnitUse *x = &r->units[u];
    if (any_matrix && !(x->caps & CAP_MATRIX)) continue;
    t.busy += x->busy_cycles;
    t.data += x->stall_data_cycles;
    t.sync += x->stall_flag_cycles;
    t.resource += x->stall_resource_cycles;
    n += (double)x->instances;
  }
  if (n > 0) {
    t.busy /= n;
    t.data /= n;
    t.sync /= n;
    t.resource /= n;
  }
  t.idle = (double)r->cycles - t.busy - t.data - t.sync - t.resource;
  t.ddr = (r->ddr_read + r->ddr_write) / a->ddr_bytes_per_cycle;
  return t;
}

GsRunSummary report_summary(const GsSchedSummary *m, const GsRunStats *r) {
  GsRunSummary s;
  memset(&s, 0, sizeof s);
  double hz = m->arch->clock_mhz * 1e6;
  s.time_s = (double)r->cycles / hz;
  s.throughput = s.time_s > 0 ? (double)m->batch / s.time_s : 0;
  s.latency_s = s.time_s / (m->iterations > 0 ? m->iterations : 1);
  s.bound_compute_s = m->peak_flops > 0 ? (double)m->total_flops / m->peak_flops : 0;
  s.bound_memory_s = (double)m->compulsory_ddr_bytes / (m->arch->ddr_bandwidth_gb_per_s * 1e9);
  s.bound_s = s.bound_compute_s > s.bound_memory_s ? s.bound_compute_s : s.bound_memory_s;
  s.achieved = s.time_s > 0 ? s.bound_s / s.time_s : 0;
  for (int u = 0; u < r->nunits; u++) {
    double denom = (double)r->cycles * (double)r->units[u].instances;
    s.util[u] = denom > 0 ? r->units[u].busy_cycles / denom : 0;
  }
  return s;
}

/* Each episode's time since the one before it goes to the task the episode ends. The episodes
 * the simulator saw must be the ones the emitter recorded; else every task gets 0. */
void report_task_cycles(const GsSchedSummary *m, const GsRunStats *r, uint64_t *cyc) {
  memset(cyc, 0, sizeof(uint64_t) * (size_t)m->ntasks);
  if (r->nepisodes != m->nepisodes) return;
  for (int e = 1; e < r->nepisodes; e++) {
    int t = m->episode_task[e];
    if (t >= 0 && t < m->ntasks) cyc[t] += r->episode_end[e] - r->episode_end[e - 1];
  }
}

const char *report_task_bound(const GsSchedSummary *m, const GsTaskSum *t) {
  double tc = t->peak_flops > 0 ? (double)t->flops / t->peak_flops : 0;
  double bytes = (double)(t->tally.ddr_read + t->tally.ddr_write) / (m->iterations > 0 ? m->iterations : 1);
  double tm = bytes / (m->arch->ddr_bandwidth_gb_per_s * 1e9);
  return tc >= tm ? "compute" : "memory";
}

/* Cycles, DDR bytes and spilled outputs of group gi (its tasks' sums). */
typedef struct {
  uint64_t cycles;
  int64_t ddr_read, ddr_write;
  int spills;
  int cores;
  double energy_pj;
} InstSum;

/* Per-task figures the printers share: cycles and energy (pJ) over the whole run. */
typedef struct {
  const uint64_t *cyc;
  const double *pj;
} TaskFig;

static InstSum inst_sum(const GsSchedSummary *m, TaskFig f, int gi) {
  InstSum x;
  memset(&x, 0, sizeof x);
  const GsGroupSum *in = &m->group[gi];
  for (int ti = in->t0; ti < in->t1; ti++) {
    const GsTaskSum *t = &m->task[ti];
    x.cycles += f.cyc[ti];
    x.energy_pj += f.pj[ti];
    x.ddr_read += t->tally.ddr_read;
    x.ddr_write += t->tally.ddr_write;
    if (t->cores > x.cores) x.cores = t->cores;
    x.spills += t->spilled;
  }
  return x;
}

static void write_text_gt(FILE *out, const GsSchedSummary *m) {
  fprintf(out, "graphturbo      level %s, order %s, %d instances, %lld spilled slices (%lld B)\n",
          m->level, m->order, m->ngroups, (long long)m->spills, (long long)m->spill_bytes);
  for (int i = 0; i < m->nnotes; i++) fprintf(out, "note            %s\n", m->notes[i]);
}

static void write_text_insts(FILE *out, const GsSchedSummary *m, TaskFig f) {
  fprintf(out, "%-4s %-10s %-12s %7s %6s %12s %14s %14s %6s %11s\n", "#", "instance", "samples", "layers",
          "cores", "cycles", "ddr_read_B", "ddr_write_B", "spills", "energy_J");
  for (int gi = 0; gi < m->ngroups; gi++) {
    const GsGroupSum *in = &m->group[gi];
    InstSum x = inst_sum(m, f, gi);
    char name[32], sl[48];
    snprintf(name, sizeof name, "g%d.%d", in->group, in->index);
    snprintf(sl, sizeof sl, "[%lld,%lld)", (long long)in->s0, (long long)in->s1);
    fprintf(out, "%-4d %-10s %-12s %7d %6d %12llu %14lld %14lld %6d %11.4g\n", gi, name, sl,
            in->t1 - in->t0, x.cores, (unsigned long long)x.cycles, (long long)x.ddr_read,
            (long long)x.ddr_write, x.spills, x.energy_pj * 1e-12);
  }
}

static const char *lvl_name(int lvl) {
  return lvl == LVL_DDR ? "ddr" : lvl == LVL_GB ? "gb" : lvl == LVL_LB ? "lb" : "-";
}

static void csv_str(FILE *out, const char *s) {
  int q = strpbrk(s, ",\"\n") != NULL;
  if (!q) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

/* The run's DDR bytes over what the channels could have moved in its cycles at peak. */
static double ddr_sustained(const GsRunStats *r, const GsArch *a) {
  double cap = (double)r->cycles * a->ddr_bytes_per_cycle;
  return cap > 0 ? (r->ddr_read + r->ddr_write) / cap : 0;
}

static void write_text(FILE *out, const GsSchedSummary *m, const GsRunStats *r, const GsRunSummary *s,
                       TaskFig f, const char *model, const char *arch_file) {
  const GsArch *a = m->arch;
  fprintf(out, "gtsim report: %s on %s (%s), strategy %s\n", model, a->name, arch_file, m->strategy);
  fprintf(out, "batch           %lld (%lld per cluster per iteration, %d iteration%s)\n",
          (long long)m->batch, (long long)m->per_cluster, m->iterations, m->iterations == 1 ? "" : "s");
  fprintf(out, "dtype           %s", arch_dtype_name(m->dtype));
  if (m->cast_from >= 0) fprintf(out, " (cast from %s by --dtype)", arch_dtype_name((GsDtype)m->cast_from));
  fprintf(out, "\n");
  fprintf(out, "kernels         %d per iteration\n", m->ntasks);
  fprintf(out, "cycles          %llu\n", (unsigned long long)r->cycles);
  fprintf(out, "time            %.6f ms\n", s->time_s * 1e3);
  fprintf(out, "throughput      %.2f samples/s\n", s->throughput);
  fprintf(out, "latency         %.6f ms per iteration\n", s->latency_s * 1e3);
  fprintf(out, "ddr read        %.0f B\n", r->ddr_read);
  fprintf(out, "ddr written     %.0f B\n", r->ddr_write);
  fprintf(out, "roofline        bound %.6f ms = max(compute %.6f ms: %.4g FLOP at %.4g FLOP/s, "
               "memory %.6f ms: %lld compulsory B at %.4g GB/s); achieved %.1f%% of it\n",
          s->bound_s * 1e3, s->bound_compute_s * 1e3, (double)m->total_flops, m->peak_flops,
          s->bound_memory_s * 1e3, (long long)m->compulsory_ddr_bytes, a->ddr_bandwidth_gb_per_s,
          s->achieved * 100);
  fprintf(out, "ddr sustained   %.1f%% of peak (bytes / (cycles x %.4g B/cycle))", 100 * ddr_sustained(r, a),
          a->ddr_bytes_per_cycle);
  if (r->ddr_dram)
    fprintf(out, "; DRAM model: row hits %.1f%%, channels move data %.1f%% of their busy time\n",
            100 * r->ddr_row_hit_rate, 100 * r->ddr_efficiency);
  else fprintf(out, "; DRAM model: ideal\n");
  fprintf(out, "outputs live in ddr %d, gb %d, lb %d (op outputs, Table 3 accounting)\n",
          m->outputs_ddr, m->outputs_gb, m->outputs_lb);
  if (!m->level && m->spills > 0) /* graphturbo reports its spilled slices with its level */
    fprintf(out, "spilled         %lld cluster shares of kernel outputs (%lld B) in DDR where the "
                 "plan meant the GB\n", (long long)m->spills, (long long)m->spill_bytes);
  fprintf(out, "utilization    ");
  for (int u = 0; u < r->nunits; u++)
    fprintf(out, " %s %.1f%%", r->units[u].name, s->util[u] * 100);
  fprintf(out, "\n");
  report_energy_text(out, m, r, s);
  if (m->level) write_text_gt(out, m);
  fprintf(out, "\n");
  if (m->ngroups > 0) {
    write_text_insts(out, m, f);
    return;
  }
  fprintf(out, "%-4s %-28s %-40s %12s %14s %14s %11s %-7s %s\n", "#", "kernel", "ops", "cycles",
          "ddr_read_B", "ddr_write_B", "energy_J", "bound", "out");
  for (int ti = 0; ti < m->ntasks; ti++) {
    const GsTaskSum *t = &m->task[ti];
    fprintf(out, "%-4d %-28s %-40s %12llu %14lld %14lld %11.4g %-7s %s\n", ti, t->name, t->ops,
            (unsigned long long)f.cyc[ti], (long long)t->tally.ddr_read,
            (long long)t->tally.ddr_write, f.pj[ti] * 1e-12, report_task_bound(m, t),
            lvl_name(t->out_level));
  }
}

static void write_json_gt(FILE *out, const GsSchedSummary *m, TaskFig f) {
  fprintf(out, "  \"graphturbo\": {\"level\": \"%s\", \"order\": \"%s\", \"spills\": %lld, "
               "\"spill_bytes\": %lld, \"notes\": [",
          m->level, m->order, (long long)m->spills, (long long)m->spill_bytes);
  for (int i = 0; i < m->nnotes; i++) {
    fprintf(out, "%s", i ? ", " : "");
    util_json_str(out, m->notes[i]);
  }
  fprintf(out, "],\n    \"instances\": [\n");
  for (int gi = 0; gi < m->ngroups; gi++) {
    const GsGroupSum *in = &m->group[gi];
    InstSum x = inst_sum(m, f, gi);
    fprintf(out, "      {\"group\": %d, \"index\": %d, \"samples\": [%lld, %lld], \"layers\": %d, "
                 "\"cores\": %d, \"cycles\": %llu, \"ddr_read_bytes\": %lld, \"ddr_write_bytes\": %lld, "
                 "\"spills\": %d, \"energy_j\": %.9g}%s\n",
            in->group, in->index, (long long)in->s0, (long long)in->s1, in->t1 - in->t0, x.cores,
            (unsigned long long)x.cycles, (long long)x.ddr_read, (long long)x.ddr_write, x.spills,
            x.energy_pj * 1e-12, gi + 1 < m->ngroups ? "," : "");
  }
  fprintf(out, "    ]},\n");
}

static void write_json_tasks(FILE *out, const GsSchedSummary *m, TaskFig f) {
  fprintf(out, "  \"kernels\": [\n");
  for (int ti = 0; ti < m->ntasks; ti++) {
    const GsTaskSum *t = &m->task[ti];
    fprintf(out, "    {\"name\": ");
    util_json_str(out, t->name);
    fprintf(out, ", \"ops\": ");
    util_json_str(out, t->ops);
    fprintf(out, ", \"cycles\": %llu, \"ddr_read_bytes\": %lld, \"ddr_write_bytes\": %lld, "
                 "\"flops\": %lld, \"bound\": \"%s\", \"output\": \"%s\", \"cores\": %d, "
                 "\"energy_j\": %.9g}%s\n",
            (unsigned long long)f.cyc[ti], (long long)t->tally.ddr_read, (long long)t->tally.ddr_write,
            (long long)t->flops, report_task_bound(m, t), lvl_name(t->out_level), t->cores,
            f.pj[ti] * 1e-12, ti + 1 < m->ntasks ? "," : "");
  }
  fprintf(out, "  ]\n");
}

static void write_json(FILE *out, const GsSchedSummary *m, const GsRunStats *r, const GsRunSummary *s,
                       TaskFig f, const char *model, const char *arch_file) {
  const GsArch *a = m->arch;
  fprintf(out, "{\n  \"model\": ");
  util_json_str(out, model);
  fprintf(out, ",\n  \"arch\": ");
  util_json_str(out, a->name);
  fprintf(out, ",\n  \"arch_file\": ");
  util_json_str(out, arch_file);
  fprintf(out, ",\n  \"strategy\": \"%s\",\n", m->strategy);
  if (m->level) write_json_gt(out, m, f);
  fprintf(out, "  \"batch\": %lld,\n  \"batch_per_cluster\": %lld,\n  \"iterations\": %d,\n",
          (long long)m->batch, (long long)m->per_cluster, m->iterations);
  fprintf(out, "  \"dtype\": \"%s\",\n  \"dtype_cast_from\": ", arch_dtype_name(m->dtype));
  if (m->cast_from >= 0) fprintf(out, "\"%s\",\n", arch_dtype_name((GsDtype)m->cast_from));
  else fprintf(out, "null,\n");
  fprintf(out, "  \"cycles\": %llu,\n  \"time_s\": %.9g,\n  \"throughput_samples_per_s\": %.9g,\n"
               "  \"latency_s\": %.9g,\n",
          (unsigned long long)r->cycles, s->time_s, s->throughput, s->latency_s);
  fprintf(out, "  \"ddr_read_bytes\": %.0f,\n  \"ddr_write_bytes\": %.0f,\n", r->ddr_read, r->ddr_write);
  fprintf(out, "  \"ddr\": {\"sustained\": %.9g, \"model\": \"%s\", \"row_hit_rate\": %.9g, "
               "\"efficiency\": %.9g},\n",
          ddr_sustained(r, a), r->ddr_dram ? "dram" : "ideal", r->ddr_row_hit_rate, r->ddr_efficiency);
  fprintf(out, "  \"roofline\": {\"total_flop\": %lld, \"peak_flop_per_s\": %.9g, "
               "\"compulsory_ddr_bytes\": %lld, \"ddr_bytes_per_s\": %.9g, \"compute_s\": %.9g, "
               "\"memory_s\": %.9g, \"bound_s\": %.9g, \"achieved\": %.9g},\n",
          (long long)m->total_flops, m->peak_flops, (long long)m->compulsory_ddr_bytes,
          a->ddr_bandwidth_gb_per_s * 1e9, s->bound_compute_s, s->bound_memory_s, s->bound_s,
          s->achieved);
  fprintf(out, "  \"outputs\": {\"ddr\": %d, \"gb\": %d, \"lb\": %d},\n", m->outputs_ddr,
          m->outputs_gb, m->outputs_lb);
  fprintf(out, "  \"utilization\": {");
  for (int u = 0; u < r->nunits; u++) {
    fprintf(out, "%s", u ? ", " : "");
    util_json_str(out, r->units[u].name);
    fprintf(out, ": %.6f", s->util[u]);
  }
  fprintf(out, "},\n  ");
  report_energy_json(out, m, r, s);
  fprintf(out, ",\n");
  write_json_tasks(out, m, f);
  fprintf(out, "}\n");
}

/* The energy column of a CSV row: empty without an [energy] section. */
static void csv_energy(FILE *out, const GsSchedSummary *m, double pj) {
  if (m->arch->energy.present) fprintf(out, ",%.9g\n", pj * 1e-12);
  else fputs(",\n", out);
}

static void write_csv_insts(FILE *out, const GsSchedSummary *m, const GsRunStats *r, TaskFig f) {
  fprintf(out, "instance,group,samples_lo,samples_hi,layers,cores,cycles,ddr_read_bytes,"
               "ddr_write_bytes,spills,energy_j\n");
  for (int gi = 0; gi < m->ngroups; gi++) {
    const GsGroupSum *in = &m->group[gi];
    InstSum x = inst_sum(m, f, gi);
    fprintf(out, "g%d.%d,%d,%lld,%lld,%d,%d,%llu,%lld,%lld,%d", in->group, in->index, in->group,
            (long long)in->s0, (long long)in->s1, in->t1 - in->t0, x.cores,
            (unsigned long long)x.cycles, (long long)x.ddr_read, (long long)x.ddr_write, x.spills);
    csv_energy(out, m, x.energy_pj);
  }
  GsEnergy e;
  report_energy(m, r, &e);
  fprintf(out, "(total),,,,,,%llu,%.0f,%.0f,%lld", (unsigned long long)r->cycles, r->ddr_read,
          r->ddr_write, (long long)m->spills);
  csv_energy(out, m, e.total_pj);
}

static void write_csv(FILE *out, const GsSchedSummary *m, const GsRunStats *r, TaskFig f) {
  if (m->ngroups > 0) {
    write_csv_insts(out, m, r, f);
    return;
  }
  fprintf(out, "kernel,ops,cycles,ddr_read_bytes,ddr_write_bytes,flops,bound,output,energy_j\n");
  for (int ti = 0; ti < m->ntasks; ti++) {
    const GsTaskSum *t = &m->task[ti];
    csv_str(out, t->name);
    fputc(',', out);
    csv_str(out, t->ops);
    fprintf(out, ",%llu,%lld,%lld,%lld,%s,%s", (unsigned long long)f.cyc[ti],
            (long long)t->tally.ddr_read, (long long)t->tally.ddr_write, (long long)t->flops,
            report_task_bound(m, t), lvl_name(t->out_level));
    csv_energy(out, m, f.pj[ti]);
  }
  GsEnergy e;
  report_energy(m, r, &e);
  fprintf(out, "(total),,%llu,%.0f,%.0f,%lld,,", (unsigned long long)r->cycles, r->ddr_read,
          r->ddr_write, (long long)m->total_flops);
  csv_energy(out, m, e.total_pj);
}

void report_write(FILE *out, GsReportFormat f, const GsSchedSummary *m, const GsRunStats *r,
                  const char *model, const char *arch_file) {
  GsRunSummary s = report_summary(m, r);
  uint64_t *cyc = calloc((size_t)m->ntasks + 1, sizeof *cyc);
  double *pj = calloc((size_t)m->ntasks + 1, sizeof *pj);
  if (!cyc || !pj) die("out of memory");
  report_task_cycles(m, r, cyc);
  report_task_energy(m, r, cyc, pj);
  TaskFig tf = {cyc, pj};
  if (f == REPORT_JSON) write_json(out, m, r, &s, tf, model, arch_file);
  else if (f == REPORT_CSV) write_csv(out, m, r, tf);
  else write_text(out, m, r, &s, tf, model, arch_file);
  free(cyc);
  free(pj);
}

/* The gap of run x to run f (the fastest) in cycles, split as docs/schedulers.md ("The gap to
 * the fastest") says: the parts add up to x's cycles minus f's. */
typedef struct {
  double total, compute, ddr, data, sync, resource, idle;
} GsGap;

static GsGap gap_to(const GsRunStats *x, const GsRunStats *f, const GsArch *a) {
  GsTimeSplit sx = report_time_split(x, a), sf = report_time_split(f, a);
  GsGap g;
  g.total = (double)x->cycles - (double)f->cycles;
  g.compute = sx.busy - sf.busy;
  g.ddr = sx.ddr - sf.ddr;
  g.data = (sx.data - sf.data) - g.ddr;
  g.sync = sx.sync - sf.sync;
  g.resource = sx.resource - sf.resource;
  g.idle = sx.idle - sf.idle;
  return g;
}

static int fastest(const GsRunStats *const *rs, int n) {
  int b = 0;
  for (int i = 1; i < n; i++)
    if (rs[i]->cycles < rs[b]->cycles) b = i;
  return b;
}

static void write_gap_text(FILE *out, const GsSchedSummary *const *ls, const GsRunStats *const *rs, int n) {
  int b = fastest(rs, n);
  fprintf(out, "\ngap to the fastest (%s), cycles: matrix units' busy time, the extra DDR traffic "
               "at full bandwidth,\nother data waits, sync and resource stalls, idle (per matrix "
               "unit; the parts add up to the gap)\n",
          ls[b]->strategy);
  fprintf(out, "%-21s %12s %12s %12s %12s %12s %12s %12s\n", "strategy", "gap", "compute",
          "ddr_traffic", "other_data", "sync", "resource", "idle");
  for (int i = 0; i < n; i++) {
    GsGap g = gap_to(rs[i], rs[b], ls[i]->arch);
    fprintf(out, "%-21s %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f\n",
            ls[i]->strategy, g.total, g.compute, g.ddr, g.data, g.sync,
            g.resource, g.idle);
  }
}

/* The energy fields of a --compare row: total, DDR part, average power, FLOP per joule (empty
 * or null without an [energy] section). */
static void compare_energy(FILE *out, GsReportFormat f, const GsSchedSummary *m, const GsRunStats *r,
                           const GsRunSummary *s) {
  GsEnergy e;
  int has = report_energy(m, r, &e);
  double j = e.total_pj * 1e-12, w = s->time_s > 0 ? j / s->time_s : 0;
  double fpj = j > 0 ? (double)m->total_flops / j : 0;
  if (f == REPORT_TEXT) {
    if (has) fprintf(out, " %11.4g %9.4g", j, fpj * 1e-12);
    else fprintf(out, " %11s %9s", "-", "-");
  } else if (f == REPORT_CSV) {
    if (has) fprintf(out, ",%.9g,%.9g,%.9g,%.9g", j, e.ddr_pj * 1e-12, w, fpj);
    else fputs(",,,,", out);
  } else {
    fputs(", ", out);
    report_energy_json(out, m, r, s);
  }
}

void report_compare(FILE *out, GsReportFormat f, const GsSchedSummary *const *ls,
                    const GsRunStats *const *rs, int n, const char *model) {
  GsRunSummary base = report_summary(ls[0], rs[0]);
  int best = fastest(rs, n);
  if (f == REPORT_JSON) fprintf(out, "{\"model\": \"%s\", \"rows\": [\n", model);
  else if (f == REPORT_CSV) {
    fprintf(out, "strategy,cycles,throughput_samples_per_s,speedup,ddr_read_bytes,ddr_write_bytes,"
                 "outputs_ddr,outputs_gb,outputs_lb,spills");
    for (int u = 0; u < rs[0]->nunits; u++) fprintf(out, ",util_%s", rs[0]->units[u].name);
    fprintf(out, ",gap_cycles,gap_compute,gap_ddr_traffic,gap_other_data,gap_sync,gap_resource,"
                 "gap_idle,energy_j,energy_ddr_j,power_w,flop_per_j\n");
  } else {
    fprintf(out, "compare: %s on %s, batch %lld, dtype %s\n", model, ls[0]->arch->name,
            (long long)ls[0]->batch, arch_dtype_name(ls[0]->dtype));
    fprintf(out, "%-21s %14s %12s %8s %14s %14s %17s %6s", "strategy", "cycles", "samples/s",
            "speedup", "ddr_read_B", "ddr_write_B", "out ddr/gb/lb", "spills");
    for (int u = 0; u < rs[0]->nunits; u++) fprintf(out, " %8s", rs[0]->units[u].name);
    fprintf(out, " %11s %9s\n", "energy_J", "TFLOP/J");
  }
  for (int i = 0; i < n; i++) {
    GsRunSummary s = report_summary(ls[i], rs[i]);
    double sp = base.throughput > 0 ? s.throughput / base.throughput : 0;
    const char *nm = ls[i]->strategy;
    if (f == REPORT_JSON) {
      fprintf(out, "  {\"strategy\": \"%s\", \"cycles\": %llu, \"time_s\": %.9g, "
                   "\"throughput_samples_per_s\": %.9g, \"speedup\": %.6f, \"ddr_read_bytes\": %.0f, "
                   "\"ddr_write_bytes\": %.0f, \"roofline_bound_s\": %.9g, \"iterations\": %d, "
                   "\"outputs\": {\"ddr\": %d, \"gb\": %d, \"lb\": %d}, \"spills\": %lld, "
                   "\"utilization\": {",
              nm, (unsigned long long)rs[i]->cycles, s.time_s, s.throughput, sp, rs[i]->ddr_read,
              rs[i]->ddr_write, s.bound_s, ls[i]->iterations, ls[i]->outputs_ddr, ls[i]->outputs_gb,
              ls[i]->outputs_lb, (long long)ls[i]->spills);
      for (int u = 0; u < rs[i]->nunits; u++) {
        fprintf(out, "%s", u ? ", " : "");
        util_json_str(out, rs[i]->units[u].name);
        fprintf(out, ": %.6f", s.util[u]);
      }
      GsGap g = gap_to(rs[i], rs[best], ls[i]->arch);
      GsTimeSplit t = report_time_split(rs[i], ls[i]->arch);
      fprintf(out, "}, \"matrix_time\": {\"busy\": %.3f, \"data\": %.3f, \"sync\": %.3f, "
                   "\"resource\": %.3f, \"idle\": %.3f, \"ddr\": %.3f}, \"gap\": {\"to\": %d, "
                   "\"cycles\": %.0f, \"compute\": %.3f, \"ddr_traffic\": %.3f, \"other_data\": %.3f, "
                   "\"sync\": %.3f, \"resource\": %.3f, \"idle\": %.3f}",
              t.busy, t.data, t.sync, t.resource, t.idle, t.ddr, best, g.total, g.compute, g.ddr,
              g.data, g.sync, g.resource, g.idle);
      compare_energy(out, f, ls[i], rs[i], &s);
      fprintf(out, "}%s\n", i + 1 < n ? "," : "");
    } else if (f == REPORT_CSV) {
      fprintf(out, "%s,%llu,%.6f,%.6f,%.0f,%.0f,%d,%d,%d,%lld", nm, (unsigned long long)rs[i]->cycles,
              s.throughput, sp, rs[i]->ddr_read, rs[i]->ddr_write, ls[i]->outputs_ddr,
              ls[i]->outputs_gb, ls[i]->outputs_lb, (long long)ls[i]->spills);
      for (int u = 0; u < rs[i]->nunits; u++) fprintf(out, ",%.6f", s.util[u]);
      GsGap g = gap_to(rs[i], rs[best], ls[i]->arch);
      fprintf(out, ",%.0f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f", g.total, g.compute, g.ddr, g.data,
              g.sync, g.resource, g.idle);
      compare_energy(out, f, ls[i], rs[i], &s);
      fputc('\n', out);
    } else {
      char t3[48];
      snprintf(t3, sizeof t3, "%d/%d/%d", ls[i]->outputs_ddr, ls[i]->outputs_gb, ls[i]->outputs_lb);
      fprintf(out, "%-21s %14llu %12.2f %7.3fx %14.0f %14.0f %17s %6lld", nm,
              (unsigned long long)rs[i]->cycles, s.throughput, sp, rs[i]->ddr_read, rs[i]->ddr_write,
              t3, (long long)ls[i]->spills);
      for (int u = 0; u < rs[i]->nunits; u++) fprintf(out, " %7.1f%%", s.util[u] * 100);
      compare_energy(out, f, ls[i], rs[i], &s);
      fprintf(out, "\n");
    }
  }
  if (f == REPORT_JSON) fprintf(out, "]}\n");
  else if (f == REPORT_TEXT) {
    write_gap_text(out, ls, rs, n);
    report_compare_energy_text(out, ls, rs, n);
  }
}
