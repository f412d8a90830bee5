/* emit.h — the emitter: turns a plan (lower.h: kernels, their units, placement and tiling, and,
 * when the plan has them, slices and staged weights) into the Program's per-queue instruction
 * streams. Every strategy uses it; it branches on what the plan contains, never on which
 * strategy made the plan (docs/schedulers.md, "The emitter").
 *
 *   GsEmitter *em = emit_new(l, prog, &tally);   queues, DDR weights, whole-batch inputs/outputs
 *   emit_iteration(em, l, sample0, it);          once per iteration (the plan may be re-made
 *                                                for a smaller last iteration)
 *   emit_delete(em);
 *
 * Emission reads the plan and never writes it: what it counts goes to the accounting sink, a
 * GsEmitTally the caller owns (the report reads it through lower_summary). Files: emit.c (the
 * memory map, kernels over clusters and cores, barriers), emit_tiles.c (one kernel's streams on
 * one core), emit_slices.c (slices as regions), emit_impl.h (their shared internals).
 */
#ifndef GS_EMIT_H
#define GS_EMIT_H

#include <stdint.h>

#include "prog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct GsLowered;

/* Per task — a kernel of the plan, by index — summed over clusters and over the iterations
 * whose plan has that kernel: the bytes its instructions move from and to DDR, and the slices
 * it writes that the plan could not keep where it meant to (spills) with their bytes. */
typedef struct {
  int64_t ddr_read, ddr_write;
  int64_t spills, spill_bytes;
} GsTaskTally;

/* The accounting sink. Barrier episodes are numbered in program order, as the simulator
 * reports them (chip episodes and cluster 0's cluster episodes); episode_task says which task
 * each one ends (-1: an iteration's set-up), so a task's cycles are the time between the end
 * of the episode before its own and the end of its own. */
typedef struct {
  int ntasks;
  GsTaskTally *task;            /* [ntasks]: the most kernels an iteration had */
  int nepisodes, room;
  int *episode_task;            /* [nepisodes] */
  int64_t ddr_peak_bytes;       /* peak DDR bytes the program allocates (ivl_peak) */
} GsEmitTally;
void emit_tally_free(GsEmitTally *t);

typedef struct GsEmitState GsEmitter;
GsEmitter *emit_new(const struct GsLowered *l, GsProgram *p, GsEmitTally *sink);
void emit_iteration(GsEmitter *em, const struct GsLowered *l, int64_t sample0, int iteration);
void emit_delete(GsEmitter *em);

#ifdef __cplusplus
}
#endif
#endif
