// actions.cpp — the action counts energy is computed from (sched/energy.h), and their stats.
// The models call actions_transfer / actions_compute once per completed instruction with what it
// moved or computed; they know nothing of energy. After the run, actions_register_stats adds
// the counts and, when the config has an [energy] section, the energy they cost (docs/energy.md).
#include "actions.h"

#include <string>

extern "C" {
#include "isa_ops.h"
}

void actions_transfer(GsActions *x, const GsArch *a, const Buffer &src, const Buffer &dst,
                      bool noc, bool xcluster, double bytes) {
  const Buffer *side[2] = {&src, &dst};
  for (int i = 0; i < 2; i++) {
    const Buffer &b = *side[i];
    double *rw = nullptr;
    if (b.level == LVL_DDR) rw = i ? &x->ddr_write : &x->ddr_read;
    else if (b.level == LVL_GB) rw = i ? &x->gb_write : &x->gb_read;
    else {
      int k = arch_core_kind_of(a, b.core);
      rw = i ? &x->lb_write[k] : &x->lb_read[k];
    }
    *rw += bytes;
  }
  if (noc) x->noc_bytes += bytes;
  if (xcluster) x->cluster_link_bytes += bytes;
  x->transfers += 1;
}

void actions_compute(GsActions *x, const GsArch *a, int unit_kind, int core, const GsInst &in,
                     double read_bytes, double write_bytes) {
  int u = unit_kind;
  if (in.op == I_GEMM) {
    x->macs[u][in.dtype] += (double)inst_gemm_m(&in) * (double)inst_gemm_n(&in) *
                            (double)inst_gemm_k(&in) * (double)isa_gemm_reps(&in);
  } else if (in.op == I_VEC) {
    for (int c = 0; c < VC_COUNT; c++)
      x->vec_passes[u][c] += (double)inst_vec_elems(&in) * isa_vop_passes((GsVop)in.sub, (GsVClass)c);
  } else if (in.op == I_SCALAR) {
    x->scalar_ops[u] += (double)inst_scalar_ops(&in);
  }
  // operands: in the core's LB, or the cluster's GB for a core without one
  int k = arch_core_kind_of(a, core);
  if (a->core_kinds[k].lb_bytes > 0) {
    x->lb_read[k] += read_bytes;
    x->lb_write[k] += write_bytes;
  } else {
    x->gb_read += read_bytes;
    x->gb_write += write_bytes;
  }
}

// The counts, by unit kind and level: only those that are not zero, so a program's stats list
// what it did.
static void register_counts(const GsArch *a, const GsActions &x, SimStats &st) {
  auto add = [&](const std::string &n, const char *unit, const char *desc, double v) {
    if (v != 0) st.add("actions." + n, unit, desc, v);
  };
  for (int u = 0; u < a->nunit_kinds; u++) {
    std::string p = std::string(a->units[u].name) + ".";
    for (int t = 0; t < DT_COUNT; t++)
      add(p + "macs_" + arch_dtype_name((GsDtype)t), "MAC", "MACs of this unit kind in this dtype",
          x.macs[u][t]);
    for (int c = 0; c < VC_COUNT; c++) {
      static const char *const cls[] = {
#define X(e, k, d) k,
          GS_VCLASSES(X)
#undef X
      };
      add(p + "vec_passes_" + cls[c], "elements", "vector elements x passes of this cost class",
          x.vec_passes[u][c]);
    }
    add(p + "scalar_ops", "ops", "scalar operations", x.scalar_ops[u]);
  }
  for (int k = 0; k < a->ncore_kinds; k++) {
    std::string p = std::string("lb.") + a->core_kinds[k].name + ".";
    add(p + "read_bytes", "B", "bytes read from this core kind's LBs: transfers and unit operands",
        x.lb_read[k]);
    add(p + "write_bytes", "B", "bytes written to this core kind's LBs: transfers and unit operands",
        x.lb_write[k]);
  }
  add("gb.read_bytes", "B", "bytes read from GBs: transfers and operands of cores without LB", x.gb_read);
  add("gb.write_bytes", "B", "bytes written to GBs: transfers and operands of cores without LB",
      x.gb_write);
  add("transfers", "count", "transfer (mov) instructions", x.transfers);
}

static void register_energy(const GsArch *a, const GsActions &x, double seconds, SimStats &st) {
  GsEnergy e;
  energy_compute(a, &x, seconds, &e);
  double flop = 0;
  for (int u = 0; u < a->nunit_kinds; u++)
    for (int t = 0; t < DT_COUNT; t++) flop += 2 * x.macs[u][t];
  st.add("energy.total", "pJ", "dynamic + static energy of the run (docs/energy.md)", e.total_pj);
  st.add("energy.dynamic", "pJ", "energy of the actions", e.dynamic_pj);
  st.add("energy.static", "pJ", "static power x run time", e.static_pj);
  st.add("energy.power", "W", "average power: total energy / run time",
         seconds > 0 ? e.total_pj * 1e-12 / seconds : 0);
  st.add("energy.flop_per_j", "FLOP/J", "matrix FLOP (2 per MAC) / total energy (1e12 = 1 TOPS/W)",
         e.total_pj > 0 ? flop / (e.total_pj * 1e-12) : 0);
  for (int u = 0; u < a->nunit_kinds; u++)
    if (e.unit_pj[u] != 0)
      st.add(std::string("energy.unit.") + a->units[u].name, "pJ",
             "dynamic energy of this unit kind: MACs, in-array operands, vector and scalar ops",
             e.unit_pj[u]);
  st.add("energy.mac", "pJ", "MAC arithmetic", e.mac_pj);
  st.add("energy.pe", "pJ", "operand storage inside the matrix arrays, per MAC", e.pe_pj);
  st.add("energy.pe.input", "pJ", "of which the input operand's", e.pe_input_pj);
  st.add("energy.pe.weight", "pJ", "of which the weight operand's", e.pe_weight_pj);
  st.add("energy.pe.psum", "pJ", "of which the partial sums'", e.pe_psum_pj);
  st.add("energy.vec", "pJ", "vector element passes", e.vec_pj);
  st.add("energy.scalar", "pJ", "scalar operations", e.scalar_pj);
  st.add("energy.lb", "pJ", "LB reads and writes", e.lb_pj);
  st.add("energy.gb", "pJ", "GB reads and writes", e.gb_pj);
  st.add("energy.ddr", "pJ", "DDR reads and writes", e.ddr_pj);
  st.add("energy.noc", "pJ", "bytes over the interconnect", e.noc_pj);
  st.add("energy.cluster_link", "pJ", "bytes between clusters", e.link_pj);
  st.add("energy.dma", "pJ", "transfer instructions", e.dma_pj);
}

void actions_register_stats(const GsArch *a, const GsActions &x, double seconds, SimStats &st) {
  register_counts(a, x, st);
  if (a->energy.present) register_energy(a, x, seconds, st);
}
