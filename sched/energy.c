/* energy.c — energy from action counts, and --describe's energy part (docs/energy.md).
 *
 * Dynamic energy is a sum of count × energy per action. The on-chip energies of the config
 * are written at the [energy] table's node and multiplied by energy.scale; DDR and
 * cluster-link energies (off-chip I/O) are not. Static energy is the chip's static power ×
 * the run's time: every instance of every unit, LB and GB leaks whether it works or not.
 * Invariant: the parts of a GsEnergy add up to its total, the unit rows to the compute parts.
 */
#include "energy.h"

#include <string.h>

double energy_static_mw(const GsArch *a) {
  const GsEnergyCfg *e = &a->energy;
  double mw = e->ddr_static_mw + e->other_static_mw;
  if (a->gb_bytes > 0) mw += e->gb_static_mw * a->nclusters;
  for (int k = 0; k < a->ncore_kinds; k++) {
    const GsCoreKind *c = &a->core_kinds[k];
    if (c->lb_bytes > 0) mw += c->lb_static_mw * c->count * a->nclusters;
  }
  for (int u = 0; u < a->nunit_kinds; u++)
    mw += a->units[u].static_mw * (double)arch_unit_instances(a, u);
  return mw;
}

/* The dynamic energy of unit kind u's actions, split by action kind into e. */
static double unit_energy(const GsArch *a, int u, const GsActions *x, GsEnergy *e) {
  const GsUnitKind *k = &a->units[u];
  double s = a->energy.scale, mac = 0, macs = 0, vec = 0;
  for (int t = 0; t < DT_COUNT; t++) {
    mac += x->macs[u][t] * k->mac_pj[t] * s;
    macs += x->macs[u][t];
  }
  double in = macs * k->pe_input_pj_per_mac * s, w = macs * k->pe_weight_pj_per_mac * s;
  double ps = macs * k->pe_psum_pj_per_mac * s, pe = in + w + ps;
  e->pe_input_pj += in;
  e->pe_weight_pj += w;
  e->pe_psum_pj += ps;
  for (int c = 0; c < VC_COUNT; c++) vec += x->vec_passes[u][c] * k->vop_pj[c] * s;
  double scalar = x->scalar_ops[u] * k->scalar_op_pj * s;
  e->mac_pj += mac;
  e->pe_pj += pe;
  e->vec_pj += vec;
  e->scalar_pj += scalar;
  return mac + pe + vec + scalar;
}

void energy_compute(const GsArch *a, const GsActions *x, double seconds, GsEnergy *e) {
  const GsEnergyCfg *c = &a->energy;
  gs_assert(c->present);
  double s = c->scale;
  memset(e, 0, sizeof *e);
  double units = 0;
  for (int u = 0; u < a->nunit_kinds; u++) units += e->unit_pj[u] = unit_energy(a, u, x, e);
  for (int k = 0; k < a->ncore_kinds; k++) {
    const GsCoreKind *ck = &a->core_kinds[k];
    e->lb_pj += (x->lb_read[k] * ck->lb_read_pj_per_byte + x->lb_write[k] * ck->lb_write_pj_per_byte) * s;
  }
  e->gb_pj = (x->gb_read * c->gb_read_pj_per_byte + x->gb_write * c->gb_write_pj_per_byte) * s;
  e->ddr_pj = x->ddr_read * c->ddr_read_pj_per_byte + x->ddr_write * c->ddr_write_pj_per_byte;
  e->noc_pj = x->noc_bytes * c->noc_pj_per_byte * s;
  e->link_pj = x->cluster_link_bytes * c->cluster_link_pj_per_byte;
  e->dma_pj = x->transfers * c->dma_pj_per_transfer * s;
  e->dynamic_pj = units + e->lb_pj + e->gb_pj + e->ddr_pj + e->noc_pj + e->link_pj + e->dma_pj;
  e->static_pj = energy_static_mw(a) * 1e-3 * seconds * 1e12;
  e->total_pj = e->dynamic_pj + e->static_pj;
}

/* GsActions is counts only, all doubles: it is subtracted as an array. */
_Static_assert(sizeof(GsActions) % sizeof(double) == 0, "GsActions holds doubles only");

