/* arch.h — the architecture description: typed, validated once, read-only afterwards.
 *
 * The model: `nclusters` identical clusters; a cluster has a global buffer
 * (GB, may be 0 bytes), an in-cluster interconnect (NoC), DMA engines between DDR and GB,
 * and cores of one or more core kinds (Goya: 8 TPC cores with LB + 1 GEMM core without LB).
 * A core kind has a local buffer (LB, may be 0 bytes) with ports, and a list of compute
 * units; a unit kind is a matrix unit (cube m0×n0×k0 or systolic R×C), a vector unit (lanes
 * per dtype and a cost per op class), a scalar unit, or several of these at once (the IPU's
 * single "core" unit does both matrix and vector work).
 *
 * Cores are numbered per cluster: core kinds in config order, `count` cores each. Every
 * timing figure the simulator uses comes from here; none is a literal in model code.
 * The schema (every key, type, unit, range, default, description) is the table in arch.c;
 * docs/config.md is generated from it (`gtsim --config-doc`).
 */
#ifndef GS_ARCH_H
#define GS_ARCH_H

#include <stdint.h>
#include <stdio.h>

#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Data types. X(enum, name, bytes) */
#define GS_DTYPES(X) \
  X(DT_INT8, "int8", 1)    \
  X(DT_INT16, "int16", 2)  \
  X(DT_INT32, "int32", 4)  \
  X(DT_FP16, "fp16", 2)    \
  X(DT_BF16, "bf16", 2)    \
  X(DT_FP32, "fp32", 4)
typedef enum {
#define X(e, n, b) e,
  GS_DTYPES(X)
#undef X
  DT_COUNT
} GsDtype;
const char *arch_dtype_name(GsDtype t);
/* Bytes of one element of t (0: not a dtype); inline, as the lowering asks for it for
 * every tile and instruction (2% of lowering as a call). */
static inline int arch_dtype_bytes(GsDtype t) {
  switch (t) {
#define X(e, n, b) \
  case e: return b;
    GS_DTYPES(X)
#undef X
  default: return 0;
  }
}
int arch_dtype_parse(const char *s, GsDtype *out); /* 0 on success, -1 if unknown */

/* Vector op cost classes: each vector instruction is charged as a number of passes of
 * these classes (sim/timing), each pass costing op_cost[class] cycles per lane-group.
 * X(enum, config-key suffix, description) */
#define GS_VCLASSES(X)                                                              \
  X(VC_SIMPLE, "simple", "add, sub, max, min, relu, copy, cast, compare")         \
  X(VC_MUL, "mul", "mul, fused multiply-add")                                     \
  X(VC_DIV, "div", "division, reciprocal, square root")                           \
  X(VC_TRANSC, "transc", "exp, log, tanh, sigmoid, erf (transcendental)")          \
  X(VC_REDUCE, "reduce", "one step of a reduction tree (sum, max) per lane-group")
typedef enum {
#define X(e, k, d) e,
  GS_VCLASSES(X)
#undef X
  VC_COUNT
} GsVClass;

enum { CAP_MATRIX = 1, CAP_VECTOR = 2, CAP_SCALAR = 4 };
typedef enum { MAT_CUBE, MAT_SYSTOLIC } GsMatShape;
typedef enum { DF_OUTPUT_STATIONARY, DF_WEIGHT_STATIONARY, DF_INPUT_STATIONARY } GsDataflow;
/* How DDR channels are timed (docs/timing.md, "DRAM efficiency"): ideal = bytes / bandwidth;
 * dram = plus row misses, read/write turnarounds and refresh. */
typedef enum { DDR_IDEAL, DDR_DRAM } GsDdrModel;
typedef enum { XFER_CHUNK, XFER_FLOW } GsTransferModel; /* chip.transfer_model (docs/timing.md) */

