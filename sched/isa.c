/* isa.c — static facts from isa.def (the Program itself: prog.c).
 * Everything here is derived from the X-macro table isa.def; nothing is listed twice. The
 * operand lines (REG, TILE, NUM, ...) become one constant table of GsOperand (name, GsInst
 * field, value kind), indexed per opcode on first use; the assembler, the disassembler, the
 * static checks and the docs all read that table. Invariants, checked when the index is built
 * (a bad isa.def dies): an opcode's operands are contiguous, every field index is in range,
 * and no two operands of an opcode share a name or a field. */
#include "prog.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *mnemonic;
  GsEngine engine;
  const char *description;
} isa[I_COUNT] = {
#define ISA(e, m, eng, d) {#m, eng, d},
#include "isa.def"
};

static const struct {
  const char *name;
  int inputs;
  int passes[VC_COUNT];
  const char *description;
} vops[V_COUNT] = {
#define VOP(e, n, in, s, m, d, t, r, desc) {n, in, {s, m, d, t, r}, desc},
#include "isa.def"
};

const char *isa_mnemonic(GsOpcode op) { return op < I_COUNT ? isa[op].mnemonic : "?"; }
GsEngine isa_engine(GsOpcode op) { return op < I_COUNT ? isa[op].engine : E_ANY; }
const char *isa_vop_name(GsVop v) { return v < V_COUNT ? vops[v].name : "?"; }
int isa_vop_inputs(GsVop v) { return v < V_COUNT ? vops[v].inputs : 0; }
int isa_vop_needs_param(GsVop v) {
  switch (v) {
  case V_LNORM: case V_SOFTMAX: case V_RSUM: case V_RMAX: case V_DOT: case V_POOLMAX: case V_POOLAVG:
    return 1;
  default: return 0;
  }
}
int isa_vop_windowed(GsVop v, int64_t param) {
  return v == V_POOLMAX || v == V_POOLAVG || v == V_DOT || (param > 0 && !isa_vop_needs_param(v));
}
int64_t isa_vop_out_elems(GsVop v, int64_t elems, int64_t param) {
  /* a window param on an op without groups (a depthwise conv's mul): one result per window */
  int shrinks = v == V_RSUM || v == V_RMAX || v == V_DOT || v == V_POOLMAX || v == V_POOLAVG ||
                (param > 0 && !isa_vop_needs_param(v));
  int64_t group = param > 0 ? param : elems > 0 ? elems : 1; /* param 0: one group */
  return shrinks ? (elems + group - 1) / group : elems;
}
int64_t isa_elem_bytes(const GsInst *in) {
  int64_t e = in->op == I_GEMM ? inst_gemm_elem_bytes(in) : in->op == I_VEC ? inst_vec_elem_bytes(in) : 0;
  return e ? e : arch_dtype_bytes((GsDtype)in->dtype);
}
int64_t isa_gemm_reps(const GsInst *in) {
  return in->op == I_GEMM && inst_gemm_reps(in) > 0 ? inst_gemm_reps(in) : 1;
}
int isa_vop_passes(GsVop v, GsVClass c) {
  return v < V_COUNT && (unsigned)c < VC_COUNT ? vops[v].passes[c] : 0;
}

const char *isa_description(GsOpcode op) { return op < I_COUNT ? isa[op].description : "?"; }
const char *isa_vop_description(GsVop v) { return v < V_COUNT ? vops[v].description : "?"; }

const char *isa_engine_name(GsEngine e) {
  static const char *const names[] = {"any", "dma", "matrix", "vector", "scalar"};
  return (unsigned)e < sizeof names / sizeof *names ? names[e] : "?";
}
const char *isa_level_name(GsLevel l) {
  static const char *const names[GS_LEVEL_COUNT] = {"ddr", "gb", "lb"};
  return (unsigned)l < GS_LEVEL_COUNT ? names[l] : "?";
}
const char *isa_scope_name(GsScope s) {
  static const char *const names[GS_SCOPE_COUNT] = {"cluster", "chip"};
  return (unsigned)s < GS_SCOPE_COUNT ? names[s] : "?";
}

