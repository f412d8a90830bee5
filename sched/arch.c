/* arch.c — the architecture config: the schema table, INI parsing through libinih, --set
 * overrides, validation and derived figures.
 *
 * Algorithm, in three phases:
 *  1. Read. libinih parses the text; our reader callback hands it one line at a time, so it
 *     counts lines (the handler's line is the reader's last line: inih handles a line before
 *     it reads the next). The reader also rejects malformed lines itself (missing ']', no '=',
 *     NUL bytes, over-long lines), so every syntax error is reported with its line, not only
 *     the first; it opens sections, so empty and repeated sections are seen. The handler
 *     stores each key's raw text and location; unknown and duplicate keys are reported here.
 *  2. Override. Each `--set section.key=value` replaces a raw text; its location is the
 *     --set argument itself.
 *  3. Resolve. Every schema row of every section is converted, range-checked, defaulted or
 *     reported missing (rows are ordered so that class/shape/buffer sizes come before the
 *     keys whose applicability depends on them); then cross-key checks; then derived fields.
 * Errors are collected in the GsDiag (up to max_errors printed) and the load fails at the end
 * of the phase that found them.
 * Invariant: a GsArch returned to the caller passed every check and is never changed again.
 */
#include "arch.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "arch_schema.h"

/* ---- dtypes (GS_DTYPES in arch.h) ---- */

static const struct {
  const char *name;
} dtypes[DT_COUNT] = { /* their bytes: arch_dtype_bytes (arch.h) */
#define X(e, n, b) {n},
    GS_DTYPES(X)
#undef X
};

const char *arch_dtype_name(GsDtype t) { return (unsigned)t < DT_COUNT ? dtypes[t].name : "?"; }
int arch_dtype_parse(const char *s, GsDtype *out) {
  for (int i = 0; i < DT_COUNT; i++)
    if (strcmp(s, dtypes[i].name) == 0) {
      *out = (GsDtype)i;
      return 0;
    }
  return -1;
}

/* ---------------------------------------------------------------- the schema table */

#define A_(f) offsetof(GsArch, f)
#define C_(f) offsetof(GsCoreKind, f)
#define U_(f) offsetof(GsUnitKind, f)
#define BIG 1e9 /* generous upper bound for latencies and bandwidths in bytes/cycle */
/* The narrowest bandwidth, one byte per 1024 cycles: with operands of at most 2^40 (prog.h),
 * rates of at least 1/1024 and vector costs of at most 2^16, every timing formula stays exact
 * in 64 bits; how long a run may last is the simulator's own limit (docs/timing.md). */
#define MIN_BW (1.0 / 1024)
#define EMAX 1e6 /* pJ: the largest per-action energy (a DRAM page is ~1e4 pJ) */
#define PMAX 1e9 /* mW: the largest static power of one item */
/* The most cores a chip may have: the simulator elaborates a module per core and its queues
 * (16384 cores: 3.6 s and 93 MB on the machine that measured it; IPU GC2 has 2432). */
enum { ARCH_MAX_CORES = 16384 };

const char *const arch_sec_names[SEC_KINDS] = {"chip", "ddr", "cluster", "core", "unit",
                                               "energy"};

/* Rows are grouped by section, in the order --describe and docs/config.md list them. Within
 * a section, a key that others depend on (gb_kib, lb_kib, class, shape) comes first. */