typedef struct {
  const char *name;          /* from the section name [unit.NAME] */
  unsigned caps;             /* CAP_* bits */
  /* matrix: MACs per cycle for dtype t = base_macs × mac_rate[t] (0: unsupported) */
  GsMatShape shape;
  int cube_m, cube_n, cube_k;      /* cube: one m0×n0×k0 block per cycle at rate 1 */
  int sys_rows, sys_cols;          /* systolic: R×C PEs */
  GsDataflow dataflow;             /* systolic only */
  int preload_overlap;             /* systolic ws/is: the next fold's stationary operand loads
                                      while this fold streams (TPU-style double buffering) */
  double mac_rate[DT_COUNT];       /* dtype multiplier on base MACs/cycle; 0 = unsupported */
  int matrix_latency_cycles;       /* pipeline latency added once per instruction */
  /* vector / scalar */
  int lanes[DT_COUNT];             /* elements per cycle per dtype; 0 = unsupported */
  int op_cost[VC_COUNT];           /* cycles per pass per lane-group, per cost class */
  int vector_latency_cycles;
  int scalar_ops_per_cycle;
  /* energy ([energy] section present; docs/energy.md), at the table's node: scaled by
   * GsEnergyCfg.scale when used. pJ per action, mW per instance. */
  double mac_pj[DT_COUNT];         /* one MAC of dtype t (0: the unit does not compute t) */
  double pe_input_pj_per_mac, pe_weight_pj_per_mac, pe_psum_pj_per_mac; /* operand storage
                                      inside the array, per MAC (Eyeriss's spads); 0: in mac_pj */
  double vop_pj[VC_COUNT];         /* one element through one pass of the class */
  double scalar_op_pj;
  double static_mw;                /* leakage of one instance of the unit */
} GsUnitKind;

enum { GS_MAX_UNITS_PER_CORE = 8, GS_MAX_CORE_KINDS = 8, GS_MAX_UNIT_KINDS = 16 };

typedef struct {
  const char *name;           /* from [core.NAME] */
  int count;                  /* cores of this kind in each cluster */
  int64_t lb_bytes;           /* local buffer capacity; 0 = no LB */
  int lb_ports;               /* concurrent accesses to the LB */
  double lb_port_bytes_per_cycle;
  int lb_latency_cycles;
  int nunits;
  int unit[GS_MAX_UNITS_PER_CORE]; /* indices into GsArch.units; queue order of the core */
  int dma_engines;            /* per-core DMA engines (one DMA-in + one DMA-out queue each pair) */
  double lb_read_pj_per_byte, lb_write_pj_per_byte, lb_static_mw; /* energy: per LB */
} GsCoreKind;

/* The [energy] section (docs/energy.md). On-chip dynamic energies and static powers are
 * written at table_node_nm / table_vdd_v and multiplied by `scale` (derived: the classical
 * C·V² rule, (node / table_node) × (vdd / table_vdd)²) when used; DDR and cluster-link
 * energies are off-chip I/O and are not scaled; static powers are written at the chip's node. */
typedef struct {
  int present;                         /* the config has an [energy] section */
  double node_nm, vdd_v, table_node_nm, table_vdd_v;
  double ddr_read_pj_per_byte, ddr_write_pj_per_byte, ddr_static_mw;
  double gb_read_pj_per_byte, gb_write_pj_per_byte, gb_static_mw; /* per cluster */
  double noc_pj_per_byte;              /* one byte over one core's interconnect link */
  double cluster_link_pj_per_byte;     /* one byte from one cluster to another */
  double dma_pj_per_transfer;          /* one mov instruction (descriptor, address generation) */
  double other_static_mw;              /* the rest of the chip: control, I/O, clock tree */
  double scale;                        /* derived, see above */
} GsEnergyCfg;

/* The comment a config line carries after its value: its provenance ("[P] S2: 16x16x16
 * cube"), or "--set KEY=VALUE" for an override. */
typedef struct {
  const char *section, *key, *note;
} GsArchNote;

