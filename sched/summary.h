/* summary.h — a scheduled run as the report sees it: tasks (the plan's kernels) with their ops,
 * cores, work, DDR bytes and where their output lives, optional groups of tasks (graphturbo's
 * instances), the run's totals, and which barrier episode ends which task. It names no
 * strategy's data structure: lower_summary (lower_summary.c) builds it from a lowering, and
 * report.c reads nothing else, so a new strategy reaches the report by filling it.
 */
#ifndef GS_SUMMARY_H
#define GS_SUMMARY_H

#include <stdint.h>

#include "arch.h"
#include "emit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name;            /* the kernel's name */
  const char *ops;             /* its op kinds, head first, joined by '+' */
  int out_level;               /* where its output lives between tasks: LVL_DDR/GB/LB, -1: none */
  int cores;                   /* cores per cluster it runs on */
  int spilled;                 /* its outputs the plan could not keep where it meant to */
  int64_t flops;               /* per iteration */
  double peak_flops;           /* FLOP/s of the units of the cores that run it, at its dtypes */
  GsTaskTally tally;           /* DDR bytes and spills over the whole run (emit.h) */
} GsTaskSum;

/* A group of consecutive tasks run as one unit of the schedule (a graphturbo instance). */
typedef struct {
  int group, index;            /* the schedule's group and the instance's index in it */
  int64_t s0, s1;              /* samples [s0, s1) of each cluster's share */
  int t0, t1;                  /* its tasks [t0, t1) */
} GsGroupSum;

typedef struct GsSchedSummary {
  const GsArch *arch;
  char strategy[48];           /* "tvm", "astitch", "graphturbo:full" */
  const char *level, *order;   /* graphturbo: the ladder level and instance order; else NULL */
  int64_t batch, per_cluster;  /* samples in the run, per cluster per iteration */
  GsDtype dtype;               /* the model's activation dtype as run */
  int cast_from;               /* --dtype: the model's own dtype before the cast; else -1 */
  int iterations;
  int ntasks;                  /* tasks per iteration (the last iteration's plan) */
  GsTaskSum *task;
  int ngroups;                 /* 0: the report lists tasks; else it lists groups */
  GsGroupSum *group;
  int nnotes;
  const char *const *notes;    /* where the run departs from the schedule, and why */
  int nepisodes;               /* barrier episodes in program order ... */
  const int *episode_task;     /* ... and the task each one ends (-1: an iteration's set-up) */
  int64_t spills, spill_bytes; /* whole run */
  int outputs_ddr, outputs_gb, outputs_lb; /* op outputs by level (the paper's Table 3) */
  int64_t total_flops;         /* whole run */
  double peak_flops;           /* FLOP/s of every unit at the compute dtypes used */
  int64_t compulsory_ddr_bytes; /* graph inputs + weights + outputs, whole run */
} GsSchedSummary;

#ifdef __cplusplus
}
#endif
#endif
