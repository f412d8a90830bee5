/* lower_dump.c — the lowering's plan as text after a step (--dump-after STEP, lower_plan).
 * A header, then one line per kernel in execution order with the fields the steps up to STEP
 * have filled, so a dump after a step never shows what a later step decides (graphturbo's
 * placement and tiling are one loop: its placement dump leaves the tiles out). The output is a
 * pure function of the plan: ids and names in plan order, integers, no addresses.
 * docs/schedulers.md, "Lowering steps", describes every field.
 */
#include "lower.h"

#include <inttypes.h>

static const char *op_label(const GsGraph *g, int op) {
  return g->ops[op].name ? g->ops[op].name : g->tensors[g->ops[op].out[0]].name;
}

static const char *lvl(int level) {
  switch (level) {
  case LVL_DDR: return "DDR";
  case LVL_GB: return "GB";
  case LVL_LB: return "LB";
  default: return "none";
  }
}

static void header(FILE *out, const GsLowered *l, LowerStep after) {
  const GsGraph *g = l->graph;
  fprintf(out, "# lowering after %s: model %s, strategy %s", lower_step_name(after),
          g->name ? g->name : "?", lower_sched_name(l->opt.sched));
  if (l->opt.sched == SCHED_GRAPHTURBO) fprintf(out, ":%s", gt_ladder_name(l->opt.gt_level));
  fprintf(out, ", config %s\n", l->arch->name ? l->arch->name : "?");
  fprintf(out, "# batch %" PRId64 " (%" PRId64 " per cluster per iteration, %d iterations), %d kernels\n",
          l->batch, l->per_cluster, l->iterations, l->nkernels);
  if (l->opt.sched == SCHED_GRAPHTURBO && after >= LOWER_SLICES)
    fprintf(out, "# instances %d, order %s, %d slices\n", l->ninsts, l->gt_order ? l->gt_order : "?",
            l->nslices);
  for (int i = 0; i < l->nnotes; i++) fprintf(out, "# note: %s\n", l->notes[i]);
}

static void print_ops(FILE *out, const GsLowered *l, const GsKernel *k) {
  const GsGraph *g = l->graph;
  fputs(" ops=", out);
  for (int i = 0; i < k->nops; i++)
    fprintf(out, "%s%s:%s", i ? "," : "", op_label(g, k->ops[i]), graph_opkind_name(g->ops[k->ops[i]].kind));
  if (l->opt.sched != SCHED_GRAPHTURBO) return;
  if (l->ninsts == 0) {
    fprintf(out, " group=g%d", l->op_group[k->head]);
    return;
  }
  const GtRunInst *ri = &l->insts[k->inst];
  fprintf(out, " inst=g%d.%d", ri->group, ri->index);
  if (k->s1 > 0) fprintf(out, " samples=[%" PRId64 ",%" PRId64 ")", k->s0, k->s1);
  else fputs(" samples=all", out);
}

static void print_units(FILE *out, const GsLowered *l, const GsKernel *k) {
  const GsCoreKind *ck = &l->arch->core_kinds[k->core_kind];
  fprintf(out, " core=%s units=", ck->name);
  if (k->unit_head < Q_UNIT0) {
    fputs("dma", out);
    return;
  }
  fprintf(out, "%s:%s", lower_kernel_unit(l->arch, k, k->unit_head)->name, arch_dtype_name(k->cdt_head));
  if (k->nops > 1)
    fprintf(out, ",%s:%s", lower_kernel_unit(l->arch, k, k->unit_tail)->name, arch_dtype_name(k->cdt_tail));
}

/* tvm/astitch: the last op's outputs, where they live and their last reader. */
static void print_outputs(FILE *out, const GsLowered *l, const GsKernel *k, int ki) {
  const GsGraph *g = l->graph;
  const GsOp *o = &g->ops[k->ops[k->nops - 1]];
  fputs(" out=", out);
  for (int j = 0; j < o->nout; j++) {
    const GsTensorPlace *p = &l->place[o->out[j]];
    fprintf(out, "%s%s@%s", j ? "," : "", g->tensors[o->out[j]].name, lvl(p->level));
    if (p->level == LVL_GB) fprintf(out, "+%" PRId64, p->gb_offset);
    if (p->last_kernel > ki) fprintf(out, "..k%d", p->last_kernel);
  }
}