/* ---- operand table ---- */
static const struct {
  int op; /* GsOpcode */
  GsOperand o;
} operands[] = {
#define REG(m, name, i) {ISA_OP_##m, {#name, OPF_REGION, i, OPK_REGION}},
#define TILE(m, name, i) {ISA_OP_##m, {#name, OPF_TILE, i, OPK_TILE}},
#define NUM(m, name, i) {ISA_OP_##m, {#name, OPF_NUM, i, OPK_INT}},
#define SUB(m, name, kind) {ISA_OP_##m, {#name, OPF_SUB, 0, kind}},
#define DTYPE(m, name) {ISA_OP_##m, {#name, OPF_DTYPE, 0, OPK_DTYPE}},
#define FLAGS(m, name) {ISA_OP_##m, {#name, OPF_FLAGS, 0, OPK_INT}},
#include "isa.def"
};
enum { NOPERANDS = sizeof operands / sizeof *operands };

/* Where each opcode's operands start in `operands`, and how many there are. */
static struct {
  int built;
  int first[I_COUNT];
  int count[I_COUNT];
} optab;

static void check_operand(int k) {
  int op = operands[k].op, first = optab.first[op];
  const GsOperand *o = &operands[k].o;
  const char *m = isa[op].mnemonic;
  if (optab.count[op] && first + optab.count[op] != k)
    die("isa.def: %s: operand '%s' is not with the opcode's others", m, o->name);
  int limit = o->field == OPF_NUM ? GS_INST_NUM : o->field <= OPF_TILE ? 3 : 1;
  if (o->index < 0 || o->index >= limit)
    die("isa.def: %s: '%s' has no field %d", m, o->name, o->index);
  for (int j = first; j < first + optab.count[op]; j++) {
    const GsOperand *p = &operands[j].o;
    if (strcmp(p->name, o->name) == 0 || (p->field == o->field && p->index == o->index))
      die("isa.def: %s: operand '%s' repeats a name or field", m, o->name);
  }
}

static void build_optab(void) {
  for (int k = 0; k < NOPERANDS; k++) {
    int op = operands[k].op;
    check_operand(k);
    if (optab.count[op]++ == 0) optab.first[op] = k;
  }
  optab.built = 1;
}

/* The operands every opcode takes (prog.h GsInst: wait, wait2, signal, signal_flag, signal2,
 * signal2_flag), in the order they act and assembly prints them. */
static const GsOperand sync_operands[GS_SYNC_OPERANDS] = {
    {"wait", OPF_WAIT, 0, OPK_SYNC_FLAG},
    {"wait2", OPF_WAIT2, 0, OPK_SYNC_FLAG},
    {"signal", OPF_SIGNAL, 0, OPK_SYNC_QUEUE},
    {"signal_flag", OPF_SIGNAL_FLAG, 0, OPK_INT},
    {"signal2", OPF_SIGNAL2, 0, OPK_SYNC_QUEUE},
    {"signal2_flag", OPF_SIGNAL2_FLAG, 0, OPK_INT},
};

const GsOperand *isa_sync_operand(int i) {
  gs_assert(i >= 0 && i < GS_SYNC_OPERANDS);
  return &sync_operands[i];
}

int isa_operand_count(GsOpcode op) {
  if (!optab.built) build_optab();
  return op < I_COUNT ? optab.count[op] : 0;
}

const GsOperand *isa_operand(GsOpcode op, int i) {
  if (!optab.built) build_optab();
  gs_assert(op < I_COUNT && i >= 0 && i < optab.count[op]);
  return &operands[optab.first[op] + i].o;
}

/* The caller has range-checked v for the field's width (the assembler does). */
void isa_inst_set(GsInst *in, const GsOperand *o, int64_t v) {
  isa_inst_set_field(in, o->field, o->index, v);
}