const ArchKey arch_keys[] = {
    /* [chip] */
    {.sec = SEC_CHIP, .key = "name", .type = KT_STR, .unit = "", .def = NULL,
     .desc = "chip name shown in reports", .off = A_(name)},
    {.sec = SEC_CHIP, .key = "clock_mhz", .type = KT_FLOAT, .unit = "MHz", .min = 1,
     .max = 100000, .def = NULL,
     .desc = "core clock; every `*_cycles` and `*_per_cycle` figure counts this clock",
     .off = A_(clock_mhz)},
    {.sec = SEC_CHIP, .key = "clusters", .type = KT_INT, .unit = "", .min = 1, .max = 4096,
     .def = NULL, .desc = "number of identical clusters (d)", .off = A_(nclusters)},
    {.sec = SEC_CHIP, .key = "cluster_link_bytes_per_cycle", .type = KT_FLOAT,
     .unit = "B/cycle", .min = MIN_BW, .zero_ok = 1, .max = BIG, .def = "0",
     .desc = "direct link between two clusters, each direction (0: clusters exchange data only "
             "through DDR)",
     .off = A_(cluster_link_bytes_per_cycle)},
    {.sec = SEC_CHIP, .key = "cluster_link_latency_cycles", .type = KT_INT, .unit = "cycles",
     .min = 0, .max = BIG, .def = "0", .desc = "latency of one transfer over the cluster link",
     .off = A_(cluster_link_latency_cycles)},
    {.sec = SEC_CHIP, .key = "chunk_bytes", .type = KT_INT, .unit = "bytes", .min = 1,
     .max = 1 << 30, .def = "4096",
     .desc = "the simulator moves every transfer in chunks of this size, each reserving every "
             "resource on its path in turn: smaller chunks share a contended link more finely "
             "and simulate slower (the default: as close to 256 B chunks as 2048 B ones, with "
             "half their events: docs/timing.md); env GTSIM_CHUNK_BYTES overrides it",
     .off = A_(chunk_bytes)},
    {.sec = SEC_CHIP, .key = "transfer_model", .type = KT_ENUM, .unit = "", .def = "chunk",
     .choices = "chunk|flow",
     .desc = "how transfers share bandwidth: chunk = every transfer moves in chunk_bytes chunks, "
             "each resource of the path serving them in request order, the first chunk "
             "requested when the transfer's latency has passed (the reference); flow = every "
             "transfer is one flow and the active flows share each resource max-min fairly, "
             "with events only where a transfer starts or ends: much faster on large transfers "
             "(docs/timing.md, \"Flows\")",
     .off = A_(transfer_model)},
    /* [ddr] */
    {.sec = SEC_DDR, .key = "channels", .type = KT_INT, .unit = "", .min = 1, .max = 1024,
     .def = NULL, .desc = "independent DDR/HBM channels; bandwidth is split evenly",
     .off = A_(ddr_channels)},
    {.sec = SEC_DDR, .key = "bandwidth_gb_per_s", .type = KT_FLOAT, .unit = "GB/s (1e9 B/s)",
     .min = 0.001, .max = 1e6, .def = NULL,
     .desc = "peak bandwidth of all channels together, decimal gigabytes per second",
     .off = A_(ddr_bandwidth_gb_per_s)},
    {.sec = SEC_DDR, .key = "latency_ns", .type = KT_FLOAT, .unit = "ns", .min = 0, .max = 1e6,
     .def = NULL, .desc = "latency from request to first data of one burst",
     .off = A_(ddr_latency_ns)},
    {.sec = SEC_DDR, .key = "burst_bytes", .type = KT_INT, .unit = "bytes", .min = 1,
     .max = 1 << 20, .def = "64",
     .desc = "transfer granularity: transfers are split into bursts of this size",
     .off = A_(ddr_burst_bytes)},
    {.sec = SEC_DDR, .key = "interleave_bytes", .type = KT_INT, .unit = "bytes", .min = 1,
     .max = 1 << 30, .def = "256",
     .desc = "consecutive addresses change channel every this many bytes; a multiple of "
             "burst_bytes",
     .off = A_(ddr_interleave_bytes)},
    {.sec = SEC_DDR, .key = "capacity_mib", .type = KT_SIZE, .unit = "MiB", .min = 1,
     .max = 16777216, .def = NULL, .desc = "DDR capacity (models must fit)",
     .off = A_(ddr_capacity_bytes), .scale = 1 << 20},
    {.sec = SEC_DDR, .key = "model", .type = KT_ENUM, .unit = "", .def = "dram",
     .choices = "ideal|dram",
     .desc = "how channels are timed: ideal = bytes / bandwidth; dram = plus row misses, "
             "read/write turnarounds and refresh, per transfer from its addresses "
             "(docs/timing.md, \"DRAM efficiency\")",
     .off = A_(ddr_model)},
    {.sec = SEC_DDR, .key = "row_bytes", .type = KT_INT, .unit = "bytes", .min = 1,
     .max = 1 << 30, .def = "2048", .when = KW_DRAM,
     .desc = "row buffer (page) of one bank, in the channel's own addresses; a multiple of "
             "burst_bytes (bank = channel address / row_bytes mod banks)",
     .off = A_(ddr_row_bytes)},
    {.sec = SEC_DDR, .key = "banks", .type = KT_INT, .unit = "", .min = 1, .max = 1024,
     .def = "8", .when = KW_DRAM, .desc = "banks per channel, each with one open row",
     .off = A_(ddr_banks)},
    {.sec = SEC_DDR, .key = "trcd_ns", .type = KT_FLOAT, .unit = "ns", .min = 0, .max = 1e6,
     .def = "18", .when = KW_DRAM, .desc = "tRCD: activate to first column command",
     .off = A_(ddr_trcd_ns)},
    {.sec = SEC_DDR, .key = "trp_ns", .type = KT_FLOAT, .unit = "ns", .min = 0, .max = 1e6,
     .def = "18", .when = KW_DRAM,
     .desc = "tRP: precharge (close the open row); a row miss costs tRP + tRCD",
     .off = A_(ddr_trp_ns)},
    {.sec = SEC_DDR, .key = "trrd_ns", .type = KT_FLOAT, .unit = "ns", .min = 0, .max = 1e6,
     .def = "10", .when = KW_DRAM,
     .desc = "the shortest interval between activates in different banks of a channel, "
             "max(tRRD, tFAW / 4): how fast rows of other banks open while one streams",
     .off = A_(ddr_trrd_ns)},
    {.sec = SEC_DDR, .key = "trfc_ns", .type = KT_FLOAT, .unit = "ns", .min = 0, .max = 1e6,
     .def = "280", .when = KW_DRAM,
     .desc = "tRFC: a refresh blocks the channel this long, once every trefi_ns (0: no refresh)",
     .off = A_(ddr_trfc_ns)},
    {.sec = SEC_DDR, .key = "trefi_ns", .type = KT_FLOAT, .unit = "ns", .min = 1, .max = 1e9,
     .def = "3904", .when = KW_DRAM, .desc = "tREFI: average refresh interval; more than trfc_ns",
     .off = A_(ddr_trefi_ns)},
    {.sec = SEC_DDR, .key = "twtr_ns", .type = KT_FLOAT, .unit = "ns", .min = 0, .max = 1e6,
     .def = "27", .when = KW_DRAM,
     .desc = "data bus idle when a channel turns from writes to reads (about tWTR + read "
             "latency)",
     .off = A_(ddr_twtr_ns)},
    {.sec = SEC_DDR, .key = "trtw_ns", .type = KT_FLOAT, .unit = "ns", .min = 0, .max = 1e6,
     .def = "5", .when = KW_DRAM,
     .desc = "data bus idle when a channel turns from reads to writes (about tDQSCK + write "
             "preamble)",
     .off = A_(ddr_trtw_ns)},
    /* [cluster] */
    {.sec = SEC_CLUSTER, .key = "gb_kib", .type = KT_SIZE, .unit = "KiB", .min = 0,
     .max = 1 << 30, .def = NULL,
     .desc = "global buffer (GB) per cluster, shared by its cores; 0 = no GB",
     .off = A_(gb_bytes), .scale = 1024},
    {.sec = SEC_CLUSTER, .key = "gb_ports", .type = KT_INT, .unit = "", .min = 1, .max = 1024,
     .def = "1", .when = KW_GB, .desc = "concurrent accesses the GB serves",
     .off = A_(gb_ports)},
    {.sec = SEC_CLUSTER, .key = "gb_port_bytes_per_cycle", .type = KT_FLOAT, .unit = "B/cycle",
     .min = MIN_BW, .max = BIG, .def = NULL, .when = KW_GB,
     .desc = "bandwidth of one GB port", .off = A_(gb_port_bytes_per_cycle)},
    {.sec = SEC_CLUSTER, .key = "gb_latency_cycles", .type = KT_INT, .unit = "cycles",
     .min = 0, .max = BIG, .def = NULL, .when = KW_GB,
     .desc = "latency of one GB access", .off = A_(gb_latency_cycles)},
    {.sec = SEC_CLUSTER, .key = "noc_link_bytes_per_cycle", .type = KT_FLOAT,
     .unit = "B/cycle", .min = MIN_BW, .max = BIG, .def = NULL,
     .desc = "in-cluster interconnect: each core's link, each direction (LB<->GB, LB<->LB)",
     .off = A_(noc_link_bytes_per_cycle)},
    {.sec = SEC_CLUSTER, .key = "noc_latency_cycles", .type = KT_INT, .unit = "cycles",
     .min = 0, .max = BIG, .def = NULL, .desc = "latency of one interconnect transfer",
     .off = A_(noc_latency_cycles)},
    {.sec = SEC_CLUSTER, .key = "dma_engines", .type = KT_INT, .unit = "", .min = 1,
     .max = 1024, .def = NULL, .desc = "cluster DMA engines between DDR and the cluster",
     .off = A_(dma_engines)},
    {.sec = SEC_CLUSTER, .key = "dma_latency_cycles", .type = KT_INT, .unit = "cycles",
     .min = 0, .max = BIG, .def = NULL, .desc = "fixed set-up cost of one DMA instruction",
     .off = A_(dma_latency_cycles)},
    /* [core.NAME] */
    {.sec = SEC_CORE, .key = "count", .type = KT_INT, .unit = "", .min = 1, .max = 65536,
     .def = NULL, .desc = "cores of this kind in each cluster", .off = C_(count)},
    {.sec = SEC_CORE, .key = "lb_kib", .type = KT_SIZE, .unit = "KiB", .min = 0,
     .max = 1 << 30, .def = NULL, .desc = "local buffer (LB) per core; 0 = no LB",
     .off = C_(lb_bytes), .scale = 1024},
    {.sec = SEC_CORE, .key = "lb_ports", .type = KT_INT, .unit = "", .min = 1, .max = 1024,
     .def = "1", .when = KW_LB, .desc = "concurrent accesses the LB serves",
     .off = C_(lb_ports)},
    {.sec = SEC_CORE, .key = "lb_port_bytes_per_cycle", .type = KT_FLOAT, .unit = "B/cycle",
     .min = MIN_BW, .max = BIG, .def = NULL, .when = KW_LB,
     .desc = "bandwidth of one LB port", .off = C_(lb_port_bytes_per_cycle)},
    {.sec = SEC_CORE, .key = "lb_latency_cycles", .type = KT_INT, .unit = "cycles", .min = 0,
     .max = BIG, .def = NULL, .when = KW_LB, .desc = "latency of one LB access",
     .off = C_(lb_latency_cycles)},
    {.sec = SEC_CORE, .key = "units", .type = KT_UNITS, .unit = "", .def = NULL,
     .desc = "compute units of the core: names of [unit.NAME] sections, comma-separated, each "
             "at most once; the order is the core's queue order",
     .off = C_(nunits)},
    {.sec = SEC_CORE, .key = "dma_engines", .type = KT_INT, .unit = "", .min = 0, .max = 64,
     .def = "1", .desc = "per-core DMA engines (each a DMA-in and a DMA-out queue)",
     .off = C_(dma_engines)},
    {.sec = SEC_CORE, .key = "lb_read_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B", .min = 0,
     .max = EMAX, .def = NULL, .when = KW_E_LB,
     .desc = "LB energy per byte read, by transfers and by the units' operands (its SRAM size "
             "class, docs/energy.md)",
     .off = C_(lb_read_pj_per_byte)},
    {.sec = SEC_CORE, .key = "lb_write_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B", .min = 0,
     .max = EMAX, .def = NULL, .when = KW_E_LB, .desc = "LB energy per byte written",
     .off = C_(lb_write_pj_per_byte)},
    {.sec = SEC_CORE, .key = "lb_static_mw", .type = KT_FLOAT, .unit = "mW", .min = 0,
     .max = PMAX, .def = NULL, .when = KW_E_LB, .desc = "static power of one core's LB",
     .off = C_(lb_static_mw)},
    /* [unit.NAME] */
    {.sec = SEC_UNIT, .key = "class", .type = KT_CLASS, .unit = "", .def = NULL,
     .desc = "what the unit does: comma list of matrix, vector, scalar", .off = U_(caps)},
    {.sec = SEC_UNIT, .key = "shape", .type = KT_ENUM, .unit = "", .def = NULL,
     .when = KW_MATRIX, .choices = "cube|systolic",
     .desc = "matrix unit organisation: a cube computes one m×n×k block per cycle; a systolic "
             "array is rows×cols PEs",
     .off = U_(shape)},
    {.sec = SEC_UNIT, .key = "cube_m", .type = KT_INT, .unit = "", .min = 1, .max = 4096,
     .def = NULL, .when = KW_CUBE, .desc = "cube block rows (m0)", .off = U_(cube_m)},
    {.sec = SEC_UNIT, .key = "cube_n", .type = KT_INT, .unit = "", .min = 1, .max = 4096,
     .def = NULL, .when = KW_CUBE, .desc = "cube block columns (n0)", .off = U_(cube_n)},
    {.sec = SEC_UNIT, .key = "cube_k", .type = KT_INT, .unit = "", .min = 1, .max = 4096,
     .def = NULL, .when = KW_CUBE, .desc = "cube block reduction depth (k0)",
     .off = U_(cube_k)},
    {.sec = SEC_UNIT, .key = "systolic_rows", .type = KT_INT, .unit = "", .min = 1,
     .max = 65536, .def = NULL, .when = KW_SYSTOLIC, .desc = "systolic array rows (R)",
     .off = U_(sys_rows)},
    {.sec = SEC_UNIT, .key = "systolic_cols", .type = KT_INT, .unit = "", .min = 1,
     .max = 65536, .def = NULL, .when = KW_SYSTOLIC, .desc = "systolic array columns (C)",
     .off = U_(sys_cols)},
    {.sec = SEC_UNIT, .key = "dataflow", .type = KT_ENUM, .unit = "", .def = NULL,
     .when = KW_SYSTOLIC, .choices = "os|ws|is",
     .desc = "systolic dataflow: os = output stationary, ws = weight stationary, is = input "
             "stationary (docs/timing.md: the cycles of each)",
     .off = U_(dataflow)},
    {.sec = SEC_UNIT, .key = "preload_overlap", .type = KT_INT, .unit = "", .min = 0, .max = 1,
     .def = "0", .when = KW_SYSTOLIC,
     .desc = "ws/is: 1 = the next fold's stationary operand is loaded while the current fold "
             "streams (a double-buffered array, as TPUs have); 0 = each fold loads, then streams",
     .off = U_(preload_overlap)},
#define X(e, n, b)                                                                          \
  {.sec = SEC_UNIT, .key = "rate_" n, .type = KT_FLOAT, .unit = "× base",                   \
   .zero_ok = 1, .min = 1.0 / 1024, .max = 1024, .def = "0", .when = KW_MATRIX,            \
   .desc = "MAC/cycle for " n " = base MACs × this (0 = " n " unsupported)",                \
   .off = U_(mac_rate) + (size_t)(e) * sizeof(double)},
    GS_DTYPES(X)
#undef X
    {.sec = SEC_UNIT, .key = "matrix_latency_cycles", .type = KT_INT, .unit = "cycles",
     .min = 0, .max = BIG, .def = NULL, .when = KW_MATRIX,
     .desc = "pipeline latency added once per matrix instruction",
     .off = U_(matrix_latency_cycles)},
#define X(e, n, b)                                                                          \
  {.sec = SEC_UNIT, .key = "lanes_" n, .type = KT_INT, .unit = "elements/cycle", .min = 0,   \
   .max = 1 << 20, .def = "0", .when = KW_VECTOR,                                          \
   .desc = n " elements processed per cycle (0 = " n " unsupported)",                       \
   .off = U_(lanes) + (size_t)(e) * sizeof(int)},
    GS_DTYPES(X)
#undef X
#define X(e, k, d)                                                                          \
  {.sec = SEC_UNIT, .key = "cost_" k, .type = KT_INT, .unit = "cycles", .min = 1,            \
   .max = 1 << 16, .def = NULL, .when = KW_VECTOR,                                         \
   .desc = "cycles per lane-group of one " k " pass: " d,                                   \
   .off = U_(op_cost) + (size_t)(e) * sizeof(int)},
    GS_VCLASSES(X)
#undef X
    {.sec = SEC_UNIT, .key = "vector_latency_cycles", .type = KT_INT, .unit = "cycles",
     .min = 0, .max = BIG, .def = NULL, .when = KW_VECTOR,
     .desc = "pipeline latency added once per vector instruction",
     .off = U_(vector_latency_cycles)},
    {.sec = SEC_UNIT, .key = "scalar_ops_per_cycle", .type = KT_INT, .unit = "ops/cycle",
     .min = 1, .max = 1024, .def = NULL, .when = KW_SCALAR,
     .desc = "scalar operations (address arithmetic, control) per cycle",
     .off = U_(scalar_ops_per_cycle)},
    /* energy of a unit kind (docs/energy.md): per action at the [energy] table's node */
#define X(e, n, b)                                                                          \
  {.sec = SEC_UNIT, .key = "mac_pj_" n, .type = KT_FLOAT, .unit = "pJ", .min = 0,           \
   .max = EMAX, .def = "0", .when = KW_E_MATRIX,                                           \
   .desc = "energy of one " n " MAC (multiply and accumulate); required > 0 when rate_" n    \
           " > 0, must stay 0 when it is 0",                                               \
   .off = U_(mac_pj) + (size_t)(e) * sizeof(double)},
    GS_DTYPES(X)
#undef X
    {.sec = SEC_UNIT, .key = "pe_input_pj_per_mac", .type = KT_FLOAT, .unit = "pJ", .min = 0,
     .max = EMAX, .def = "0", .when = KW_E_MATRIX,
     .desc = "energy per MAC of the input operand's storage inside the array (a PE's input "
             "register or scratchpad); 0: counted in mac_pj",
     .off = U_(pe_input_pj_per_mac)},
    {.sec = SEC_UNIT, .key = "pe_weight_pj_per_mac", .type = KT_FLOAT, .unit = "pJ", .min = 0,
     .max = EMAX, .def = "0", .when = KW_E_MATRIX,
     .desc = "energy per MAC of the weight operand's storage inside the array; 0: counted in "
             "mac_pj",
     .off = U_(pe_weight_pj_per_mac)},
    {.sec = SEC_UNIT, .key = "pe_psum_pj_per_mac", .type = KT_FLOAT, .unit = "pJ", .min = 0,
     .max = EMAX, .def = "0", .when = KW_E_MATRIX,
     .desc = "energy per MAC of the partial sum's storage inside the array (read and write); "
             "0: counted in mac_pj",
     .off = U_(pe_psum_pj_per_mac)},
#define X(e, k, d)                                                                          \
  {.sec = SEC_UNIT, .key = "vop_pj_" k, .type = KT_FLOAT, .unit = "pJ", .min = 0,            \
   .max = EMAX, .def = NULL, .when = KW_E_VECTOR,                                          \
   .desc = "energy of one element through one " k " pass (" d "), any dtype",               \
   .off = U_(vop_pj) + (size_t)(e) * sizeof(double)},
    GS_VCLASSES(X)
#undef X
    {.sec = SEC_UNIT, .key = "scalar_op_pj", .type = KT_FLOAT, .unit = "pJ", .min = 0,
     .max = EMAX, .def = NULL, .when = KW_E_SCALAR, .desc = "energy of one scalar operation",
     .off = U_(scalar_op_pj)},
    {.sec = SEC_UNIT, .key = "static_mw", .type = KT_FLOAT, .unit = "mW", .min = 0,
     .max = PMAX, .def = NULL, .when = KW_ENERGY,
     .desc = "static (leakage) power of one instance of the unit, at the chip's node",
     .off = U_(static_mw)},
    /* [energy] */
    {.sec = SEC_ENERGY, .key = "node_nm", .type = KT_FLOAT, .unit = "nm", .min = 1, .max = 1000,
     .def = NULL, .when = KW_ENERGY, .desc = "the chip's process node", .off = A_(energy.node_nm)},
    {.sec = SEC_ENERGY, .key = "vdd_v", .type = KT_FLOAT, .unit = "V", .min = 0.1, .max = 5,
     .def = NULL, .when = KW_ENERGY, .desc = "the chip's core supply voltage",
     .off = A_(energy.vdd_v)},
    {.sec = SEC_ENERGY, .key = "table_node_nm", .type = KT_FLOAT, .unit = "nm", .min = 1,
     .max = 1000, .def = NULL, .when = KW_ENERGY,
     .desc = "the node at which this file's on-chip per-action energies are written (45 for "
             "Horowitz ISSCC'14); they are scaled by (node_nm / table_node_nm) × (vdd_v / "
             "table_vdd_v)²",
     .off = A_(energy.table_node_nm)},
    {.sec = SEC_ENERGY, .key = "table_vdd_v", .type = KT_FLOAT, .unit = "V", .min = 0.1,
     .max = 5, .def = NULL, .when = KW_ENERGY,
     .desc = "the supply voltage of the table's energies (0.9 for Horowitz ISSCC'14)",
     .off = A_(energy.table_vdd_v)},
    {.sec = SEC_ENERGY, .key = "ddr_read_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B",
     .min = 0, .max = EMAX, .def = NULL, .when = KW_ENERGY,
     .desc = "DDR/HBM energy per byte read (device, I/O and PHY; not scaled)",
     .off = A_(energy.ddr_read_pj_per_byte)},
    {.sec = SEC_ENERGY, .key = "ddr_write_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B",
     .min = 0, .max = EMAX, .def = NULL, .when = KW_ENERGY,
     .desc = "DDR/HBM energy per byte written (not scaled)",
     .off = A_(energy.ddr_write_pj_per_byte)},
    {.sec = SEC_ENERGY, .key = "ddr_static_mw", .type = KT_FLOAT, .unit = "mW", .min = 0,
     .max = PMAX, .def = NULL, .when = KW_ENERGY,
     .desc = "DDR/HBM background power (refresh, standby, PHY), all channels",
     .off = A_(energy.ddr_static_mw)},
    {.sec = SEC_ENERGY, .key = "gb_read_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B",
     .min = 0, .max = EMAX, .def = NULL, .when = KW_E_GB,
     .desc = "GB energy per byte read (its SRAM size class, docs/energy.md)",
     .off = A_(energy.gb_read_pj_per_byte)},
    {.sec = SEC_ENERGY, .key = "gb_write_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B",
     .min = 0, .max = EMAX, .def = NULL, .when = KW_E_GB, .desc = "GB energy per byte written",
     .off = A_(energy.gb_write_pj_per_byte)},
    {.sec = SEC_ENERGY, .key = "gb_static_mw", .type = KT_FLOAT, .unit = "mW", .min = 0,
     .max = PMAX, .def = NULL, .when = KW_E_GB, .desc = "static power of one cluster's GB",
     .off = A_(energy.gb_static_mw)},
    {.sec = SEC_ENERGY, .key = "noc_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B", .min = 0,
     .max = EMAX, .def = NULL, .when = KW_ENERGY,
     .desc = "energy of one byte over a core's interconnect link (the model has one link per "
             "transfer, no hops)",
     .off = A_(energy.noc_pj_per_byte)},
    {.sec = SEC_ENERGY, .key = "cluster_link_pj_per_byte", .type = KT_FLOAT, .unit = "pJ/B",
     .min = 0, .max = EMAX, .def = "0", .when = KW_ENERGY,
     .desc = "energy of one byte between two clusters (chip-to-chip or die-to-die I/O; not "
             "scaled); required when chip.cluster_link_bytes_per_cycle > 0",
     .off = A_(energy.cluster_link_pj_per_byte)},
    {.sec = SEC_ENERGY, .key = "dma_pj_per_transfer", .type = KT_FLOAT, .unit = "pJ", .min = 0,
     .max = EMAX, .def = NULL, .when = KW_ENERGY,
     .desc = "energy of one transfer instruction (descriptor fetch, address generation)",
     .off = A_(energy.dma_pj_per_transfer)},
    {.sec = SEC_ENERGY, .key = "other_static_mw", .type = KT_FLOAT, .unit = "mW", .min = 0,
     .max = PMAX, .def = NULL, .when = KW_ENERGY,
     .desc = "static power of the rest of the chip (control processors, I/O, clock tree)",
     .off = A_(energy.other_static_mw)},
};
const int arch_nkeys = (int)(sizeof arch_keys / sizeof arch_keys[0]);

