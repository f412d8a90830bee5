/* arch_report.c — `--describe` (text and JSON) and docs/config.md, both driven by the schema
 * table in arch.c.
 *
 * --describe prints the resolved config (every key of the schema that applies, in table order,
 * in config syntax: the text part re-parses to the same machine), then derived figures: peak
 * rates per dtype at each level (unit kind, core kind, cluster, chip) for the matrix, vector
 * and scalar units, DDR bytes/cycle, on-chip capacity per level and machine balance. The JSON
 * form carries the same content. Rates are computed in one place (collect_rates) for both
 * forms. Output order is the config order, so the output is deterministic.
 */
#include <math.h>
#include <string.h>

#include "arch.h"
#include "arch_schema.h"
#include "energy.h"

/* ---------------------------------------------------------------- small formatting helpers */

/* value with an SI prefix, e.g. 131.07 T */
static void fmt_si(double v, char *buf, size_t n) {
  static const char *pre[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (fabs(v) >= 1000 && i < 6) v /= 1000, i++;
  snprintf(buf, n, "%.2f %s", v, pre[i]);
}

static void fmt_bytes(double b, char *buf, size_t n) {
  if (b >= 1024.0 * 1024 * 1024) snprintf(buf, n, "%.6g GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024) snprintf(buf, n, "%.6g MiB", b / (1024.0 * 1024));
  else if (b >= 1024) snprintf(buf, n, "%.6g KiB", b / 1024);
  else snprintf(buf, n, "%.6g B", b);
}

static const char *sec_label(const GsArch *a, ArchSecKind k, int i, char *buf, size_t n) {
  if (k == SEC_CORE) snprintf(buf, n, "core.%s", a->core_kinds[i].name);
  else if (k == SEC_UNIT) snprintf(buf, n, "unit.%s", a->units[i].name);
  else snprintf(buf, n, "%s", arch_sec_names[k]);
  return buf;
}

/* Sections in describe order: chip, ddr, cluster, cores, units. */
typedef struct {
  ArchSecKind kind;
  int index;
} SecRef;
static int section_list(const GsArch *a, SecRef *out) {
  int n = 0;
  for (int k = SEC_CHIP; k <= SEC_CLUSTER; k++) out[n++] = (SecRef){(ArchSecKind)k, 0};
  for (int i = 0; i < a->ncore_kinds; i++) out[n++] = (SecRef){SEC_CORE, i};
  for (int i = 0; i < a->nunit_kinds; i++) out[n++] = (SecRef){SEC_UNIT, i};
  if (a->energy.present) out[n++] = (SecRef){SEC_ENERGY, 0};
  return n;
}

/* ---------------------------------------------------------------- peak rates */

typedef enum { R_MATRIX, R_VECTOR, R_SCALAR } RateKind;
typedef struct {
  RateKind kind;
  const char *level; /* unit, core, cluster, chip */
  const char *name;  /* unit or core kind name; "" for cluster and chip */
  int dtype;         /* -1 for scalar */
  double per_cycle;  /* MAC, element-ops or scalar ops per cycle */
} Rate;

static double unit_rate(const GsUnitKind *u, RateKind k, int t) {
  if (k == R_MATRIX) return arch_unit_macs_per_cycle(u, (GsDtype)t);
  if (k == R_VECTOR) return (u->caps & CAP_VECTOR) ? u->lanes[t] : 0;
  return (u->caps & CAP_SCALAR) ? u->scalar_ops_per_cycle : 0;
}

static double core_rate(const GsArch *a, const GsCoreKind *c, RateKind k, int t) {
  double r = 0;
  for (int i = 0; i < c->nunits; i++) r += unit_rate(&a->units[c->unit[i]], k, t);
  return r;
}

static int unit_used(const GsArch *a, int u) {
  for (int k = 0; k < a->ncore_kinds; k++)
    for (int i = 0; i < a->core_kinds[k].nunits; i++)
      if (a->core_kinds[k].unit[i] == u) return 1;
  return 0;
}

/* Every non-zero rate, grouped by kind and dtype, levels from unit up to chip. Returns the
 * count; `out` holds room for all. */
static int collect_rates(const GsArch *a, Rate *out) {
  int n = 0;
  for (int kind = R_MATRIX; kind <= R_SCALAR; kind++) {
    int nt = kind == R_SCALAR ? 1 : DT_COUNT;
    for (int t = 0; t < nt; t++) {
      int dt = kind == R_SCALAR ? -1 : t;
      double cluster = 0;
      for (int k = 0; k < a->ncore_kinds; k++)
        cluster += core_rate(a, &a->core_kinds[k], (RateKind)kind, t) * a->core_kinds[k].count;
      if (cluster == 0) continue;
      for (int u = 0; u < a->nunit_kinds; u++) {
        double r = unit_rate(&a->units[u], (RateKind)kind, t);
        if (r > 0 && unit_used(a, u))
          out[n++] = (Rate){(RateKind)kind, "unit", a->units[u].name, dt, r};
      }
      for (int k = 0; k < a->ncore_kinds; k++) {
        double r = core_rate(a, &a->core_kinds[k], (RateKind)kind, t);
        if (r > 0) out[n++] = (Rate){(RateKind)kind, "core", a->core_kinds[k].name, dt, r};
      }
      out[n++] = (Rate){(RateKind)kind, "cluster", "", dt, cluster};
      out[n++] = (Rate){(RateKind)kind, "chip", "", dt, cluster * a->nclusters};
    }
  }
  return n;
}
enum { MAX_RATES = 3 * DT_COUNT * (GS_MAX_UNIT_KINDS + GS_MAX_CORE_KINDS + 2) };

/* ---------------------------------------------------------------- memory figures */

typedef struct {
  double lb_cluster, gb_cluster, cluster_total, chip_lb, chip_gb, chip_total;
} OnChip;
static OnChip onchip(const GsArch *a) {
  OnChip o = {0};
  for (int k = 0; k < a->ncore_kinds; k++)
    o.lb_cluster += (double)a->core_kinds[k].lb_bytes * a->core_kinds[k].count;
  o.gb_cluster = (double)a->gb_bytes;
  o.cluster_total = o.lb_cluster + o.gb_cluster;
  o.chip_lb = o.lb_cluster * a->nclusters;
  o.chip_gb = o.gb_cluster * a->nclusters;
  o.chip_total = o.chip_lb + o.chip_gb;
  return o;
}

static double ddr_bytes_per_s(const GsArch *a) { return a->ddr_bandwidth_gb_per_s * 1e9; }

/* ---------------------------------------------------------------- text */

static void unit_summary(const GsUnitKind *u, char *buf, size_t n) {
  char cls[64];
  const ArchKey *ck = NULL;
  for (int i = 0; i < arch_nkeys; i++)
    if (arch_keys[i].sec == SEC_UNIT && arch_keys[i].type == KT_CLASS) ck = &arch_keys[i];
  arch_format_value(ck, NULL, u, cls, sizeof cls);
  if (!(u->caps & CAP_MATRIX)) snprintf(buf, n, "%s (%s)", u->name, cls);
  else if (u->shape == MAT_CUBE)
    snprintf(buf, n, "%s (%s; cube %dx%dx%d)", u->name, cls, u->cube_m, u->cube_n, u->cube_k);
  else
    snprintf(buf, n, "%s (%s; systolic %dx%d, %s)", u->name, cls, u->sys_rows, u->sys_cols,
             u->dataflow == DF_WEIGHT_STATIONARY  ? "weight-stationary"
             : u->dataflow == DF_INPUT_STATIONARY ? "input-stationary"
                                                  : "output-stationary");
}

/* One table: rows unit kinds, core kinds, cluster, chip; columns the dtypes with a non-zero
 * chip rate, first per cycle, then per second. */
static void print_rate_table(const GsArch *a, FILE *out, RateKind kind, const char *title,
                             const char *per_cycle, const char *per_s) {
  int cols[DT_COUNT], nc = 0, nt = kind == R_SCALAR ? 1 : DT_COUNT;
  for (int t = 0; t < nt; t++) {
    double cl = 0;
    for (int k = 0; k < a->ncore_kinds; k++)
      cl += core_rate(a, &a->core_kinds[k], kind, t) * a->core_kinds[k].count;
    if (cl > 0) cols[nc++] = t;
  }
  if (nc == 0) return;
  double hz = a->clock_mhz * 1e6, mul = kind == R_MATRIX ? 2 : 1;
  char b[64];
  fprintf(out, "#\n# %s\n#   %-20s %-*s  %s\n#   %-20s", title, "", nc * 10, per_cycle, per_s,
          "level");
  for (int pass = 0; pass < 2; pass++)
    for (int c = 0; c < nc; c++)
      fprintf(out, "%10s%s", kind == R_SCALAR ? "-" : arch_dtype_name((GsDtype)cols[c]),
              pass == 0 && c == nc - 1 ? "  " : "");
  fputc('\n', out);
  int nrows = a->nunit_kinds + a->ncore_kinds + 2;
  for (int r = 0; r < nrows; r++) {
    double v[DT_COUNT] = {0};
    if (r < a->nunit_kinds) {
      if (!unit_used(a, r)) continue;
      snprintf(b, sizeof b, "unit %s", a->units[r].name);
      for (int c = 0; c < nc; c++) v[c] = unit_rate(&a->units[r], kind, cols[c]);
    } else if (r < a->nunit_kinds + a->ncore_kinds) {
      const GsCoreKind *ck = &a->core_kinds[r - a->nunit_kinds];
      snprintf(b, sizeof b, "core %s", ck->name);
      for (int c = 0; c < nc; c++) v[c] = core_rate(a, ck, kind, cols[c]);
    } else {
      int chip = r == nrows - 1;
      if (chip) snprintf(b, sizeof b, "chip (%d cluster%s)", a->nclusters, a->nclusters == 1 ? "" : "s");
      else snprintf(b, sizeof b, "cluster (%d core%s)", a->cores_per_cluster,
                    a->cores_per_cluster == 1 ? "" : "s");
      for (int c = 0; c < nc; c++) {
        for (int k = 0; k < a->ncore_kinds; k++)
          v[c] += core_rate(a, &a->core_kinds[k], kind, cols[c]) * a->core_kinds[k].count;
        if (chip) v[c] *= a->nclusters;
      }
    }
    int any = 0;
    for (int c = 0; c < nc; c++) any |= v[c] > 0;
    if (!any) continue;
    fprintf(out, "#   %-20s", b);
    for (int c = 0; c < nc; c++) fprintf(out, "%10.10g%s", v[c], c == nc - 1 ? "  " : "");
    for (int c = 0; c < nc; c++) {
      char si[32];
      fmt_si(v[c] * hz * mul, si, sizeof si);
      fprintf(out, "%10s", si);
    }
    fputc('\n', out);
  }
}

static void describe_text(const GsArch *a, FILE *out) {
  char b1[128], b2[128], b3[128];
  SecRef secs[4 + GS_MAX_CORE_KINDS + GS_MAX_UNIT_KINDS];
  int nsec = section_list(a, secs);
  fprintf(out, "# gtsim architecture %s (from %s)\n", a->name, a->source_file);
  long long ncores = (long long)a->cores_per_cluster * a->nclusters;
  fprintf(out, "# %d cluster%s x %d core%s at %g MHz; matrix peak", a->nclusters,
          a->nclusters == 1 ? "" : "s", a->cores_per_cluster, a->cores_per_cluster == 1 ? "" : "s",
          a->clock_mhz);
  int npk = 0;
  for (int t = 0; t < DT_COUNT; t++) {
    double f = arch_peak_flops(a, (GsDtype)t);
    if (f <= 0) continue;
    fmt_si(f, b1, sizeof b1);
    fprintf(out, "%s %sFLOP/s %s", npk++ ? "," : "", b1, arch_dtype_name((GsDtype)t));
  }
  fmt_bytes(onchip(a).chip_total, b1, sizeof b1);
  fprintf(out, "%s; DDR %g GB/s; %s on chip (%lld cores)\n", npk ? "" : " none",
          a->ddr_bandwidth_gb_per_s, b1, ncores);
  fprintf(out, "# Resolved configuration: file values (with their comments: provenance), --set "
               "overrides and defaults.\n");
  for (int s = 0; s < nsec; s++) {
    const void *obj = arch_section_obj(a, secs[s].kind, secs[s].index);
    const char *sec = sec_label(a, secs[s].kind, secs[s].index, b1, sizeof b1);
    fprintf(out, "\n[%s]\n", sec);
    for (int i = 0; i < arch_nkeys; i++) {
      const ArchKey *k = &arch_keys[i];
      if (k->sec != secs[s].kind || !arch_key_applies(k, a, obj)) continue;
      arch_format_value(k, a, obj, b2, sizeof b2);
      const char *note = arch_note(a, sec, k->key);
      int w = 30 - (int)strlen(k->key);
      if (note) fprintf(out, "%s = %-*s ; %s\n", k->key, w > 1 ? w : 1, b2, note);
      else fprintf(out, "%s = %s\n", k->key, b2);
    }
  }

  long long cores = (long long)a->cores_per_cluster * a->nclusters;
  fprintf(out, "\n# ---- Derived figures ----\n");
  fprintf(out, "# Topology: %d cluster%s x %d core%s = %lld core%s, clock %g MHz\n",
          a->nclusters, a->nclusters == 1 ? "" : "s", a->cores_per_cluster,
          a->cores_per_cluster == 1 ? "" : "s", cores, cores == 1 ? "" : "s", a->clock_mhz);
  int first = 0;
  for (int k = 0; k < a->ncore_kinds; k++) {
    const GsCoreKind *c = &a->core_kinds[k];
    if (c->count == 1) snprintf(b1, sizeof b1, "core %d", first);
    else snprintf(b1, sizeof b1, "cores %d-%d", first, first + c->count - 1);
    fprintf(out, "#   core kind %-8s %s of each cluster; units:", c->name, b1);
    for (int i = 0; i < c->nunits; i++) {
      unit_summary(&a->units[c->unit[i]], b1, sizeof b1);
      fprintf(out, "%s %s", i ? "," : "", b1);
    }
    fputc('\n', out);
    first += c->count;
  }

  static const char *titles[] = {"Peak matrix compute", "Peak vector throughput",
                                 "Peak scalar throughput"};
  static const char *per_cycle[] = {"MAC/cycle", "elem/cycle", "ops/cycle"};
  static const char *per_s[] = {"FLOP/s (1 MAC = 2 FLOP)", "elem/s", "ops/s"};
  for (int kind = R_MATRIX; kind <= R_SCALAR; kind++)
    print_rate_table(a, out, (RateKind)kind, titles[kind], per_cycle[kind], per_s[kind]);

  fprintf(out, "#\n# Memory\n");
  fmt_bytes((double)a->ddr_capacity_bytes, b1, sizeof b1);
  fprintf(out,
          "#   DDR: %g GB/s = %.4g B/cycle (%.4g B/cycle per channel x %d), latency %g ns = "
          "%d cycles, %s\n",
          a->ddr_bandwidth_gb_per_s, a->ddr_bytes_per_cycle,
          a->ddr_bytes_per_cycle / a->ddr_channels, a->ddr_channels, a->ddr_latency_ns,
          a->ddr_latency_cycles, b1);
  if (a->ddr_model == DDR_DRAM)
    fprintf(out,
            "#   DRAM model: %d banks x %d B rows per channel; row miss (tRP + tRCD) %.4g cycles, "
            "activates in other banks every %.4g cycles, turnaround w->r %.4g / r->w %.4g cycles, refresh x%.4f channel time\n",
            a->ddr_banks, a->ddr_row_bytes, a->ddr_miss_cycles, a->ddr_act_cycles, a->ddr_wtr_cycles,
            a->ddr_rtw_cycles, a->ddr_refresh_factor);
  else fprintf(out, "#   DRAM model: ideal (bytes / bandwidth)\n");
  for (int k = 0; k < a->ncore_kinds; k++) {
    const GsCoreKind *c = &a->core_kinds[k];
    fmt_bytes((double)c->lb_bytes, b1, sizeof b1);
    if (c->lb_bytes > 0)
      fprintf(out, "#   LB per core (%s): %s, %d port%s x %g B/cycle\n", c->name, b1,
              c->lb_ports, c->lb_ports == 1 ? "" : "s", c->lb_port_bytes_per_cycle);
    else fprintf(out, "#   LB per core (%s): none\n", c->name);
  }
  OnChip o = onchip(a);
  fmt_bytes(o.lb_cluster, b1, sizeof b1);
  fmt_bytes(o.gb_cluster, b2, sizeof b2);
  fmt_bytes(o.cluster_total, b3, sizeof b3);
  fprintf(out, "#   per cluster: LB %s + GB %s = %s", b1, a->gb_bytes ? b2 : "none (0)", b3);
  if (a->gb_bytes)
    fprintf(out, "; GB %d port%s x %g B/cycle", a->gb_ports, a->gb_ports == 1 ? "" : "s",
            a->gb_port_bytes_per_cycle);
  fprintf(out, "\n");
  fmt_bytes(o.chip_lb, b1, sizeof b1);
  fmt_bytes(o.chip_gb, b2, sizeof b2);
  fmt_bytes(o.chip_total, b3, sizeof b3);
  fprintf(out, "#   chip: LB %s + GB %s = %s on chip\n", b1, a->gb_bytes ? b2 : "none (0)", b3);
  fprintf(out, "#   interconnect: %g B/cycle per core link, cluster link %g B/cycle\n",
          a->noc_link_bytes_per_cycle, a->cluster_link_bytes_per_cycle);

  fprintf(out, "#\n# Machine balance (chip peak FLOP/s / DDR bytes/s)\n");
  for (int t = 0; t < DT_COUNT; t++) {
    double f = arch_peak_flops(a, (GsDtype)t);
    if (f > 0)
      fprintf(out, "#   %-7s %10.1f FLOP/byte\n", arch_dtype_name((GsDtype)t),
              f / ddr_bytes_per_s(a));
  }  energy_describe(a, out, 0);
}

/* ---------------------------------------------------------------- JSON */

static void describe_json(const GsArch *a, FILE *out) {
  char b[256];
  SecRef secs[4 + GS_MAX_CORE_KINDS + GS_MAX_UNIT_KINDS];
  int nsec = section_list(a, secs);
  fputs("{\n  \"name\": ", out);
  util_json_str(out, a->name);
  fputs(",\n  \"source\": ", out);
  util_json_str(out, a->source_file);
  fputs(",\n  \"config\": {", out);
  for (int s = 0; s < nsec; s++) {
    const void *obj = arch_section_obj(a, secs[s].kind, secs[s].index);
    fprintf(out, "%s\n    ", s ? "," : "");
    util_json_str(out, sec_label(a, secs[s].kind, secs[s].index, b, sizeof b));
    fputs(": {", out);
    int nk = 0;
    for (int i = 0; i < arch_nkeys; i++) {
      const ArchKey *k = &arch_keys[i];
      if (k->sec != secs[s].kind || !arch_key_applies(k, a, obj)) continue;
      arch_format_value(k, a, obj, b, sizeof b);
      fprintf(out, "%s\"%s\": ", nk++ ? ", " : "", k->key);
      if (k->type == KT_INT || k->type == KT_FLOAT || k->type == KT_SIZE) {
        fputs(b, out);
      } else if (k->type == KT_CLASS || k->type == KT_UNITS) { /* lists: JSON arrays */
        fputc('[', out);
        char *item = b;
        for (int first = 1; item; first = 0) {
          char *sep = strstr(item, ", ");
          if (sep) *sep = 0;
          if (!first) fputs(", ", out);
          util_json_str(out, item);
          item = sep ? sep + 2 : NULL;
        }
        fputc(']', out);
      } else {
        util_json_str(out, b);
      }
    }
    fputs("}", out);
  }
  fputs("\n  },\n  \"derived\": {\n", out);
  fprintf(out, "    \"clusters\": %d, \"cores_per_cluster\": %d, \"cores_total\": %lld,\n",
          a->nclusters, a->cores_per_cluster, (long long)a->cores_per_cluster * a->nclusters);
  fputs("    \"core_numbering\": [", out);
  int first = 0;
  for (int k = 0; k < a->ncore_kinds; k++) {
    fprintf(out, "%s{\"kind\": ", k ? ", " : "");
    util_json_str(out, a->core_kinds[k].name);
    fprintf(out, ", \"first\": %d, \"count\": %d}", first, a->core_kinds[k].count);
    first += a->core_kinds[k].count;
  }
  fputs("],\n", out);
  fprintf(out,
          "    \"clock_hz\": %.15g, \"ddr_bytes_per_cycle\": %.15g, "
          "\"ddr_bytes_per_cycle_per_channel\": %.15g, \"ddr_latency_cycles\": %d,\n",
          a->clock_mhz * 1e6, a->ddr_bytes_per_cycle, a->ddr_bytes_per_cycle / a->ddr_channels,
          a->ddr_latency_cycles);
  Rate rates[MAX_RATES];
  int nr = collect_rates(a, rates);
  static const char *names[] = {"peak_matrix", "peak_vector", "peak_scalar"};
  static const char *unit[] = {"macs", "elems", "ops"};
  for (int kind = R_MATRIX; kind <= R_SCALAR; kind++) {
    fprintf(out, "    \"%s\": [", names[kind]);
    int n = 0;
    for (int i = 0; i < nr; i++) {
      const Rate *r = &rates[i];
      if (r->kind != (RateKind)kind) continue;
      fprintf(out, "%s\n      {\"level\": \"%s\", \"name\": ", n++ ? "," : "", r->level);
      util_json_str(out, r->name);
      if (r->dtype >= 0) fprintf(out, ", \"dtype\": \"%s\"", arch_dtype_name((GsDtype)r->dtype));
      fprintf(out, ", \"%s_per_cycle\": %.15g, \"%s_per_s\": %.15g", unit[kind], r->per_cycle,
              unit[kind], r->per_cycle * a->clock_mhz * 1e6);
      if (kind == R_MATRIX)
        fprintf(out, ", \"flops\": %.15g", 2 * r->per_cycle * a->clock_mhz * 1e6);
      fputc('}', out);
    }
    fputs(n ? "\n    ],\n" : "],\n", out);
  }
  OnChip o = onchip(a);
  fputs("    \"onchip_bytes\": {\"lb_per_core\": {", out);
  for (int k = 0; k < a->ncore_kinds; k++) {
    fprintf(out, "%s", k ? ", " : "");
    util_json_str(out, a->core_kinds[k].name);
    fprintf(out, ": %lld", (long long)a->core_kinds[k].lb_bytes);
  }
  fprintf(out,
          "}, \"lb_per_cluster\": %.15g, \"gb_per_cluster\": %.15g, \"cluster_total\": %.15g, "
          "\"chip_lb\": %.15g, \"chip_gb\": %.15g, \"chip_total\": %.15g},\n",
          o.lb_cluster, o.gb_cluster, o.cluster_total, o.chip_lb, o.chip_gb, o.chip_total);
  fputs("    \"machine_balance_flop_per_byte\": {", out);
  int n = 0;
  for (int t = 0; t < DT_COUNT; t++) {
    double f = arch_peak_flops(a, (GsDtype)t);
    if (f > 0)
      fprintf(out, "%s\"%s\": %.15g", n++ ? ", " : "", arch_dtype_name((GsDtype)t),
              f / ddr_bytes_per_s(a));
  }
  fputs("}\n  },\n  \"provenance\": {", out);
  for (int i = 0; i < a->nnotes; i++) {
    snprintf(b, sizeof b, "%s.%s", a->notes[i].section, a->notes[i].key);
    fputs(i ? ",\n    " : "\n    ", out);
    util_json_str(out, b);
    fputs(": ", out);
    util_json_str(out, a->notes[i].note);
  }
  fputs(a->nnotes ? "\n  },\n  " : "},\n  ", out);
  energy_describe(a, out, 1);
  fputs("\n}\n", out);
}

void arch_describe(const GsArch *a, FILE *out, int json) {
  if (json) describe_json(a, out);
  else describe_text(a, out);
}

/* ---------------------------------------------------------------- docs/config.md */

/* The hand-written part of docs/config.md, in pieces (ISO C limits one literal to 4095). */
static const char *const doc_intro[] = {
    "# Architecture config format (`.cfg`)\n"
    "\n"
    "<!-- Generated by `build/gtsim --config-doc` from the schema table in sched/arch.c.\n"
    "     Do not edit: change the table (or the intro in sched/arch_report.c) and run\n"
    "     `build/gtsim --config-doc > docs/config.md`. tests/cli/test_config.sh fails when\n"
    "     this file differs from the generated text. -->\n"
    "\n"
    "An architecture config describes one accelerator in the abstraction of GraphTurbo\n"
    "(OSDI'23): `clusters` identical clusters; each cluster has a global buffer (GB, may be\n"
    "absent), an interconnect (NoC), DMA engines to DDR, and cores of one or more *core kinds*;\n"
    "each core has a local buffer (LB, may be absent), per-core DMA engines and compute units of\n"
    "*unit kinds* (matrix, vector, scalar, or several at once). Every timing figure the\n"
    "simulator uses comes from this file; none is a literal in the model code.\n"
    "\n"
    "Shipped configs (`configs/`), each value tagged with its provenance ([P] published,\n"
    "[D] derived, [A] assumed; sources in the file's comments):\n"
    "\n"
    "| File | Chip | Clusters x cores |\n"
    "|---|---|---|\n"
    "| stcp920.cfg | Stream Computing STC P920 as the GraphTurbo paper models it (64 KiB LB) | 4 x 8 |\n"
    "| stcp920-hw.cfg | the same chip with its 1.5 MiB per-core buffers (CARRV'21) | 4 x 8 |\n"
    "| ascend910.cfg | Huawei Ascend 910 (32 DaVinci cores sharing the 32 MiB L2) | 1 x 32 |\n"
    "| ascend310.cfg | Huawei Ascend 310 | 1 x 2 |\n"
    "| goya.cfg | Habana Goya HL-1000: 8 TPC cores with LB + 1 GEMM core without LB | 1 x 9 |\n"
    "| ipu-gc2.cfg | Graphcore C2 card: 2 GC2 IPUs of 1216 tiles, no GB | 2 x 1216 |\n"
    "| tpuv1.cfg | Google TPU v1: one 256x256 weight-stationary systolic array | 1 x 1 |\n"
    "| tiny.cfg | round-number machine for tests | 2 x 2 |\n"
    "\n"
    "Modelling decisions in the shipped configs (details in each file's comments):\n"
    "\n"
    "- A gtsim cluster is the set of cores that share one GB. The Ascend 910's 32 cores share\n"
    "  one 32 MiB L2, so ascend910.cfg is 1 x 32 (its 4 groups of 8 have no buffer of their\n"
    "  own); GraphTurbo's figure draws one group (`--set core.aicore.count=8`).\n"
    "- Several per-core buffers become one LB of their total size (Ascend: L1 + L0A + L0B +\n"
    "  L0C + UB; STCP920 hardware: data IO + weight + intermediate buffers).\n"
    "- A matrix engine published only as a MAC count is a cube whose block gives that count\n"
    "  (STCP920's 64x32 MAC matrix: cube 64x32x1; the IPU tile's AMP: 4x4x2 = 32 fp16 MAC).\n"
    "- Where nothing is published (latencies, port counts, vector op costs, Goya's GEMM size\n"
    "  and DDR bandwidth) the value is marked [A] and chosen to be plausible, never tuned to a\n"
    "  result.\n"
    "\n"
    "`gtsim --arch FILE --describe` prints the resolved config — each value with the comment of\n"
    "its line, its provenance (`--set KEY=VALUE` for an override; JSON: `provenance`) — and its\n"
    "derived figures (peak MAC/s and FLOP/s per dtype per unit, core, cluster and chip; DDR\n"
    "bytes/cycle; on-chip bytes per level; machine balance; with an `[energy]` section, the\n"
    "energy per FLOP at full utilization); add `--json` for the same as JSON.\n"
    "\n"
    "Energy: an optional `[energy]` section (the node, DDR, GB, interconnect and DMA energies,\n"
    "static powers) plus energy keys in `[core.NAME]` (the LB) and `[unit.NAME]` (per MAC, per\n"
    "vector element pass, per scalar op, static power). Without the section, runs report no\n"
    "energy and any energy key is an error. Units are in the key names (`_pj`, `_pj_per_byte`,\n"
    "`_mw`); where the values come from and how they scale between nodes: docs/energy.md.\n"
    "\n",
    "## Syntax\n"
    "\n"
    "INI, parsed with libinih: `[section]` headers and `key = value` lines. Comments start\n"
    "with `;` or `#` at the beginning of a line, or with `;` after a blank inside a line.\n"
    "Indentation is ignored; there are no continuation lines; a line may hold at most 198\n"
    "characters before its comment. Keys and section names are case-sensitive. Numbers are\n"
    "decimal (`1e3` and `0.5` for numbers; integers without a fraction or exponent); `inf`,\n"
    "`nan` and hexadecimal are rejected. Lists are comma-separated.\n"
    "\n"
    "Sections: `[chip]`, `[ddr]`, `[cluster]` exactly once each; `[energy]` at most once; one\n"
    "or more `[core.NAME]`; one or more `[unit.NAME]`. NAME is letters, digits, `_` or `-`.\n"
    "Core kinds are numbered in file order: inside a cluster, cores `0 .. count-1` are the\n"
    "first core kind, the next `count` cores the second kind, and so on (Goya: cores 0-7 are\n"
    "`tpc`, core 8 is `gemm`).\n"
    "A core's `units` list gives its compute queues in order. A `[unit.NAME]` may be used by\n"
    "several core kinds; a unit kind no core uses is allowed (it is kept for `--set`).\n"
    "\n"
    "Units are in the key names: `_kib` = 1024 bytes, `_mib` = 2^20 bytes, `_mhz` = 10^6 Hz,\n"
    "`_gb_per_s` = 10^9 bytes/s, `_ns`, `_cycles` (core clock cycles), `_bytes_per_cycle`,\n"
    "`_pj` (picojoules), `_pj_per_byte`, `_pj_per_mac`, `_mw` (milliwatts), `_nm`, `_v` (volts).\n"
    "\n",
    "## Rules\n"
    "\n"
    "- Every key below has a type, a range and either a default or *required*. A required key\n"
    "  that is missing, an unknown section or key, a value of the wrong type or out of range,\n"
    "  a key given twice and a repeated section are errors.\n"
    "- *Applies when*: keys of an absent buffer (`gb_*` when `gb_kib = 0`, `lb_*` when\n"
    "  `lb_kib = 0`) are not required and, if set, checked and ignored, so a sweep can set a\n"
    "  buffer size to 0 without editing the file. Keys of a unit class or shape the unit does not\n"
    "  have (`cube_m` on a systolic unit, `lanes_fp16` on a matrix-only unit, `shape` on a vector\n"
    "  unit) are errors: they show a mistaken belief about the unit.\n"
    "- Consistency: a core kind's `units` must name defined `[unit.NAME]` sections, each once\n"
    "  (a core with two units of one kind uses two unit sections); a matrix unit needs a `shape`\n"
    "  and at least one `rate_<dtype>` > 0; a vector unit at least one `lanes_<dtype>` > 0;\n"
    "  `ddr.interleave_bytes` is a multiple of `ddr.burst_bytes`; a cluster needs a core kind.\n"
    "  At most 8 core kinds, 16 unit kinds and 8 units per core, and 16384 cores on the chip\n"
    "  (clusters × cores per cluster: what the simulator elaborates, docs/timing.md \"Limits\").\n"
    "  The ranges below keep the simulator's arithmetic exact (docs/timing.md, \"Limits\").\n"
    "- Matrix rates: a unit's MAC/cycle for dtype `t` is `base × rate_t`, where base is\n"
    "  `cube_m·cube_n·cube_k` (one block per cycle) or `systolic_rows·systolic_cols`. `rate_int8\n"
    "  = 2` says the unit does twice as many int8 MACs per cycle as its base (Ascend's cube:\n"
    "  16x16x16 fp16 = 4096 MAC/cycle, 8192 int8). `rate_t = 0`: the unit cannot compute `t`.\n"
    "- Vector cost: an op on `e` elements of dtype `t` costs `vector_latency_cycles +\n"
    "  ceil(e / lanes_t) × Σ passes(op, class) × cost_class` cycles, the passes per op class\n"
    "  being the VOP table of sched/isa.def.\n"
    "- Derived: DDR bytes/cycle = `bandwidth_gb_per_s × 1000 / clock_mhz`; DDR latency in\n"
    "  cycles = `ceil(latency_ns × clock_mhz / 1000)`; peak FLOP/s = 2 × MAC/cycle × clock.\n"
    "\n"
    "Errors are printed as `FILE:LINE: error: SECTION.KEY: message` and gtsim exits with status\n"
    "1. A missing key is reported at its section's header line; a missing section at the last\n"
    "line. Up to 20 errors are printed before gtsim gives up.\n"
    "\n",
    "## Overrides: `--set section.key=value`\n"
    "\n"
    "`--set` (repeatable) overrides one key after the file is read and is validated exactly\n"
    "like a file line; its messages start with `--set section.key=value: error:`. The section\n"
    "is everything before the last dot (`--set core.pe.lb_kib=128`, `--set unit.mme.rate_int8=4`).\n"
    "The section must exist in the file (`--set` does not create core or unit kinds). When the\n"
    "same key is set twice, the last `--set` wins.\n"
    "\n",
    "## Example\n"
    "\n"
    "```ini\n"
    "[chip]\n"
    "name = example\n"
    "clock_mhz = 1000\n"
    "clusters = 1\n"
    "\n"
    "[ddr]\n"
    "channels = 2\n"
    "bandwidth_gb_per_s = 64\n"
    "latency_ns = 100\n"
    "capacity_mib = 4096\n"
    "\n"
    "[cluster]\n"
    "gb_kib = 0                  ; no global buffer: gb_* keys are not needed\n"
    "noc_link_bytes_per_cycle = 32\n"
    "noc_latency_cycles = 4\n"
    "dma_engines = 2\n"
    "dma_latency_cycles = 20\n"
    "\n"
    "[core.pe]\n"
    "count = 4\n"
    "lb_kib = 256\n"
    "lb_port_bytes_per_cycle = 128\n"
    "lb_latency_cycles = 2\n"
    "units = mme, vec\n"
    "\n"
    "[unit.mme]\n"
    "class = matrix\n"
    "shape = systolic\n"
    "systolic_rows = 32\n"
    "systolic_cols = 32\n"
    "dataflow = ws\n"
    "rate_int8 = 1\n"
    "matrix_latency_cycles = 64\n"
    "\n"
    "[unit.vec]\n"
    "class = vector\n"
    "lanes_fp16 = 32\n"
    "cost_simple = 1\n"
    "cost_mul = 1\n"
    "cost_div = 4\n"
    "cost_transc = 8\n"
    "cost_reduce = 2\n"
    "vector_latency_cycles = 4\n"
    "```\n",
};

static const char *type_text(const ArchKey *k, char *buf, size_t n) {
  switch (k->type) {
  case KT_STR: return "text";
  case KT_INT: return "integer";
  case KT_FLOAT: return "number";
  case KT_SIZE: return "integer";
  case KT_ENUM:
    snprintf(buf, n, "`%s`", k->choices);
    for (char *q = buf; *q; q++)
      if (*q == '|') *q = '/';
    return buf;
  case KT_CLASS: return "list of `matrix`/`vector`/`scalar`";
  case KT_UNITS: return "list of unit kinds";
  }
  return "?";
}

static const char *doc_when(ArchWhen w) {
  switch (w) {
  case KW_ALWAYS: return "always";
  case KW_GB: return "`gb_kib` > 0";
  case KW_LB: return "`lb_kib` > 0";
  case KW_DRAM: return "`model = dram`";
  case KW_MATRIX: return "class has matrix";
  case KW_CUBE: return "`shape = cube`";
  case KW_SYSTOLIC: return "`shape = systolic`";
  case KW_VECTOR: return "class has vector";
  case KW_SCALAR: return "class has scalar";
  case KW_ENERGY: return "`[energy]` exists";
  case KW_E_GB: return "`[energy]` exists, `gb_kib` > 0";
  case KW_E_LB: return "`[energy]` exists, `lb_kib` > 0";
  case KW_E_MATRIX: return "`[energy]` exists, class has matrix";
  case KW_E_VECTOR: return "`[energy]` exists, class has vector";
  case KW_E_SCALAR: return "`[energy]` exists, class has scalar";
  }
  return "";
}

void arch_write_config_doc(FILE *out) {
  static const char *heads[SEC_KINDS] = {
      "`[chip]` — the chip", "`[ddr]` — off-chip memory (DDR or HBM)",
      "`[cluster]` — per cluster: global buffer, interconnect, DMA",
      "`[core.NAME]` — a core kind (one or more sections)",
      "`[unit.NAME]` — a compute unit kind (one or more sections)",
      "`[energy]` — per-action energy and static power (optional; docs/energy.md)"};
  for (size_t i = 0; i < sizeof doc_intro / sizeof doc_intro[0]; i++) fputs(doc_intro[i], out);
  fputs("\n## Keys\n", out);
  for (int s = SEC_CHIP; s < SEC_KINDS; s++) {
    fprintf(out, "\n### %s\n\n", heads[s]);
    fputs("| Key | Type | Unit | Range | Default | Applies when | Description |\n", out);
    fputs("|---|---|---|---|---|---|---|\n", out);
    for (int i = 0; i < arch_nkeys; i++) {
      const ArchKey *k = &arch_keys[i];
      if ((int)k->sec != s) continue;
      char tb[64], range[64];
      const char *t = type_text(k, tb, sizeof tb);
      if (k->type == KT_INT || k->type == KT_FLOAT || k->type == KT_SIZE) {
        if (k->min_exclusive) snprintf(range, sizeof range, "> %.15g, ≤ %.15g", k->min, k->max);
        else snprintf(range, sizeof range, "%s%.15g … %.15g", k->zero_ok ? "0, or " : "", k->min, k->max);
      } else snprintf(range, sizeof range, "—");
      fprintf(out, "| `%s` | %s | %s | %s | %s%s%s | %s | %s |\n", k->key, t,
              *k->unit ? k->unit : "—", range, k->def ? "`" : "", k->def ? k->def : "required",
              k->def ? "`" : "", doc_when(k->when), k->desc);
    }
  }
}