void isa_inst_set_field(GsInst *in, GsOperandField f, int index, int64_t v) {
  switch (f) {
  case OPF_REGION: in->r[index] = (uint32_t)v; return;
  case OPF_TILE: in->t[index] = (uint32_t)v; return;
  case OPF_NUM: in->n[index] = v; return;
  case OPF_SUB: in->sub = (uint8_t)v; return;
  case OPF_DTYPE: in->dtype = (uint8_t)v; return;
  case OPF_FLAGS: in->flags = (uint8_t)v; return;
  case OPF_WAIT: in->wait = (uint8_t)v; return;
  case OPF_SIGNAL: in->signal = (uint8_t)v; return;
  case OPF_SIGNAL_FLAG: in->signal_flag = (uint8_t)v; return;
  case OPF_WAIT2: in->wait2 = (uint8_t)v; return;
  case OPF_SIGNAL2: in->signal2 = (uint8_t)v; return;
  case OPF_SIGNAL2_FLAG: in->signal2_flag = (uint8_t)v; return;
  }
  die("bad operand field %d", (int)f);
}

/* ---- docs/isa.md ---- */

static void doc_operands(FILE *out, GsOpcode op) {
  static const char *const kind[] = {"int", "region", "tile", "level", "vop", "queue", "scope",
                                     "dtype"};
  static const char *const field[] = {"r", "t", "n", "sub", "dtype", "flags"};
  for (int i = 0; i < isa_operand_count(op); i++) {
    const GsOperand *o = isa_operand(op, i);
    fprintf(out, "%s`%s` (%s, ", i ? ", " : "", o->name, kind[o->kind]);
    if (o->field <= OPF_NUM) fprintf(out, "%s%d)", field[o->field], o->index);
    else fprintf(out, "%s)", field[o->field]);
  }
}