typedef struct {
  /* [chip] */
  const char *name;
  const char *source_file;
  double clock_mhz;
  int nclusters;
  double cluster_link_bytes_per_cycle; /* between clusters (0: only through DDR) */
  int cluster_link_latency_cycles;
  int chunk_bytes;                     /* the simulator's transfer chunk (docs/timing.md) */
  GsTransferModel transfer_model;      /* chunks, or flows sharing bandwidth fairly */
  /* [ddr] */
  int ddr_channels;
  double ddr_bandwidth_gb_per_s;       /* all channels together, 1e9 bytes/s */
  double ddr_latency_ns;
  int ddr_burst_bytes;
  int64_t ddr_capacity_bytes;
  int ddr_interleave_bytes;            /* consecutive DDR addresses change channel every N bytes */
  GsDdrModel ddr_model;                /* ideal, or the first-order DRAM efficiency model */
  int ddr_row_bytes;                   /* row buffer (page) of one bank, channel address space */
  int ddr_banks;                       /* banks per channel */
  double ddr_trcd_ns, ddr_trp_ns;      /* activate to column command; precharge */
  double ddr_trrd_ns;                  /* activate to activate in another bank: max(tRRD, tFAW/4) */
  double ddr_trfc_ns, ddr_trefi_ns;    /* refresh cycle time; refresh interval */
  double ddr_twtr_ns, ddr_trtw_ns;     /* bus turnaround write->read, read->write */
  /* [cluster] */
  int64_t gb_bytes;                    /* 0 = no GB */
  int gb_ports;
  double gb_port_bytes_per_cycle;
  int gb_latency_cycles;
  double noc_link_bytes_per_cycle;     /* per core link into the interconnect, each direction */
  int noc_latency_cycles;
  int dma_engines;                     /* cluster DMA engines between DDR and GB */
  int dma_latency_cycles;              /* fixed set-up cost per DMA instruction */
  GsEnergyCfg energy;                  /* [energy]; energy.present = 0 without one */
  /* kinds */
  int ncore_kinds;
  GsCoreKind core_kinds[GS_MAX_CORE_KINDS];
  int nunit_kinds;
  GsUnitKind units[GS_MAX_UNIT_KINDS];
  /* derived, filled by arch_load */
  int cores_per_cluster;
  double ddr_bytes_per_cycle;          /* ddr_bandwidth_gb_per_s * 1e3 / clock_mhz */
  int ddr_latency_cycles;              /* ceil(ddr_latency_ns * clock_mhz / 1e3) */
  double ddr_miss_cycles;              /* (tRP + tRCD) in chip cycles (fractional) */
  double ddr_act_cycles;               /* trrd_ns in chip cycles, at most ddr_miss_cycles */
  double ddr_wtr_cycles, ddr_rtw_cycles; /* the turnarounds in chip cycles */
  double ddr_refresh_factor;           /* tREFI / (tREFI - tRFC): channel time per data time */
  GsArchNote *notes;                   /* the keys set with a comment, file order */
  int nnotes;
  GsArena *arena;                      /* owns every string above */
} GsArch;

/* Load a config file and apply `--set section.key=value` overrides (validated like the file).
 * On any error: messages `file:line: error: ...` to d, returns NULL. */
GsArch *arch_load(const char *path, const char *const *sets, int nsets, GsDiag *d);
GsArch *arch_load_string(const char *name, const char *text, const char *const *sets, int nsets,
                         GsDiag *d);
void arch_free(GsArch *a);

/* Core numbering inside a cluster. */
int arch_core_kind_of(const GsArch *a, int core); /* core index in cluster -> core kind */
const GsCoreKind *arch_core(const GsArch *a, int core);
int arch_core_base(const GsArch *a, int kind);     /* core kind -> its first core index */

/* The two local-capacity figures, side by side because they differ on purpose:
 * arch_lb_bytes is the LB proper that kept tensors can use (GraphTurbo's sizeof(LB)): the
 * smallest LB of a core kind that has one (per_core), or every LB of a cluster summed; cores
 * without LB hold no kept tensors. arch_core_tile_budget is what one core of a kind may use
 * for its tiles: its LB, or for a core without LB (Goya's GEMM core) its share of the GB's top
 * quarter, where its tiles live. */
int64_t arch_lb_bytes(const GsArch *a, int per_core);
int64_t arch_core_tile_budget(const GsArch *a, int core_kind);

/* Derived figures (all per cycle unless named otherwise). */
double arch_unit_base_macs(const GsUnitKind *u);                 /* m0·n0·k0 or R·C */
double arch_unit_macs_per_cycle(const GsUnitKind *u, GsDtype t); /* base × rate */
double arch_peak_macs_per_cycle(const GsArch *a, GsDtype t); /* whole chip, matrix units */
double arch_peak_flops(const GsArch *a, GsDtype t);          /* FLOP/s, whole chip */
int64_t arch_unit_instances(const GsArch *a, int unit);      /* of unit kind `unit`, whole chip */

/* The comment of key `key` of section `section` ("core.pe"), or NULL. */
const char *arch_note(const GsArch *a, const char *section, const char *key);
/* --describe: text or JSON. */
void arch_describe(const GsArch *a, FILE *out, int json);
/* docs/config.md from the schema table. */
void arch_write_config_doc(FILE *out);

#ifdef __cplusplus
}
#endif
#endif