/* graphturbo: the kernel's slices, where they live (before placement: where they want to). */
static void print_slices(FILE *out, const GsLowered *l, const GsKernel *k, LowerStep after) {
  const GsGraph *g = l->graph;
  fputs(" out=", out);
  for (int j = 0; j < k->nslices; j++) {
    const GtSlice *s = &l->slices[k->slice0 + j];
    fprintf(out, "%s%s@%s", j ? "," : "", g->tensors[s->tensor].name, lvl(s->level));
    if (after >= LOWER_PLACEMENT && s->level == LVL_GB) fprintf(out, "+%" PRId64, s->gb_off);
    if (s->level != s->want) fprintf(out, "(%s)", lvl(s->want));
    if (s->first >= 0) fprintf(out, "..k%d", s->last);
  }
}

/* graphturbo: the blocks level full adds in the GB around the kernel. */
static void print_staging(FILE *out, const GsLowered *l, const GsKernel *k) {
  const GsGraph *g = l->graph;
  for (int j = 0; j < k->nslices; j++) {
    const GtSlice *s = &l->slices[k->slice0 + j];
    if (s->level == LVL_DDR && s->drain_end >= 0)
      fprintf(out, " drain=%s@GB+%" PRId64 "..k%d", g->tensors[s->tensor].name, s->drain_off,
              s->drain_end);
    if (s->level == LVL_DDR && s->ahead_from >= 0)
      fprintf(out, " ahead=%s@GB+%" PRId64 ":k%d..k%d", g->tensors[s->tensor].name, s->ahead_off,
              s->ahead_from, s->ahead_until);
  }
  if (k->w_gb_off >= 0) fprintf(out, " weights=GB+%" PRId64 ":k%d", k->w_gb_off, k->w_from);
  if (k->w_chunks > 0) fprintf(out, "/%d", k->w_chunks);
}

static void print_tiles(FILE *out, const GsLowered *l, const GsKernel *k) {
  fprintf(out, " cores=%dx%d", k->pr, k->pc);
  int64_t need = lower_tile_need(l, k);
  if (need == 0) {
    fputs(" tile=copy", out);
    return;
  }
  fprintf(out, " tile=%" PRId64 "x%" PRId64 "x%" PRId64 " order=%s w=%s%s", k->tr, k->tc, k->tk,
          k->cols_outer ? "cols" : "rows", k->w_resident ? "resident" : "streamed",
          k->w_via_gb ? ",gb" : "");
  if (l->w_kept && l->w_kept[k->head] >= 0) fprintf(out, ",kept@GB+%" PRId64, l->w_kept[k->head]);
  if (k->packed_k) fputs(" conv=packed", out);
  fprintf(out, " need=%" PRId64 " budget=%" PRId64 " est=%.0f/%.0f", need,
          lower_kernel_tile_budget(l, k), k->est_ddr_cycles, k->est_compute_cycles);
}

void lower_dump(FILE *out, const GsLowered *l, LowerStep after) {
  header(out, l, after);
  int gt = l->opt.sched == SCHED_GRAPHTURBO;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    fprintf(out, "k%d", ki);
    print_ops(out, l, k);
    if (after >= LOWER_UNITS) print_units(out, l, k);
    if (after >= LOWER_PLACEMENT) fprintf(out, " clusters=%s", k->split_clusters ? "all" : "0");
    if (gt && after >= LOWER_SLICES) print_slices(out, l, k, after);
    else if (after >= LOWER_PLACEMENT) print_outputs(out, l, k, ki);
    if (after >= LOWER_TILING) print_tiles(out, l, k);
    if (after >= LOWER_STAGING) print_staging(out, l, k);
    fputc('\n', out);
  }
}