/* The static checks' section of docs/isa.md (prog_check, prog_check.c). */
static void write_checks_doc(FILE *out) {
  fputs("\n## Static checks (`prog_check`)\n\n"
        "Before a program runs, and when `--emit` writes one with `--arch` given, it is checked\n"
        "against the arch; each error names the queue, the instruction index and its text, and\n"
        "gtsim exits 1 (bad input):\n\n"
        "- every queue exists: cluster < clusters, core < cores per cluster, queue index < 2 +\n"
        "  units of the core's kind (dma_in/dma_out only where the core kind has DMA engines),\n"
        "  or cluster DMA engine < dma_engines; no queue twice;\n"
        "- every opcode's engine matches its queue (dma on dma_in/dma_out/cluster DMA; matrix,\n"
        "  vector, scalar on a unit with that capability);\n"
        "- level, scope, vop and dtype are in range, and the unit supports the dtype (matrix:\n"
        "  non-zero rate; vector: non-zero lanes);\n"
        "- a `signal` (the opcode or the operands `signal`, `signal2`) targets an existing queue\n"
        "  of the same core; no flags on cluster DMA queues; `signal_flag` only with `signal`,\n"
        "  `signal2_flag` only with `signal2`, `signal2` only with `signal`, `wait2` only with\n"
        "  `wait`, flags of `wait=`, `wait2=`, `signal_flag=` and `signal2_flag=` at most 254;\n"
        "- region and tile ids are below the program's counts; data instructions name a region\n"
        "  for every operand they use (the `b` of a one-input vector op and a plain copy's `idx`\n"
        "  may be 0) and a tile for every region;\n"
        "- every operand read is named with its extent: a `vec`'s `b` with `b_elems` (both or\n"
        "  neither), its `a` with `a_elems` where `elems` counts elements read again (`poolmax`,\n"
        "  `poolavg`, `dot`, a window `param` given to an op without groups); a gather's `idx`\n"
        "  with `idx_bytes` (both or neither); `elem_bytes` is 0, 1, 2, 4 or 8;\n"
        "- `alloc` names an existing cluster/core, and a GB or LB that exists (size > 0);\n"
        "- integer operands are >= 0 and at most 2^40 (`GS_OPERAND_MAX`), and so are a `gemm`'s\n"
        "  m·n·k and the bytes a `mov`'s pattern reaches on either side (offset + (planes-1) ·\n"
        "  plane stride + (rows-1) · row stride + row); with the config's ranges (rates of at\n"
        "  least 1/1024, vector costs of at most 2^16, bandwidths of at least 1/1024 B/cycle)\n"
        "  every timing formula is then exact in 64 bits;\n"
        "- `bytes`, `m`, `n`, `k`, `elems` and `count` are > 0; a `mov`'s bytes are a multiple\n"
        "  of rows × planes, and its destination rows (planes) do not overlap: `dst_stride` >=\n"
        "  the row, `dst_pstride` >= the plane (source rows may: a sliding window reads rows\n"
        "  again);\n"
        "- `lnorm`, `softmax`, `rsum`, `rmax`, `dot`, `poolmax` and `poolavg` have\n"
        "  1 <= param <= elems;\n"
        "- fields the opcode does not name are 0.\n\n"
        "What depends on execution (stale or never-written tiles, overlapping live allocations,\n"
        "capacity, frees of unallocated regions, deadlocks) is checked by the simulator while\n"
        "running, with exit status 2 ([timing.md](timing.md)).\n\n"
        "A schedule the command line makes is checked while it is made, on a thread of its\n"
        "own: the instructions of two queues in three as that thread encodes them, a batch\n"
        "of 1024 at a time, against the region and tile counts when the batch was handed\n"
        "to it; the other queues' after each kernel, against the counts of that moment. Each\n"
        "queue's last instruction, which the scheduler may still change, and what is left\n"
        "when scheduling ends are checked then. When anything fails, the whole program is\n"
        "checked again in one pass, so the verdict and the messages are always that pass's.\n"
        "Programs of a million instructions or more that are checked whole (a `.gtp` or\n"
        "`.gtasm` file) are checked in two halves at once.\n",
        out);
  fputs("\n"
        "A program in memory may hold copied runs: instructions of a queue that are another\n"
        "cluster's queue of the same core and index, with their region and tile ids moved\n"
        "by spans (ids in `[lo, hi)` plus a difference), the offsets into a region moved by\n"
        "a shift (a `mov`'s `dst_off` and `src_off`, a `vec`'s `dst_off`), and a copied\n"
        "`alloc` naming the queue's cluster. Files never hold them: `.gtp` and `.gtasm`\n"
        "writers write the instructions they stand for. A run is checked by its source (the\n"
        "same core and queue in another cluster, holding no runs itself, with the\n"
        "instructions copied), and by its map: spans sorted and apart, never naming id 0,\n"
        "their images below the program's counts, shifts only of regions and in [0, 2^40];\n"
        "a run whose map shifts offsets is also checked instruction by instruction, as its\n"
        "`mov` patterns move. The source's own instructions are checked where they are.\n",
        out);
}

/* The Queues section of docs/isa.md: the queues of a core and a cluster, and how they
 * synchronise. */
