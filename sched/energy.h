/* energy.h — energy from action counts (docs/energy.md).
 *
 * The simulator counts what the hardware does — MACs per unit kind and dtype, vector element
 * passes per cost class, scalar ops, bytes read and written per memory level, bytes over the
 * interconnect and between clusters, transfer instructions — in a GsActions, outside its
 * models, like its other stats. energy_compute turns counts, a time and the config's
 * [energy] parameters into picojoules: dynamic = Σ count × energy per action (on-chip ones
 * scaled to the chip's node), static = static power × time. Plain C, so the report and the
 * tests use the same formula as the simulator's stats.
 */
#ifndef GS_ENERGY_H
#define GS_ENERGY_H

#include <stdio.h>

#include "arch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double macs[GS_MAX_UNIT_KINDS][DT_COUNT];        /* MACs, per unit kind and dtype */
  double vec_passes[GS_MAX_UNIT_KINDS][VC_COUNT];  /* elements × passes, per cost class */
  double scalar_ops[GS_MAX_UNIT_KINDS];
  double lb_read[GS_MAX_CORE_KINDS], lb_write[GS_MAX_CORE_KINDS]; /* bytes: transfers and
                                                     the units' operands, per core kind */
  double gb_read, gb_write;     /* bytes: transfers, and operands of cores without LB */
  double ddr_read, ddr_write;   /* bytes */
  double noc_bytes;             /* bytes over a core's interconnect link */
  double cluster_link_bytes;    /* bytes between clusters */
  double transfers;             /* mov instructions */
} GsActions;

/* Energy in pJ, split by what spends it. The unit rows add up to mac + pe + vec + scalar;
 * dynamic is every dynamic part; total = dynamic + static. */
typedef struct {
  double unit_pj[GS_MAX_UNIT_KINDS];  /* dynamic energy of each unit kind's actions */
  double mac_pj, pe_pj, vec_pj, scalar_pj;
  double pe_input_pj, pe_weight_pj, pe_psum_pj; /* pe_pj by operand */
  double lb_pj, gb_pj, ddr_pj, noc_pj, link_pj, dma_pj;
  double dynamic_pj, static_pj, total_pj;
} GsEnergy;

/* The chip's static power in mW (every unit, LB, GB, the DDR and the rest of the chip). */
double energy_static_mw(const GsArch *a);
/* Energy of actions x over `seconds` of run time. a must have an [energy] section. */
void energy_compute(const GsArch *a, const GsActions *x, double seconds, GsEnergy *e);
/* d = x - y, count by count (the actions between two snapshots). */
void energy_actions_sub(GsActions *d, const GsActions *x, const GsActions *y);
/* Energy per FLOP (pJ) of the chip's matrix units at full utilization in dtype t: the MAC and
 * its in-array operand storage, plus the chip's static power over its peak FLOP/s; 0 when the
 * chip has no matrix unit for t. dyn and stat (may be NULL) receive the two parts. */
double energy_peak_pj_per_flop(const GsArch *a, GsDtype t, double *dyn, double *stat);
/* --describe's energy part: a text block, or a JSON member `"energy": {...}` (no comma). */
void energy_describe(const GsArch *a, FILE *out, int json);

#ifdef __cplusplus
}
#endif
#endif
