/* graph_stats.c — `gtsim --stats`: per op kind counts and MACs, graph totals, and the largest
 * live activation, as text or JSON (docs/gtg.md, "--stats").
 * One pass over the ops sums graph_op_cost() per kind (kinds in GS_OPKINDS order, so the
 * output is deterministic); graph_peak_live_bytes() gives the peak. Requires an inferred
 * graph; graph_infer() guarantees that none of the sums can overflow.
 */
#include <string.h>

#include "graph_priv.h"

typedef struct {
  int count;
  int64_t macs, flops, params;
} KindRow;

typedef struct {
  KindRow kind[OP_COUNT];
  GsOpCost tot;
  int64_t act_bytes; /* every tensor once: graph inputs and op outputs */
  int64_t peak;
  int peak_op;
} Stats;

static void fill_stats(const GsGraph *g, Stats *s) {
  memset(s, 0, sizeof *s);
  for (int o = 0; o < g->nops; o++) {
    GsOpCost c = graph_op_cost(g, o);
    KindRow *r = &s->kind[g->ops[o].kind];
    r->count++;
    r->macs += c.macs;
    r->flops += c.flops;
    r->params += c.params;
    s->tot.macs += c.macs;
    s->tot.flops += c.flops;
    s->tot.params += c.params;
    s->tot.param_bytes += c.param_bytes;
  }
  for (int t = 0; t < g->ntensors; t++) s->act_bytes += graph_tensor_bytes(&g->tensors[t]);
  s->peak = graph_peak_live_bytes(g, &s->peak_op);
}

/* 12345678 -> "12.35 M" (decimal units, as model sizes are usually quoted). */
static const char *human(char *buf, size_t n, double v) {
  static const char *unit[] = {"", " k", " M", " G", " T", " P"};
  int u = 0;
  while (v >= 1000 && u < 5) v /= 1000, u++;
  snprintf(buf, n, u ? "%.2f%s" : "%.0f%s", v, unit[u]);
  return buf;
}

static void print_json(FILE *out, const GsGraph *g, const Stats *s) {
  fputs("{\n  \"model\": ", out);
  util_json_str(out, g->name);
  fputs(",\n  \"file\": ", out);
  util_json_str(out, g->file);
  fprintf(out, ",\n  \"batch\": %lld,\n  \"dtype\": ", (long long)g->batch);
  util_json_str(out, arch_dtype_name(g->dtype));
  fputs(",\n  \"ops\": [", out);
  int first = 1;
  for (int k = 0; k < OP_COUNT; k++) {
    const KindRow *r = &s->kind[k];
    if (!r->count) continue;
    fprintf(out, "%s\n    {\"kind\": \"%s\", \"count\": %d, \"macs\": %lld, \"flops\": %lld, "
                 "\"params\": %lld}",
            first ? "" : ",", graph_opkind_name((GsOpKind)k), r->count, (long long)r->macs,
            (long long)r->flops, (long long)r->params);
    first = 0;
  }
  fprintf(out, "\n  ],\n  \"totals\": {\"ops\": %d, \"tensors\": %d, \"macs\": %lld, "
               "\"macs_per_sample\": %.17g, \"flops\": %lld, \"params\": %lld, "
               "\"param_bytes\": %lld, \"activation_bytes\": %lld},\n",
          g->nops, g->ntensors, (long long)s->tot.macs, (double)s->tot.macs / (double)g->batch,
          (long long)s->tot.flops, (long long)s->tot.params, (long long)s->tot.param_bytes,
          (long long)s->act_bytes);
  fprintf(out, "  \"peak_live\": {\"bytes\": %lld, \"op_index\": %d, \"op\": ", (long long)s->peak,
          s->peak_op);
  if (s->peak_op >= 0) {
    util_json_str(out, g->ops[s->peak_op].name);
    fprintf(out, ", \"line\": %d}\n}\n", g->ops[s->peak_op].line);
  } else {
    fputs("null, \"line\": 0}\n}\n", out);
  }
}

static void print_text(FILE *out, const GsGraph *g, const Stats *s) {
  char h1[32], h2[32];
  fprintf(out, "model %s (%s): batch %lld, dtype %s, %d ops, %d tensors\n\n", g->name, g->file,
          (long long)g->batch, arch_dtype_name(g->dtype), g->nops, g->ntensors);
  fprintf(out, "%-16s %7s %20s %20s %14s\n", "op kind", "count", "MACs", "FLOPs", "params");
  for (int k = 0; k < OP_COUNT; k++) {
    const KindRow *r = &s->kind[k];
    if (!r->count) continue;
    fprintf(out, "%-16s %7d %20lld %20lld %14lld\n", graph_opkind_name((GsOpKind)k), r->count,
            (long long)r->macs, (long long)r->flops, (long long)r->params);
  }
  fprintf(out, "%-16s %7d %20lld %20lld %14lld\n\n", "total", g->nops, (long long)s->tot.macs,
          (long long)s->tot.flops, (long long)s->tot.params);
  double per = (double)s->tot.macs / (double)g->batch;
  fprintf(out, "MACs              %sMAC (%sMAC per sample)\n",
          human(h1, sizeof h1, (double)s->tot.macs), human(h2, sizeof h2, per));
  fprintf(out, "FLOPs             %sFLOP\n", human(h1, sizeof h1, (double)s->tot.flops));
  fprintf(out, "parameters        %s (%sB as %s)\n", human(h1, sizeof h1, (double)s->tot.params),
          human(h2, sizeof h2, (double)s->tot.param_bytes), arch_dtype_name(g->dtype));
  fprintf(out, "activation bytes  %sB (every tensor once)\n",
          human(h1, sizeof h1, (double)s->act_bytes));
  if (s->peak_op >= 0) {
    const GsOp *op = &g->ops[s->peak_op];
    fprintf(out, "peak live         %sB (%lld bytes) at op %d '%s' (%s",
            human(h1, sizeof h1, (double)s->peak), (long long)s->peak, s->peak_op, op->name,
            graph_opkind_name(op->kind));
    if (op->line > 0) fprintf(out, ", line %d", op->line);
    fputs(")\n", out);
  }
}

void graph_print_stats_csv(FILE *out, const GsGraph *g) {
  gs_assert(g->batch >= 1);
  Stats s;
  fill_stats(g, &s);
  fputs("kind,count,macs,flops,params\n", out);
  for (int k = 0; k < OP_COUNT; k++) {
    const KindRow *r = &s.kind[k];
    if (r->count)
      fprintf(out, "%s,%d,%lld,%lld,%lld\n", graph_opkind_name((GsOpKind)k), r->count,
              (long long)r->macs, (long long)r->flops, (long long)r->params);
  }
  fprintf(out, "total,%d,%lld,%lld,%lld\n", g->nops, (long long)s.tot.macs,
          (long long)s.tot.flops, (long long)s.tot.params);
}

void graph_print_stats(FILE *out, const GsGraph *g, int json) {
  gs_assert(g->batch >= 1); /* requires graph_infer() */
  Stats s;
  fill_stats(g, &s);
  if (json) print_json(out, g, &s);
  else print_text(out, g, &s);
}