static void doc_queues(FILE *out) {
  fputs("## Queues\n\n"
        "Every core has its own queues, which run concurrently, each in order:\n\n"
        "| index | name | engine |\n|---|---|---|\n",
        out);
  fprintf(out, "| %d | `dma_in` | DMA into the core (DDR/GB/other LB -> this LB) |\n", Q_DMA_IN);
  fprintf(out, "| %d | `dma_out` | DMA out of the core |\n", Q_DMA_OUT);
  fprintf(out, "| %d + i | the i-th unit of the core kind (`units =` in the config) | that unit |\n\n",
          Q_UNIT0);
  fputs("A core kind with `dma_engines = 0` (Goya's GEMM core) has no `dma_in`/`dma_out`.\n"
        "Every cluster also has one queue per cluster DMA engine (`[cluster] dma_engines`),\n"
        "core -1 in the program, moving data between DDR and the GB. Queue names in assembly:\n"
        "`c0.k3.dma_in`, `c0.k3.dma_out`, `c0.k3.mme` (a unit name), `c0.k3.q2` (by index) and\n"
        "`c0.dma1`. Cores are numbered per cluster, core kind by core kind in config order.\n\n"
        "Synchronisation: `signal`/`wait` are flags between the queues of one core (a cluster\n"
        "DMA queue has no flags; it synchronises with semaphores and barriers); `sempost`/\n"
        "`semwait` and `barrier` work across cores of a cluster (`scope=cluster`, ids per\n"
        "cluster) or across clusters (`scope=chip`).\n\n"
        "Any instruction may also carry a wait and a signal of its own, so the common pattern\n"
        "wait, work, signal is one instruction, not three (the schedulers emit them this way,\n"
        "and their programs are about half as long):\n\n"
        "- `wait=F`: before the instruction starts, wait until this queue's flag F is non-zero\n"
        "  and decrement it, exactly as a `wait flag=F` just before it;\n"
        "- `wait2=F2` (only with `wait=F`): then wait for flag F2 the same way, exactly as a\n"
        "  second `wait flag=F2` between that wait and the instruction. A unit that consumes one\n"
        "  buffer and fills another waits for both (the next input loaded, the output's buffer\n"
        "  free); with one wait of its own, the second was an instruction: a fifth of\n"
        "  MobileNet-v2's vector-queue instructions on `stcp920`;\n"
        "- `signal=Q signal_flag=F`: once the instruction has completed, increment flag F of\n"
        "  queue Q of the same core, exactly as a `signal queue=Q flag=F` just after it;\n"
        "- `signal2=Q2 signal2_flag=F2` (only with `signal=Q`): then increment flag F2 of queue\n"
        "  Q2 the same way, exactly as a second `signal queue=Q2 flag=F2` after that one. The\n"
        "  same unit tells two queues when its instruction ends (the input's buffer free, the\n"
        "  output ready); with one signal of its own, the second was an instruction: a fifth of\n"
        "  MobileNet-v2 tvm's instructions on `stcp920`.\n\n"
        "They cost nothing and time nothing of their own. F is 0..254 here (the `signal` and\n"
        "`wait` opcodes take any flag); `signal_flag` without `signal` is an error, and a\n"
        "cluster DMA queue's instructions carry none. Stored in GsInst's `wait`, `wait2`,\n"
        "`signal`, `signal2` (each 1 + the flag or queue, 0: none), `signal_flag` and\n"
        "`signal2_flag` fields.\n\n",
        out);
}