void energy_actions_sub(GsActions *d, const GsActions *x, const GsActions *y) {
  const double *px = (const double *)x, *py = (const double *)y;
  double *pd = (double *)d;
  for (size_t i = 0; i < sizeof *d / sizeof(double); i++) pd[i] = px[i] - py[i];
}

double energy_peak_pj_per_flop(const GsArch *a, GsDtype t, double *dyn, double *stat) {
  double flops = arch_peak_flops(a, t), mac_pj = 0, macs = 0;
  if (dyn) *dyn = 0;
  if (stat) *stat = 0;
  if (flops <= 0 || !a->energy.present) return 0;
  for (int k = 0; k < a->ncore_kinds; k++) {
    const GsCoreKind *c = &a->core_kinds[k];
    for (int i = 0; i < c->nunits; i++) {
      const GsUnitKind *u = &a->units[c->unit[i]];
      double n = arch_unit_macs_per_cycle(u, t) * c->count;
      macs += n;
      mac_pj += n * (u->mac_pj[t] + u->pe_input_pj_per_mac + u->pe_weight_pj_per_mac +
                     u->pe_psum_pj_per_mac);
    }
  }
  double d = mac_pj / macs * a->energy.scale / 2; /* a MAC is two FLOP */
  double st = energy_static_mw(a) * 1e-3 / flops * 1e12;
  if (dyn) *dyn = d;
  if (stat) *stat = st;
  return d + st;
}

static void describe_text(const GsArch *a, FILE *out) {
  const GsEnergyCfg *e = &a->energy;
  fprintf(out, "#\n# Energy (docs/energy.md)\n");
  fprintf(out, "#   node %g nm at %g V; on-chip energies written at %g nm, %g V: x %.4g "
               "= (%g / %g) x (%g / %g)^2\n",
          e->node_nm, e->vdd_v, e->table_node_nm, e->table_vdd_v, e->scale, e->node_nm,
          e->table_node_nm, e->vdd_v, e->table_vdd_v);
  double st = energy_static_mw(a) * 1e-3;
  fprintf(out, "#   static power %.4g W: DDR %.4g W, rest of chip %.4g W, units and buffers %.4g W\n",
          st, e->ddr_static_mw * 1e-3, e->other_static_mw * 1e-3,
          st - (e->ddr_static_mw + e->other_static_mw) * 1e-3);
  for (int t = 0; t < DT_COUNT; t++) {
    double dyn, stat, pj = energy_peak_pj_per_flop(a, (GsDtype)t, &dyn, &stat);
    if (pj <= 0) continue;
    double flops = arch_peak_flops(a, (GsDtype)t);
    fprintf(out, "#   full utilization, %-5s %.4g pJ/FLOP (MACs %.4g + static %.4g), %.4g "
                 "TFLOP/J, %.4g W (matrix units and static power only)\n",
            arch_dtype_name((GsDtype)t), pj, dyn, stat, 1 / pj, pj * 1e-12 * flops);
  }
}

static void describe_json(const GsArch *a, FILE *out) {
  const GsEnergyCfg *e = &a->energy;
  fprintf(out, "\"energy\": {\"scale\": %.15g, \"static_w\": %.15g, \"full_utilization\": [",
          e->scale, energy_static_mw(a) * 1e-3);
  int n = 0;
  for (int t = 0; t < DT_COUNT; t++) {
    double dyn, st, pj = energy_peak_pj_per_flop(a, (GsDtype)t, &dyn, &st);
    if (pj <= 0) continue;
    fprintf(out, "%s{\"dtype\": \"%s\", \"pj_per_flop\": %.15g, \"mac_pj_per_flop\": %.15g, "
                 "\"static_pj_per_flop\": %.15g, \"power_w\": %.15g}",
            n++ ? ", " : "", arch_dtype_name((GsDtype)t), pj, dyn, st,
            pj * 1e-12 * arch_peak_flops(a, (GsDtype)t));
  }
  fputs("]}", out);
}

void energy_describe(const GsArch *a, FILE *out, int json) {
  if (!a->energy.present) {
    if (json) fputs("\"energy\": null", out);
    else fputs("#\n# Energy: none (the config has no [energy] section)\n", out);
    return;
  }
  if (json) describe_json(a, out);
  else describe_text(a, out);
}