_Static_assert(sizeof(GsMatShape) == sizeof(int) && sizeof(GsDataflow) == sizeof(int) &&
                   sizeof(GsDdrModel) == sizeof(int) && sizeof(GsTransferModel) == sizeof(int),
               "KT_ENUM stores an int into enum fields");

static const char *const cap_names[] = {"matrix", "vector", "scalar"};
const char *arch_cap_name(unsigned cap) {
  for (unsigned i = 0; i < 3; i++)
    if (cap == 1u << i) return cap_names[i];
  return "?";
}

const void *arch_section_obj(const GsArch *a, ArchSecKind sec, int index) {
  if (sec == SEC_CORE) return &a->core_kinds[index];
  if (sec == SEC_UNIT) return &a->units[index];
  return a;
}

int arch_key_applies(const ArchKey *k, const GsArch *a, const void *obj) {
  const GsCoreKind *c = obj;
  const GsUnitKind *u = obj;
  switch (k->when) {
  case KW_ALWAYS: return 1;
  case KW_GB: return a->gb_bytes > 0;
  case KW_LB: return c->lb_bytes > 0;
  case KW_DRAM: return a->ddr_model == DDR_DRAM;
  case KW_MATRIX: return (u->caps & CAP_MATRIX) != 0;
  case KW_CUBE: return (u->caps & CAP_MATRIX) && u->shape == MAT_CUBE;
  case KW_SYSTOLIC: return (u->caps & CAP_MATRIX) && u->shape == MAT_SYSTOLIC;
  case KW_VECTOR: return (u->caps & CAP_VECTOR) != 0;
  case KW_SCALAR: return (u->caps & CAP_SCALAR) != 0;
  case KW_ENERGY: return a->energy.present;
  case KW_E_GB: return a->energy.present && a->gb_bytes > 0;
  case KW_E_LB: return a->energy.present && c->lb_bytes > 0;
  case KW_E_MATRIX: return a->energy.present && (u->caps & CAP_MATRIX) != 0;
  case KW_E_VECTOR: return a->energy.present && (u->caps & CAP_VECTOR) != 0;
  case KW_E_SCALAR: return a->energy.present && (u->caps & CAP_SCALAR) != 0;
  }
  return 0;
}