void isa_write_doc(FILE *out) {
  fputs("# The gtsim instruction set, `.gtasm` and `.gtp`\n\n"
        "<!-- Generated from sched/isa.def by `gtsim --isa-doc`; do not edit. Refresh with\n"
        "     `build/gtsim --isa-doc > docs/isa.md` (tests/unit/test_isa.c fails when this\n"
        "     file differs from the generated text). -->\n\n"
        "A Program is a set of per-queue instruction streams (sched/prog.h). Instructions are\n"
        "coarse: one tile, not one MAC. Their timing is in [timing.md](timing.md); what the\n"
        "simulator checks while running is there too. This file is the reference for the\n"
        "opcodes, their operands and the two file formats.\n\n",
        out);
  doc_queues(out);
  fputs("## Engines\n\n"
        "| engine | queues that may hold the opcode |\n|---|---|\n"
        "| any | every queue |\n"
        "| dma | `dma_in`, `dma_out`, cluster DMA queues |\n"
        "| matrix | a unit queue whose unit has matrix capability |\n"
        "| vector | a unit queue whose unit has vector capability |\n"
        "| scalar | a unit queue whose unit has scalar capability |\n\n"
        "## Opcodes\n\n"
        "Operands are written `name=value` in any order; the GsInst field each one is stored in\n"
        "is given in parentheses. A field an opcode does not name must be 0. Every opcode also\n"
        "takes `wait`, `wait2`, `signal`, `signal_flag`, `signal2` and `signal2_flag` (Queues,\n"
        "above).\n\n",
        out);
  for (int op = 0; op < I_COUNT; op++) {
    fprintf(out, "### `%s` (opcode %d, engine %s)\n\n%s\n\nOperands: ", isa_mnemonic((GsOpcode)op),
            op, isa_engine_name(isa_engine((GsOpcode)op)), isa_description((GsOpcode)op));
    doc_operands(out, (GsOpcode)op);
    fputs(".\n\n", out);
  }
  fputs("Enum operands: `level` is ", out);
  for (int l = 0; l < GS_LEVEL_COUNT; l++)
    fprintf(out, "%s`%s` (%d)", l ? ", " : "", isa_level_name((GsLevel)l), l);
  fputs("; `scope` is ", out);
  for (int l = 0; l < GS_SCOPE_COUNT; l++)
    fprintf(out, "%s`%s` (%d)", l ? ", " : "", isa_scope_name((GsScope)l), l);
  fputs("; `dtype` is ", out);
  for (int t = 0; t < DT_COUNT; t++)
    fprintf(out, "%s`%s` (%d, %d bytes)", t ? ", " : "", arch_dtype_name((GsDtype)t), t,
            arch_dtype_bytes((GsDtype)t));
  fputs("; `op` is a VOP below; `queue` is a queue index of the same core.\n\n", out);

  fputs("## Vector ops (VOP)\n\n"
        "Cost of `vec` (see [timing.md](timing.md)): vector_latency + ceil(elems / lanes[dtype])\n"
        "× Σ passes[class] × op_cost[class], with op_cost from the unit's config. The columns\n"
        "give the passes per cost class.\n\n"
        "| # | op | inputs |",
        out);
#define X(e, k, d) fprintf(out, " %s |", k);
  GS_VCLASSES(X)
#undef X
  fputs(" description |\n|---|---|---|", out);
  for (int c = 0; c < VC_COUNT; c++) fputs("---|", out);
  fputs("---|\n", out);
  for (int v = 0; v < V_COUNT; v++) {
    fprintf(out, "| %d | `%s` | %d |", v, isa_vop_name((GsVop)v), isa_vop_inputs((GsVop)v));
    for (int c = 0; c < VC_COUNT; c++) fprintf(out, " %d |", isa_vop_passes((GsVop)v, (GsVClass)c));
    fprintf(out, " %s |\n", isa_vop_description((GsVop)v));
  }
  fputs("\nCost classes:\n\n", out);
#define X(e, k, d) fprintf(out, "- `%s`: %s\n", k, d);
  GS_VCLASSES(X)
#undef X

  fputs("\n## `.gtasm`: text assembly\n\n", out);
  gtasm_write_grammar_doc(out);
  fputs("\nExample for configs/tiny.cfg (a ReLU over 1024 fp16 values loaded from DDR; a longer\n"
        "one is tests/cases/asm/basic.gtasm):\n\n```gtasm\n"
        "gtasm 1\n"
        ".region x_ddr\n.region x_lb\n.region y_lb\n"
        ".tile t_x\n.tile t_y\n"
        ".queue c0.k0.dma_in\n"
        "  alloc region=x_ddr level=ddr offset=0 bytes=2048 init=t_x\n"
        "  alloc region=x_lb level=lb cluster=0 core=0 offset=0 bytes=2048\n"
        "  mov dst=x_lb dst_tile=t_x src=x_ddr src_tile=t_x bytes=2048\n"
        "  signal queue=vec flag=0       # tell the vector queue the tile is there\n"
        ".queue c0.k0.vec\n"
        "  wait flag=0\n"
        "  alloc region=y_lb level=lb cluster=0 core=0 offset=2048 bytes=2048\n"
        "  vec op=relu dst=y_lb dst_tile=t_y a=x_lb a_tile=t_x elems=1024 dtype=fp16\n"
        "```\n\n",
        out);

  fputs("## `.gtp`: binary program file\n\n", out);
  gtp_write_layout_doc(out);

  write_checks_doc(out);
}
