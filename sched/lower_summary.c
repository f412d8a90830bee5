/* lower_summary.c — a lowering as the report sees it (summary.h): one task per kernel of the
 * last iteration's plan with the emitter's tally, graphturbo's instances as groups of tasks,
 * the run's totals. Reads the plan and the tally; writes only the summary (in the lowering's
 * arena).
 */
#include "lower.h"
#include "summary.h"

#include <string.h>

/* Peak FLOP/s of the cores that run kernel k (all their units at its compute dtypes). */
static double kernel_peak(const GsLowered *l, const GsKernel *k) {
  const GsArch *a = l->arch;
  const GsCoreKind *ck = &a->core_kinds[k->core_kind];
  double per_core = 0;
  for (int i = 0; i < ck->nunits; i++) {
    const GsUnitKind *u = &a->units[ck->unit[i]];
    double m = 0, v = 0;
    if (u->caps & CAP_MATRIX) m = 2 * arch_unit_macs_per_cycle(u, k->cdt_head);
    if (u->caps & CAP_VECTOR) v = 2.0 * u->lanes[k->cdt_tail];
    per_core += m > v ? m : v;
  }
  int clusters = k->split_clusters ? a->nclusters : 1;
  return per_core * k->pr * k->pc * clusters * a->clock_mhz * 1e6;
}

/* "conv2d+relu": the kernel's op kinds, head first. */
static const char *kernel_ops(const GsLowered *l, const GsKernel *k) {
  size_t n = 1;
  for (int i = 0; i < k->nops; i++) n += strlen(graph_opkind_name(l->graph->ops[k->ops[i]].kind)) + 1;
  char *buf = arena_alloc(l->arena, n);
  for (int i = 0; i < k->nops; i++) {
    if (i) strcat(buf, "+");
    strcat(buf, graph_opkind_name(l->graph->ops[k->ops[i]].kind));
  }
  return buf;
}

static void fill_task(const GsLowered *l, int ki, GsTaskSum *t) {
  const GsKernel *k = &l->kernels[ki];
  const GsGraph *g = l->graph;
  t->name = k->name;
  t->ops = kernel_ops(l, k);
  t->out_level = l->place[l->graph->ops[k->ops[k->nops - 1]].out[0]].level;
  t->cores = k->pr * k->pc;
  for (int si = k->slice0; si < k->slice0 + k->nslices; si++)
    t->spilled += l->slices[si].level < l->slices[si].want;
  if (!lower_keeps_slices(l))
    for (int j = 0; j < g->ops[k->ops[k->nops - 1]].nout; j++) {
      const GsTensorPlace *p = &l->place[g->ops[k->ops[k->nops - 1]].out[j]];
      t->spilled += p->level < p->want;
    }
  t->flops = k->flops;
  t->peak_flops = kernel_peak(l, k);
  if (ki < l->tally.ntasks) t->tally = l->tally.task[ki];
}

const GsSchedSummary *lower_summary(const GsLowered *l) {
  GsSchedSummary *m = arena_alloc(l->arena, sizeof *m);
  m->arch = l->arch;
  int gt = l->opt.sched == SCHED_GRAPHTURBO;
  if (!gt) snprintf(m->strategy, sizeof m->strategy, "%s", lower_sched_name(l->opt.sched));
  else snprintf(m->strategy, sizeof m->strategy, "%s:%s", lower_sched_name(l->opt.sched),
                gt_ladder_name(l->opt.gt_level));
  m->level = gt ? gt_ladder_name(l->opt.gt_level) : NULL;
  m->order = gt ? l->gt_order : NULL;
  m->batch = l->batch;
  m->dtype = l->graph->dtype;
  m->cast_from = l->graph->cast_from;
  m->per_cluster = l->per_cluster;
  m->iterations = l->iterations;
  m->ntasks = l->nkernels;
  m->task = arena_alloc(l->arena, sizeof(GsTaskSum) * (size_t)(l->nkernels + 1));
  for (int ki = 0; ki < l->nkernels; ki++) fill_task(l, ki, &m->task[ki]);
  m->ngroups = l->ninsts;
  m->group = arena_alloc(l->arena, sizeof(GsGroupSum) * (size_t)(l->ninsts + 1));
  for (int ri = 0; ri < l->ninsts; ri++) {
    const GtRunInst *in = &l->insts[ri];
    m->group[ri] = (GsGroupSum){in->group, in->index, in->s0, in->s1 > 0 ? in->s1 : l->per_cluster,
                                in->k0, in->k1};
  }
  m->nnotes = l->nnotes;
  m->notes = l->notes;
  m->nepisodes = l->tally.nepisodes;
  m->episode_task = l->tally.episode_task;
  m->spills = l->spills;
  m->spill_bytes = l->spill_bytes;
  m->outputs_ddr = l->outputs_ddr;
  m->outputs_gb = l->outputs_gb;
  m->outputs_lb = l->outputs_lb;
  m->total_flops = l->total_flops;
  m->peak_flops = l->peak_flops;
  m->compulsory_ddr_bytes = l->compulsory_ddr_bytes;
  return m;
}