int arch_key_strict(const ArchKey *k, const GsArch *a) {
  if (k->when >= KW_ENERGY && !a->energy.present) return 1;
  return k->when >= KW_MATRIX && k->when != KW_E_GB && k->when != KW_E_LB;
}

/* Word `i` of a '|'-separated list into buf. */
static void choice_word(const char *choices, int i, char *buf, size_t n) {
  const char *p = choices;
  for (; i > 0 && p; i--) {
    p = strchr(p, '|');
    if (p) p++;
  }
  if (!p) {
    snprintf(buf, n, "?");
    return;
  }
  const char *e = strchr(p, '|');
  size_t len = e ? (size_t)(e - p) : strlen(p);
  snprintf(buf, n, "%.*s", (int)len, p);
}

void arch_format_value(const ArchKey *k, const GsArch *a, const void *obj, char *buf, size_t n) {
  const char *base = obj;
  const void *f = base + k->off;
  switch (k->type) {
  case KT_STR: snprintf(buf, n, "%s", *(const char *const *)f); break;
  case KT_INT: snprintf(buf, n, "%d", *(const int *)f); break;
  case KT_FLOAT: { /* shortest text that reads back as the same double */
    double v = *(const double *)f;
    snprintf(buf, n, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, n, "%.17g", v);
    break;
  }
  case KT_SIZE: snprintf(buf, n, "%lld", (long long)(*(const int64_t *)f / k->scale)); break;
  case KT_ENUM: choice_word(k->choices, *(const int *)f, buf, n); break;
  case KT_CLASS: {
    unsigned caps = *(const unsigned *)f;
    buf[0] = 0;
    for (unsigned i = 0; i < 3; i++)
      if (caps & (1u << i)) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", l ? ", " : "", cap_names[i]);
      }
    break;
  }
  case KT_UNITS: {
    const GsCoreKind *c = obj;
    buf[0] = 0;
    for (int i = 0; i < c->nunits; i++) {
      size_t l = strlen(buf);
      snprintf(buf + l, n - l, "%s%s", i ? ", " : "", a->units[c->unit[i]].name);
    }
    break;
  }
  }
}

/* ---------------------------------------------------------------- parser state */

enum { MAX_SECTIONS = 4 + GS_MAX_CORE_KINDS + GS_MAX_UNIT_KINDS };

typedef struct {
  const char *val; /* raw text; NULL = not set */
  const char *file;
  int line;        /* 0 for --set */
  const char *note; /* the line's comment (its provenance), NULL if none */
} Setting;

typedef struct {
  ArchSecKind kind;
  const char *full;  /* "core.pe" */
  int line;          /* of the header */
  Setting *set;      /* [arch_nkeys] */
} Section;

typedef struct {
  GsArena *ar;
  GsDiag *d;
  const char *file;
  const char *text;
  size_t len, pos;
  int line;
  int syntax_errors;
  Section secs[MAX_SECTIONS];
  int nsecs;
  int cur; /* index of the current section; -1 before any or after a bad header */
  int skip_keys; /* current header was bad: its keys are not reported again */
  int has_nul;   /* the text holds a NUL byte: never show source lines */
  const char *note; /* the comment of the line being read, NULL if none */
} Parser;

/* A printable copy of a raw text for messages: at most 60 chars, control bytes as '?'. */
static const char *shown(Parser *p, const char *s) {
  size_t n = strlen(s), m = n > 60 ? 60 : n;
  char *r = arena_alloc(p->ar, m + 4);
  for (size_t i = 0; i < m; i++) r[i] = s[i] < 32 || s[i] > 126 ? '?' : s[i];
  if (n > m) memcpy(r + m, "...", 3);
  return r;
}

/* The line of the file when it is short and printable (shown under the message). */
static const char *src_for(Parser *p, const char *file, int line) {
  if (!p->text || p->has_nul || file != p->file || line < 1) return NULL;
  const char *s = p->text;
  for (int l = 1; l < line; s++) {
    if (s >= p->text + p->len) return NULL;
    if (*s == '\n') l++;
  }
  for (const char *e = s; e < p->text + p->len && *e != '\n'; e++)
    if (e - s > 150 || ((unsigned char)*e < 32 && *e != '\t' && *e != '\r')) return NULL;
  return p->text;
}

