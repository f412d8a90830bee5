/* report.h — the run report of a scheduled model (text, JSON, CSV) and the --compare table.
 *
 * The simulator's results reach the report as a GsRunStats (plain C), filled by the CLI from
 * the SystemC model's SimResult, so the report is testable without SystemC. Every column, its
 * unit and the roofline's definition are in docs/schedulers.md.
 */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "energy.h"
#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GS_REPORT_MAX_UNITS = 16 };

typedef struct {
  const char *name;        /* unit kind name from the config (e.g. "mme") */
  unsigned caps;           /* CAP_MATRIX, CAP_VECTOR, ... of the unit kind */
  double busy_cycles;      /* summed over every instance on the chip */
  double stall_data_cycles, stall_flag_cycles, stall_resource_cycles; /* likewise (the
                              simulator's per-queue stalls by cause, docs/timing.md) */
  int64_t instances;       /* instances on the chip (all clusters, all cores of kinds that have it) */
} GsUnitUse;

/* The time of the matrix units of a run, per unit on average (cycles): the run's cycles split
 * into busy, stalled by cause, and idle (no queue, or done before the run's end). The parts add
 * up to the run's cycles. */
typedef struct {
  double busy, data, sync, resource, idle;
  double ddr;              /* the run's DDR bytes at the chip's DDR bandwidth (cycles) */
} GsTimeSplit;

typedef struct {
  uint64_t cycles;
  int nepisodes;
  const uint64_t *episode_end;  /* completion cycle of every chip barrier episode, in order */
  int nunits;
  GsUnitUse units[GS_REPORT_MAX_UNITS];
  double ddr_read, ddr_write;   /* bytes the simulator moved */
  int ddr_dram;                 /* ddr.model = dram: the two below are the run's */
  double ddr_row_hit_rate;      /* DDR bursts that found their row open / DDR bursts */
  double ddr_efficiency;        /* channels' data cycles / busy cycles (docs/timing.md) */
  GsActions actions;            /* what the run did, for energy (sched/energy.h) */
  const GsActions *episode_actions; /* the actions up to each episode_end, or NULL */
} GsRunStats;

GsTimeSplit report_time_split(const GsRunStats *r, const GsArch *a);

/* Derived figures of one run. */
typedef struct {
  double time_s, throughput, latency_s;
  double bound_compute_s, bound_memory_s, bound_s, achieved; /* roofline */
  double util[GS_REPORT_MAX_UNITS];
} GsRunSummary;

/* Fill the unit list (names and instances) from the arch; busy cycles stay 0. */
void report_init_units(GsRunStats *r, const GsArch *a);
GsRunSummary report_summary(const GsSchedSummary *m, const GsRunStats *r);
/* cyc[t]: the cycles of task t summed over iterations, from the barrier episodes the emitter
 * recorded (all 0 when the simulator saw other episodes). cyc has m->ntasks entries. */
void report_task_cycles(const GsSchedSummary *m, const GsRunStats *r, uint64_t *cyc);
/* "compute" or "memory": whichever ideal time is longer for the task on its cores. */
const char *report_task_bound(const GsSchedSummary *m, const GsTaskSum *t);

/* Energy (docs/energy.md): the run's, 0 when the config has no [energy] section. */
int report_energy(const GsSchedSummary *m, const GsRunStats *r, GsEnergy *e);
/* pj[t]: the energy of task t summed over iterations: its episodes' dynamic energy plus the
 * chip's static power over its cycles cyc[t] (report_task_cycles); all 0 without energy or
 * when the episodes are not the emitter's. */
void report_task_energy(const GsSchedSummary *m, const GsRunStats *r, const uint64_t *cyc, double *pj);

/* The energy lines of the text report, the JSON member `"energy": {...}` (or null), and the
 * --compare energy table (report_energy.c). */
void report_energy_text(FILE *out, const GsSchedSummary *m, const GsRunStats *r, const GsRunSummary *s);
void report_energy_json(FILE *out, const GsSchedSummary *m, const GsRunStats *r, const GsRunSummary *s);
void report_compare_energy_text(FILE *out, const GsSchedSummary *const *ls, const GsRunStats *const *rs,
                                int n);

typedef enum { REPORT_TEXT, REPORT_JSON, REPORT_CSV } GsReportFormat;
void report_write(FILE *out, GsReportFormat f, const GsSchedSummary *m, const GsRunStats *r,
                  const char *model, const char *arch_file);
/* --compare: one row per strategy; rows[0] is the baseline for the speedup. */
void report_compare(FILE *out, GsReportFormat f, const GsSchedSummary *const *ls,
                    const GsRunStats *const *rs, int n, const char *model);

#ifdef __cplusplus
}
#endif
#endif