static void err(Parser *p, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void err(Parser *p, const char *file, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(p->d, file, line, 0, src_for(p, file, line), "%s", msg);
}

static int key_index(ArchSecKind sec, const char *key) {
  for (int i = 0; i < arch_nkeys; i++)
    if (arch_keys[i].sec == sec && strcmp(arch_keys[i].key, key) == 0) return i;
  return -1;
}

static int is_ident(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

static int find_section(Parser *p, const char *full) {
  for (int i = 0; i < p->nsecs; i++)
    if (strcmp(p->secs[i].full, full) == 0) return i;
  return -1;
}

static int count_kind(Parser *p, ArchSecKind k) {
  int n = 0;
  for (int i = 0; i < p->nsecs; i++) n += p->secs[i].kind == k;
  return n;
}

/* A section header `[name]` at the current line. */
static void open_section(Parser *p, const char *name) {
  p->cur = -1;
  p->skip_keys = 1;
  ArchSecKind kind = SEC_KINDS;
  const char *dot = strchr(name, '.');
  if (!dot) {
    for (int k = SEC_CHIP; k <= SEC_CLUSTER; k++)
      if (strcmp(name, arch_sec_names[k]) == 0) kind = (ArchSecKind)k;
    if (strcmp(name, arch_sec_names[SEC_ENERGY]) == 0) kind = SEC_ENERGY;
    if (kind == SEC_KINDS && (strcmp(name, "core") == 0 || strcmp(name, "unit") == 0)) {
      err(p, p->file, p->line, "section [%s] needs a name: [%s.NAME]", name, name);
      p->syntax_errors++;
      return;
    }
  } else {
    size_t pre = (size_t)(dot - name);
    if (pre == 4 && strncmp(name, "core", 4) == 0) kind = SEC_CORE;
    if (pre == 4 && strncmp(name, "unit", 4) == 0) kind = SEC_UNIT;
    if (kind != SEC_KINDS && !is_ident(dot + 1, strlen(dot + 1))) {
      err(p, p->file, p->line,
          "bad section name [%s]: NAME must be letters, digits, '_' or '-'", shown(p, name));
      p->syntax_errors++;
      return;
    }
  }
  if (kind == SEC_KINDS) {
    err(p, p->file, p->line,
        "unknown section [%s] (sections: chip, ddr, cluster, core.NAME, unit.NAME, energy)",
        shown(p, name));
    p->syntax_errors++;
    return;
  }
  int prev = find_section(p, name);
  if (prev >= 0) {
    err(p, p->file, p->line, "duplicate section [%s] (first at line %d)", name,
        p->secs[prev].line);
    p->syntax_errors++;
    return;
  }
  int limit = kind == SEC_CORE ? GS_MAX_CORE_KINDS : kind == SEC_UNIT ? GS_MAX_UNIT_KINDS : 1;
  if (count_kind(p, kind) >= limit) {
    err(p, p->file, p->line, "too many [%s.*] sections in [%s] (at most %d)",
        arch_sec_names[kind], name, limit);
    p->syntax_errors++;
    return;
  }
  Section *s = &p->secs[p->nsecs];
  s->kind = kind;
  s->full = arena_strdup(p->ar, name);
  s->line = p->line;
  s->set = arena_alloc(p->ar, sizeof(Setting) * (size_t)arch_nkeys);
  p->cur = p->nsecs++;
  p->skip_keys = 0;
}

/* ini_reader: one line per call. Returns NULL at the end. The line given to inih is the
 * line with leading blanks, comments and the end of line removed (so inih never sees a
 * continuation line), or an empty line when we reported the line ourselves. */
static char *reader(char *str, int num, void *stream) {
  Parser *p = stream;
  if (p->pos >= p->len || num < 4) return NULL;
  const char *s = p->text + p->pos;
  size_t rest = p->len - p->pos;
  const char *nl = memchr(s, '\n', rest);
  size_t n = nl ? (size_t)(nl - s) : rest;
  p->pos += n + (nl ? 1 : 0);
  p->line++;
  p->note = NULL;
  str[0] = '\n';
  str[1] = 0;
  if (p->line == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3, n -= 3; /* BOM */
  if (memchr(s, 0, n)) { /* a binary file: one message, then stop reading */
    err(p, p->file, p->line, "NUL byte: this is not a text config file");
    p->syntax_errors++;
    p->pos = p->len;
    return str;
  }
  while (n && (*s == ' ' || *s == '\t')) s++, n--;
  while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
  if (n == 0 || *s == ';' || *s == '#') return str;
  for (size_t i = 1; i < n; i++) /* inline comment: ';' after a blank, as inih has it */
    if (s[i] == ';' && (s[i - 1] == ' ' || s[i - 1] == '\t')) {
      size_t c = i + 1;
      while (c < n && (s[c] == ' ' || s[c] == '\t')) c++;
      if (c < n) p->note = arena_strndup(p->ar, s + c, n - c);
      n = i;
      while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
      break;
    }
  if ((int)n > num - 2) {
    err(p, p->file, p->line, "line too long (%zu characters before any comment; at most %d)",
        n, num - 2);
    p->syntax_errors++;
    return str;
  }
  if (*s == '[') {
    p->cur = -1; /* until the header is known good, keys below it belong nowhere */
    p->skip_keys = 1;
    const char *close = memchr(s, ']', n);
    if (!close) {
      err(p, p->file, p->line, "section header without ']'");
      p->syntax_errors++;
      return str;
    }
    if ((size_t)(close - s) + 1 != n) {
      err(p, p->file, p->line, "unexpected text after ']' in section header");
      p->syntax_errors++;
      return str;
    }
    size_t nl2 = (size_t)(close - s) - 1;
    char name[64];
    if (nl2 >= sizeof name - 14) { /* inih keeps 50 bytes of a section name */
      err(p, p->file, p->line, "section name too long (at most %zu characters)",
          sizeof name - 15);
      p->syntax_errors++;
      p->cur = -1;
      p->skip_keys = 1;
      return str;
    }
    memcpy(name, s + 1, nl2);
    name[nl2] = 0;
    open_section(p, name);
    memcpy(str, s, n);
    str[n] = '\n';
    str[n + 1] = 0;
    return str;
  }
  const char *eq = memchr(s, '=', n), *colon = memchr(s, ':', n);
  if (!eq || (colon && colon < eq)) {
    err(p, p->file, p->line, "expected 'key = value' or '[section]', got '%s'",
        shown(p, arena_strndup(p->ar, s, n)));
    p->syntax_errors++;
    return str;
  }
  if (eq == s) {
    err(p, p->file, p->line, "missing key name before '='");
    p->syntax_errors++;
    return str;
  }
  memcpy(str, s, n);
  str[n] = '\n';
  str[n + 1] = 0;
  return str;
}

/* Edit distance between two short strings (n small: keys are < 32 characters). */
static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 99;
  int row[64];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (row[j] + 1 < best) best = row[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* The key of section kind `sec` closest to `key`, if it is close enough to be a typo. */
static const char *suggest_key(ArchSecKind sec, const char *key) {
  const char *best = NULL;
  int bd = 3; /* at most 2 edits */
  for (int i = 0; i < arch_nkeys; i++) {
    if (arch_keys[i].sec != sec) continue;
    int d = edit_distance(key, arch_keys[i].key);
    if (d < bd) bd = d, best = arch_keys[i].key;
  }
  return best;
}

/* Store a key's raw text; `file`/`line` say where it came from. */
static void store_key(Parser *p, Section *s, const char *key, const char *val, const char *file,
                      int line, int is_override) {
  int ki = key_index(s->kind, key);
  if (ki < 0) {
    const char *hint = suggest_key(s->kind, key);
    err(p, file, line, "%s.%s: unknown key in [%s]%s%s%s", s->full, shown(p, key), s->full,
        hint ? " (did you mean " : "", hint ? hint : "", hint ? "?)" : "");
    return;
  }
  Setting *st = &s->set[ki];
  if (st->val && !is_override) {
    err(p, file, line, "%s.%s: duplicate key (first set at line %d)", s->full, key, st->line);
    return;
  }
  st->val = arena_strdup(p->ar, val);
  st->file = file;
  st->line = line;
  st->note = is_override ? file : p->note; /* "--set sec.key=value" says where it came from */
}

static int handler(void *user, const char *section, const char *name, const char *value) {
  Parser *p = user;
  (void)section; /* the reader tracked the section; it also saw headers inih does not report */
  if (p->cur < 0) {
    if (!p->skip_keys) err(p, p->file, p->line, "key '%s' outside any section", shown(p, name));
    return 1;
  }
  store_key(p, &p->secs[p->cur], name, value, p->file, p->line, 0);
  return 1;
}

/* `--set section.key=value`; the argument itself is the location in messages. */
static void apply_set(Parser *p, const char *arg) {
  char *loc = arena_printf(p->ar, "--set %s", arg);
  const char *eq = strchr(arg, '=');
  if (!eq) {
    err(p, loc, 0, "expected section.key=value");
    return;
  }
  while (*arg == ' ' || *arg == '\t') arg++; /* blanks around the key as in a file */
  char *lhs = arena_strndup(p->ar, arg, (size_t)(eq - arg));
  for (size_t n = strlen(lhs); n && (lhs[n - 1] == ' ' || lhs[n - 1] == '\t'); n--) lhs[n - 1] = 0;
  char *dot = strrchr(lhs, '.');
  if (!dot || dot == lhs || !dot[1]) {
    err(p, loc, 0, "expected section.key=value (e.g. ddr.bandwidth_gb_per_s=68)");
    return;
  }
  *dot = 0;
  const char *val = eq + 1;
  while (*val == ' ' || *val == '\t') val++;
  char *v = arena_strdup(p->ar, val);
  for (size_t n = strlen(v); n && (v[n - 1] == ' ' || v[n - 1] == '\t'); n--) v[n - 1] = 0;
  int si = find_section(p, lhs);
  if (si < 0) {
    err(p, loc, 0, "no section [%s] in %s (--set overrides keys of existing sections)",
        shown(p, lhs), p->file);
    return;
  }
  store_key(p, &p->secs[si], dot + 1, v, loc, 0, 1);
}

/* ---------------------------------------------------------------- resolve */

static void range_text(const ArchKey *k, char *buf, size_t n) {
  if (k->min_exclusive) snprintf(buf, n, "> %.15g and <= %.15g", k->min, k->max);
  else snprintf(buf, n, "%s%.15g to %.15g", k->zero_ok ? "0, or " : "", k->min, k->max);
}

static int parse_int(const char *s, long long *out) {
  const char *q = s;
  if (*q == '-' || *q == '+') q++;
  if (!*q) return -1;
  for (; *q; q++)
    if (*q < '0' || *q > '9') return -1;
  errno = 0;
  *out = strtoll(s, NULL, 10);
  return errno == ERANGE ? 1 : 0;
}

static int parse_float(const char *s, double *out) {
  if (!*s) return -1;
  int digits = 0;
  for (const char *q = s; *q; q++) {
    if (*q >= '0' && *q <= '9') digits = 1;
    else if (!strchr("+-.eE", *q)) return -1; /* no hex floats, inf, nan */
  }
  if (!digits) return -1;
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  if (*end) return -1;
  return errno == ERANGE || !isfinite(*out) ? 1 : 0;
}

static int in_range(const ArchKey *k, double v) {
  if (k->zero_ok && v == 0) return 1;
  return (k->min_exclusive ? v > k->min : v >= k->min) && v <= k->max;
}

/* Convert one raw text into its field. Returns 0 on success; on error reports it (at
 * file:line) and returns -1. KT_UNITS stores nothing here (resolved after every unit kind). */
static int convert(Parser *p, const ArchKey *k, const char *sec, const char *val,
                   const char *file, int line, void *obj) {
  char *f = (char *)obj + k->off;
  char range[96];
  range_text(k, range, sizeof range);
  if (!*val && k->type != KT_STR) {
    err(p, file, line, "%s.%s: empty value", sec, k->key);
    return -1;
  }
  switch (k->type) {
  case KT_STR:
    if (!*val) {
      err(p, file, line, "%s.%s: empty value", sec, k->key);
      return -1;
    }
    *(const char **)f = arena_strdup(p->ar, val);
    return 0;
  case KT_INT:
  case KT_SIZE: {
    long long v;
    int r = parse_int(val, &v);
    if (r < 0) {
      err(p, file, line, "%s.%s: expected an integer, got '%s'", sec, k->key, shown(p, val));
      return -1;
    }
    if (r > 0 || !in_range(k, (double)v)) {
      err(p, file, line, "%s.%s: %s is out of range (allowed: %s%s%s)", sec, k->key,
          shown(p, val), range, *k->unit ? " " : "", k->unit);
      return -1;
    }
    if (k->type == KT_INT) *(int *)f = (int)v;
    else *(int64_t *)f = (int64_t)v * k->scale;
    return 0;
  }
  case KT_FLOAT: {
    double v;
    int r = parse_float(val, &v);
    if (r < 0) {
      err(p, file, line, "%s.%s: expected a number, got '%s'", sec, k->key, shown(p, val));
      return -1;
    }
    if (r > 0 || !in_range(k, v)) {
      err(p, file, line, "%s.%s: %s is out of range (allowed: %s%s%s)", sec, k->key,
          shown(p, val), range, *k->unit ? " " : "", k->unit);
      return -1;
    }
    *(double *)f = v;
    return 0;
  }
  case KT_ENUM: {
    const char *c = k->choices;
    size_t n = strlen(val);
    for (int i = 0; c; i++) {
      const char *e = strchr(c, '|');
      size_t len = e ? (size_t)(e - c) : strlen(c);
      if (len == n && strncmp(c, val, n) == 0) {
        *(int *)f = i;
        return 0;
      }
      c = e ? e + 1 : NULL;
    }
    err(p, file, line, "%s.%s: '%s' is not one of %s", sec, k->key, shown(p, val), k->choices);
    return -1;
  }
  case KT_CLASS: {
    unsigned caps = 0;
    const char *q = val;
    for (;;) {
      while (*q == ' ' || *q == '\t') q++;
      const char *e = strchr(q, ',');
      size_t len = e ? (size_t)(e - q) : strlen(q);
      while (len && (q[len - 1] == ' ' || q[len - 1] == '\t')) len--;
      unsigned bit = 0;
      for (unsigned i = 0; i < 3; i++)
        if (strlen(cap_names[i]) == len && strncmp(cap_names[i], q, len) == 0) bit = 1u << i;
      if (!bit) {
        err(p, file, line, "%s.%s: '%s' is not a unit class (matrix, vector, scalar)", sec,
            k->key, shown(p, arena_strndup(p->ar, q, len)));
        return -1;
      }
      if (caps & bit) {
        err(p, file, line, "%s.%s: '%s' listed twice", sec, k->key, arch_cap_name(bit));
        return -1;
      }
      caps |= bit;
      if (!e) break;
      q = e + 1;
    }
    *(unsigned *)f = caps;
    return 0;
  }
  case KT_UNITS: return 0;
  }
  return -1;
}

/* The unit kind named `name` (its index in GsArch.units), or -1. */
static int unit_by_name(const GsArch *a, const char *name, size_t n) {
  for (int i = 0; i < a->nunit_kinds; i++)
    if (strlen(a->units[i].name) == n && strncmp(a->units[i].name, name, n) == 0) return i;
  return -1;
}

static const char *when_text(ArchWhen w) {
  switch (w) {
  case KW_ALWAYS: return "";
  case KW_GB: return "gb_kib > 0";
  case KW_LB: return "lb_kib > 0";
  case KW_DRAM: return "model = dram";
  case KW_MATRIX: return "class includes matrix";
  case KW_CUBE: return "shape = cube";
  case KW_SYSTOLIC: return "shape = systolic";
  case KW_VECTOR: return "class includes vector";
  case KW_SCALAR: return "class includes scalar";
  case KW_ENERGY: return "the config has an [energy] section";
  case KW_E_GB: return "the config has an [energy] section and gb_kib > 0";
  case KW_E_LB: return "the config has an [energy] section and lb_kib > 0";
  case KW_E_MATRIX: return "the config has an [energy] section and class includes matrix";
  case KW_E_VECTOR: return "the config has an [energy] section and class includes vector";
  case KW_E_SCALAR: return "the config has an [energy] section and class includes scalar";
  }
  return "";
}

/* Resolve the keys of one section into obj. */
static void resolve_section(Parser *p, GsArch *a, Section *s, void *obj) {
  for (int i = 0; i < arch_nkeys; i++) {
    const ArchKey *k = &arch_keys[i];
    if (k->sec != s->kind) continue;
    Setting *st = &s->set[i];
    int applies = arch_key_applies(k, a, obj);
    if (st->val) {
      if (!applies && arch_key_strict(k, a)) {
        err(p, st->file, st->line, "%s.%s: does not apply to this %s (only when %s)", s->full,
            k->key, arch_sec_names[s->kind], when_text(k->when));
        continue;
      }
      if (convert(p, k, s->full, st->val, st->file, st->line, obj) != 0 &&
          (k->type == KT_CLASS || (k->type == KT_ENUM && k->when == KW_MATRIX)))
        return; /* the keys below depend on this one: do not cascade */
    } else if (applies && !k->def) {
      if (k->type == KT_CLASS || k->type == KT_ENUM) {
        err(p, p->file, s->line, "%s.%s: missing required key%s%s%s", s->full, k->key,
            k->when ? " (required when " : "", when_text(k->when), k->when ? ")" : "");
        if (k->type == KT_CLASS || k->when == KW_MATRIX)
          return; /* the keys below depend on class and shape: do not cascade */
        continue;
      }
      if (k->when == KW_ALWAYS)
        err(p, p->file, s->line, "%s.%s: missing required key", s->full, k->key);
      else
        err(p, p->file, s->line, "%s.%s: missing required key (required when %s)", s->full,
            k->key, when_text(k->when));
    } else if (k->def) {
      if (convert(p, k, s->full, k->def, "schema", 0, obj) != 0)
        die("bad default '%s' for %s", k->def, k->key);
    }
  }
}

static const Setting *setting_of(const Section *s, const char *key) {
  int ki = key_index(s->kind, key);
  gs_assert(ki >= 0);
  return &s->set[ki];
}

/* Where to point a message about key `key` of section s: its setting, else the header. */
static void loc_of(Parser *p, const Section *s, const char *key, const char **file, int *line) {
  const Setting *st = setting_of(s, key);
  *file = st->val ? st->file : p->file;
  *line = st->val ? st->line : s->line;
}

/* The comments of the keys set (their provenance), for --describe. */
static void keep_notes(Parser *p, GsArch *a) {
  a->notes = arena_alloc(p->ar, sizeof *a->notes * (size_t)(p->nsecs * arch_nkeys + 1));
  a->nnotes = 0;
  for (int i = 0; i < p->nsecs; i++)
    for (int k = 0; k < arch_nkeys; k++) {
      const Setting *st = &p->secs[i].set[k];
      if (!st->val || !st->note) continue;
      GsArchNote *n = &a->notes[a->nnotes++];
      n->section = p->secs[i].full;
      n->key = arch_keys[k].key;
      n->note = st->note;
    }
}

const char *arch_note(const GsArch *a, const char *section, const char *key) {
  for (int i = 0; i < a->nnotes; i++)
    if (strcmp(a->notes[i].section, section) == 0 && strcmp(a->notes[i].key, key) == 0)
      return a->notes[i].note;
  return NULL;
}

/* Resolve core.units lists (names -> unit indices). */
static void resolve_units_list(Parser *p, GsArch *a, Section *s, GsCoreKind *c) {
  const Setting *st = setting_of(s, "units");
  if (!st->val || !*st->val) return; /* reported already */
  const char *q = st->val;
  for (;;) {
    while (*q == ' ' || *q == '\t') q++;
    const char *e = strchr(q, ',');
    size_t len = e ? (size_t)(e - q) : strlen(q);
    while (len && (q[len - 1] == ' ' || q[len - 1] == '\t')) len--;
    if (len == 0) {
      err(p, st->file, st->line, "%s.units: empty name in the list", s->full);
      return;
    }
    int u = unit_by_name(a, q, len);
    if (u < 0) {
      err(p, st->file, st->line, "%s.units: '%s' is not a defined unit kind (no [unit.%s])",
          s->full, shown(p, arena_strndup(p->ar, q, len)),
          shown(p, arena_strndup(p->ar, q, len)));
      return;
    }
    for (int j = 0; j < c->nunits; j++)
      if (c->unit[j] == u) {
        err(p, st->file, st->line,
            "%s.units: '%s' listed twice (define a second [unit.NAME] for a second unit)",
            s->full, a->units[u].name);
        return;
      }
    if (c->nunits == GS_MAX_UNITS_PER_CORE) {
      err(p, st->file, st->line, "%s.units: more than %d units", s->full,
          GS_MAX_UNITS_PER_CORE);
      return;
    }
    c->unit[c->nunits++] = u;
    if (!e) break;
    q = e + 1;
  }
}

static void fill_derived(GsArch *a) {
  a->cores_per_cluster = 0;
  for (int i = 0; i < a->ncore_kinds; i++) a->cores_per_cluster += a->core_kinds[i].count;
  a->ddr_bytes_per_cycle = a->ddr_bandwidth_gb_per_s * 1e3 / a->clock_mhz;
  /* the small tolerance keeps e.g. 100 ns at 700 MHz = 70.000000001 at 70 cycles */
  double lat = a->ddr_latency_ns * a->clock_mhz / 1e3;
  a->ddr_latency_cycles = (int)ceil(lat - 1e-9);
  /* DRAM timing in chip cycles, kept fractional (transfers are timed in fractional cycles) */
  double cyc_per_ns = a->clock_mhz / 1e3;
  a->ddr_miss_cycles = (a->ddr_trp_ns + a->ddr_trcd_ns) * cyc_per_ns;
  a->ddr_act_cycles = fmin(a->ddr_trrd_ns * cyc_per_ns, a->ddr_miss_cycles);
  a->ddr_wtr_cycles = a->ddr_twtr_ns * cyc_per_ns;
  a->ddr_rtw_cycles = a->ddr_trtw_ns * cyc_per_ns;
  a->ddr_refresh_factor = a->ddr_trefi_ns > a->ddr_trfc_ns
                              ? a->ddr_trefi_ns / (a->ddr_trefi_ns - a->ddr_trfc_ns)
                              : 1;
  const GsEnergyCfg *e = &a->energy;
  a->energy.scale = e->present ? e->node_nm / e->table_node_nm * (e->vdd_v / e->table_vdd_v) *
                                     (e->vdd_v / e->table_vdd_v)
                               : 0;
}

/* With an [energy] section: a matrix unit's mac_pj_<t> is given exactly for the dtypes it
 * computes, and a chip with a cluster link prices its bytes. */
static void check_energy(Parser *p, const GsArch *a) {
  if (!a->energy.present) return;
  const char *f;
  int line;
  for (int i = 0; i < p->nsecs; i++) {
    Section *s = &p->secs[i];
    if (s->kind != SEC_UNIT) continue;
    const GsUnitKind *u = &a->units[unit_by_name(a, s->full + 5, strlen(s->full + 5))];
    if (!(u->caps & CAP_MATRIX)) continue;
    for (int t = 0; t < DT_COUNT; t++) {
      char key[32];
      snprintf(key, sizeof key, "mac_pj_%s", arch_dtype_name((GsDtype)t));
      loc_of(p, s, key, &f, &line);
      if (u->mac_rate[t] > 0 && u->mac_pj[t] <= 0)
        err(p, f, line, "%s.%s: missing (the unit computes %s: rate_%s > 0)", s->full, key,
            arch_dtype_name((GsDtype)t), arch_dtype_name((GsDtype)t));
      else if (u->mac_rate[t] == 0 && u->mac_pj[t] > 0)
        err(p, f, line, "%s.%s: the unit does not compute %s (rate_%s = 0)", s->full, key,
            arch_dtype_name((GsDtype)t), arch_dtype_name((GsDtype)t));
    }
  }
  int energy = find_section(p, arch_sec_names[SEC_ENERGY]);
  const Setting *st = setting_of(&p->secs[energy], "cluster_link_pj_per_byte");
  if (a->cluster_link_bytes_per_cycle > 0 && a->nclusters > 1 && !st->val)
    err(p, p->file, p->secs[energy].line, "energy.cluster_link_pj_per_byte: missing required key "
        "(required when chip.cluster_link_bytes_per_cycle > 0)");
}

static void check_cross(Parser *p, GsArch *a) {
  const char *f;
  int line;
  Section *ddr = NULL, *cl = NULL;
  for (int i = 0; i < p->nsecs; i++) {
    if (p->secs[i].kind == SEC_DDR) ddr = &p->secs[i];
    if (p->secs[i].kind == SEC_CLUSTER) cl = &p->secs[i];
  }
  if (ddr && a->ddr_burst_bytes > 0 && a->ddr_interleave_bytes % a->ddr_burst_bytes != 0) {
    loc_of(p, ddr, "interleave_bytes", &f, &line);
    err(p, f, line, "ddr.interleave_bytes: %d is not a multiple of ddr.burst_bytes (%d)",
        a->ddr_interleave_bytes, a->ddr_burst_bytes);
  }
  if (ddr && a->ddr_model == DDR_DRAM && a->ddr_burst_bytes > 0 &&
      a->ddr_row_bytes % a->ddr_burst_bytes != 0) {
    loc_of(p, ddr, "row_bytes", &f, &line);
    err(p, f, line, "ddr.row_bytes: %d is not a multiple of ddr.burst_bytes (%d)",
        a->ddr_row_bytes, a->ddr_burst_bytes);
  }
  if (ddr && a->ddr_model == DDR_DRAM && a->ddr_trfc_ns >= a->ddr_trefi_ns) {
    loc_of(p, ddr, "trfc_ns", &f, &line);
    err(p, f, line, "ddr.trfc_ns: %g is not less than ddr.trefi_ns (%g): refresh would take "
        "all of the channel's time", a->ddr_trfc_ns, a->ddr_trefi_ns);
  }
  if (cl && a->ncore_kinds == 0)
    err(p, p->file, cl->line, "cluster has no cores: add a [core.NAME] section");
  long long cores = 0;
  for (int i = 0; i < a->ncore_kinds; i++) cores += a->core_kinds[i].count;
  if (cl && cores > 65536)
    err(p, p->file, cl->line, "%lld cores per cluster (at most 65536)", cores);
  else if (cl && cores * a->nclusters > ARCH_MAX_CORES)
    err(p, p->file, cl->line, "%d clusters x %lld cores = %lld cores on the chip, more than the "
        "%d the simulator elaborates", a->nclusters, cores, cores * a->nclusters, ARCH_MAX_CORES);
  for (int i = 0; i < p->nsecs; i++) {
    Section *s = &p->secs[i];
    if (s->kind != SEC_UNIT) continue;
    int ui = unit_by_name(a, s->full + 5, strlen(s->full + 5));
    GsUnitKind *u = &a->units[ui];
    if (u->caps & CAP_MATRIX) {
      double any = 0;
      for (int t = 0; t < DT_COUNT; t++) any += u->mac_rate[t];
      if (any == 0)
        err(p, p->file, s->line, "%s: a matrix unit needs some rate_<dtype> > 0 (e.g. rate_fp16 = 1)",
            s->full);
    }
    if ((u->caps & CAP_MATRIX) && u->shape == MAT_SYSTOLIC && u->preload_overlap &&
        u->dataflow == DF_OUTPUT_STATIONARY) {
      loc_of(p, s, "preload_overlap", &f, &line);
      err(p, f, line, "%s.preload_overlap: an output-stationary array preloads nothing (use it "
                      "with dataflow = ws or is)", s->full);
    }
    if (u->caps & CAP_VECTOR) {
      long long any = 0;
      for (int t = 0; t < DT_COUNT; t++) any += u->lanes[t];
      if (any == 0)
        err(p, p->file, s->line, "%s: a vector unit needs some lanes_<dtype> > 0 (e.g. lanes_fp16 = 16)",
            s->full);
    }
  }
}

static GsArch *load(const char *file, const char *text, size_t len, const char *const *sets,
                    int nsets, GsDiag *d) {
  GsArena *ar = arena_new();
  Parser *p = arena_alloc(ar, sizeof *p);
  p->ar = ar;
  p->d = d;
  p->file = arena_strdup(ar, file);
  p->text = text;
  p->len = len;
  p->cur = -1;
  p->has_nul = memchr(text, 0, len) != NULL;
  int before = d->nerrors;

  /* 1. read */
  int r = ini_parse_stream(reader, p, handler, p);
  if (r != 0 && d->nerrors == before) /* inih found something the reader let through */
    err(p, p->file, r > 0 ? r : 0, "syntax error");
  if (p->syntax_errors || d->nerrors > before) goto fail;

  /* 2. override */
  for (int i = 0; i < nsets; i++) apply_set(p, sets[i]);
  if (d->nerrors > before) goto fail;

  /* 3. resolve */
  GsArch *a = arena_alloc(ar, sizeof *a);
  a->arena = ar;
  a->source_file = p->file;
  for (int k = SEC_CHIP; k <= SEC_CLUSTER; k++)
    if (find_section(p, arch_sec_names[k]) < 0)
      diag_error(d, p->file, p->line > 0 ? p->line : 1, 0, NULL, "missing section [%s]",
                 arch_sec_names[k]);
  /* sections in file order (so messages come in line order); unit kinds are numbered in
   * file order; the core units lists are resolved after every unit kind is known */
  int energy = find_section(p, arch_sec_names[SEC_ENERGY]);
  a->energy.present = energy >= 0;
  for (int i = 0; i < p->nsecs; i++) {
    Section *s = &p->secs[i];
    if (s->kind == SEC_ENERGY) continue; /* last: its keys depend on [cluster] */
    if (s->kind == SEC_UNIT) {
      GsUnitKind *u = &a->units[a->nunit_kinds++];
      u->name = s->full + 5;
      resolve_section(p, a, s, u);
    } else if (s->kind == SEC_CORE) {
      GsCoreKind *c = &a->core_kinds[a->ncore_kinds++];
      c->name = s->full + 5;
      resolve_section(p, a, s, c);
    } else {
      resolve_section(p, a, s, a);
    }
  }
  if (energy >= 0) resolve_section(p, a, &p->secs[energy], a);
  keep_notes(p, a);
  for (int i = 0, k = 0; i < p->nsecs; i++)
    if (p->secs[i].kind == SEC_CORE) resolve_units_list(p, a, &p->secs[i], &a->core_kinds[k++]);
  if (d->nerrors > before) goto fail;
  check_cross(p, a);
  check_energy(p, a);
  if (d->nerrors > before) goto fail;
  fill_derived(a);
  return a;
fail:
  arena_free(ar);
  return NULL;
}

GsArch *arch_load_string(const char *name, const char *text, const char *const *sets, int nsets,
                         GsDiag *d) {
  return load(name, text, strlen(text), sets, nsets, d);
}

GsArch *arch_load(const char *path, const char *const *sets, int nsets, GsDiag *d) {
  size_t len = 0;
  char *text = util_read_file(path, &len);
  if (!text) {
    diag_error(d, path, 0, 0, NULL, "cannot read architecture config: %s", strerror(errno));
    return NULL;
  }
  GsArch *a = load(path, text, len, sets, nsets, d);
  free(text);
  return a;
}

void arch_free(GsArch *a) {
  if (a) arena_free(a->arena);
}

/* ---------------------------------------------------------------- queries */

int arch_core_kind_of(const GsArch *a, int core) {
  gs_assert(core >= 0 && core < a->cores_per_cluster);
  for (int k = 0; k < a->ncore_kinds; k++) {
    if (core < a->core_kinds[k].count) return k;
    core -= a->core_kinds[k].count;
  }
  die("core numbering broken");
}

const GsCoreKind *arch_core(const GsArch *a, int core) {
  return &a->core_kinds[arch_core_kind_of(a, core)];
}

int arch_core_base(const GsArch *a, int kind) {
  int b = 0;
  for (int i = 0; i < kind; i++) b += a->core_kinds[i].count;
  return b;
}

int64_t arch_lb_bytes(const GsArch *a, int per_core) {
  int64_t core = 0, cluster = 0;
  for (int i = 0; i < a->ncore_kinds; i++) {
    const GsCoreKind *k = &a->core_kinds[i];
    if (k->lb_bytes <= 0) continue;
    if (core == 0 || k->lb_bytes < core) core = k->lb_bytes;
    cluster += k->lb_bytes * k->count;
  }
  return per_core ? core : cluster;
}

int64_t arch_core_tile_budget(const GsArch *a, int core_kind) {
  const GsCoreKind *ck = &a->core_kinds[core_kind];
  if (ck->lb_bytes > 0) return ck->lb_bytes;
  return a->gb_bytes / 4 / (ck->count > 0 ? ck->count : 1);
}

double arch_unit_base_macs(const GsUnitKind *u) {
  if (!(u->caps & CAP_MATRIX)) return 0;
  if (u->shape == MAT_CUBE) return (double)u->cube_m * u->cube_n * u->cube_k;
  return (double)u->sys_rows * u->sys_cols;
}

double arch_unit_macs_per_cycle(const GsUnitKind *u, GsDtype t) {
  gs_assert((unsigned)t < DT_COUNT);
  return arch_unit_base_macs(u) * u->mac_rate[t];
}

double arch_peak_macs_per_cycle(const GsArch *a, GsDtype t) {
  double per_cluster = 0;
  for (int k = 0; k < a->ncore_kinds; k++) {
    const GsCoreKind *c = &a->core_kinds[k];
    double core = 0;
    for (int i = 0; i < c->nunits; i++) core += arch_unit_macs_per_cycle(&a->units[c->unit[i]], t);
    per_cluster += core * c->count;
  }
  return per_cluster * a->nclusters;
}

double arch_peak_flops(const GsArch *a, GsDtype t) {
  return 2.0 * arch_peak_macs_per_cycle(a, t) * a->clock_mhz * 1e6;
}

int64_t arch_unit_instances(const GsArch *a, int unit) {
  int64_t n = 0;
  for (int k = 0; k < a->ncore_kinds; k++)
    for (int i = 0; i < a->core_kinds[k].nunits; i++)
      if (a->core_kinds[k].unit[i] == unit) n += a->core_kinds[k].count;
  return n * a->nclusters;
}
