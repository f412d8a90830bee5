/* prog_check.c — static checks of a Program against an arch, before any simulation.
 *
 * One pass over the queues and their instructions, in program order, so the messages come
 * out in a fixed order. What is checked here is what the program text alone can get wrong:
 * queues that the arch does not have, opcodes on the wrong engine, enum operands (level, vop,
 * scope, dtype, signal target) out of range or unsupported by the unit, region/tile ids out
 * of range, fields an opcode does not use that are not zero, required counts that are zero.
 * Everything that depends on execution order (stale tiles, overlapping allocations, capacity,
 * deadlock) is the simulator's. Invariant: prog_check never modifies the program and
 * reports every error it finds up to the GsDiag's max_errors.
 *
 * A long program is checked in two halves at once, split by instruction count: the second on a
 * thread of its own, quietly (an error only marks it). When the second half failed it is
 * checked again after the first, with messages, so they come out as one pass prints them.
 * A program still being made is checked the same way, quietly on a thread of its own as it
 * grows (prog_check_begin, at the end of this file); anything found there sends the finished
 * program through prog_check, so the verdict and messages are again one pass's. A program
 * attached to that thread (prog_check_attach) is encoded there too.
 */
#include "prog.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const GsCoreKind *prog_core_kind(const GsArch *a, int core) {
  if (!a || core < 0) return NULL;
  for (int k = 0; k < a->ncore_kinds; k++) {
    if (core < a->core_kinds[k].count) return &a->core_kinds[k];
    core -= a->core_kinds[k].count;
  }
  return NULL;
}

static int cores_in_cluster(const GsArch *a) {
  int n = 0;
  for (int k = 0; k < a->ncore_kinds; k++) n += a->core_kinds[k].count;
  return n;
}

static int fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (why && n) vsnprintf(why, n, fmt, ap);
  va_end(ap);
  return 0;
}

int prog_queue_exists(const GsArch *a, int cluster, int core, int index, char *why, size_t n) {
  if (cluster < 0) return fail(why, n, "cluster %d is negative", cluster);
  if (core < -1) return fail(why, n, "core %d is negative", core);
  if (index < 0) return fail(why, n, "queue index %d is negative", index);
  if (!a) {
    if (core >= 0 && index >= Q_UNIT0 + GS_MAX_UNITS_PER_CORE)
      return fail(why, n, "queue index %d: a core has at most %d queues", index,
                  Q_UNIT0 + GS_MAX_UNITS_PER_CORE);
    return 1;
  }
  if (cluster >= a->nclusters)
    return fail(why, n, "cluster %d does not exist (arch '%s' has %d)", cluster,
                a->name ? a->name : "?", a->nclusters);
  if (core == -1) {
    if (index >= a->dma_engines)
      return fail(why, n, "cluster DMA engine %d does not exist (arch '%s' has %d per cluster)",
                  index, a->name ? a->name : "?", a->dma_engines);
    return 1;
  }
  const GsCoreKind *k = prog_core_kind(a, core);
  if (!k)
    return fail(why, n, "core %d does not exist (arch '%s' has %d per cluster)", core,
                a->name ? a->name : "?", cores_in_cluster(a));
  if (index < Q_UNIT0 && k->dma_engines == 0)
    return fail(why, n, "core kind '%s' has no DMA engine (dma_engines = 0): no %s queue",
                k->name ? k->name : "?", index == Q_DMA_IN ? "dma_in" : "dma_out");
  if (index >= Q_UNIT0 + k->nunits)
    return fail(why, n, "queue index %d does not exist (core kind '%s' has %d queues: dma_in, "
                "dma_out and %d units)", index, k->name ? k->name : "?", Q_UNIT0 + k->nunits,
                k->nunits);
  return 1;
}

int prog_queue_accepts(const GsArch *a, int core, int index, GsOpcode op, char *why, size_t n) {
  GsEngine e = isa_engine(op);
  int is_dma = core < 0 || index < Q_UNIT0;
  if (e == E_ANY) return 1;
  if (e == E_DMA) {
    if (!is_dma)
      return fail(why, n, "%s runs on a DMA queue (dma_in, dma_out or a cluster DMA engine), "
                  "not on a unit queue", isa_mnemonic(op));
    return 1;
  }
  if (is_dma)
    return fail(why, n, "%s runs on a %s unit, not on a DMA queue", isa_mnemonic(op),
                isa_engine_name(e));
  const GsCoreKind *k = prog_core_kind(a, core);
  if (!a || !k || index - Q_UNIT0 >= k->nunits) return 1; /* shape known only */
  const GsUnitKind *u = &a->units[k->unit[index - Q_UNIT0]];
  unsigned need = e == E_MATRIX ? CAP_MATRIX : e == E_VECTOR ? CAP_VECTOR : CAP_SCALAR;
  if (!(u->caps & need))
    return fail(why, n, "%s runs on a %s unit; unit '%s' is not one", isa_mnemonic(op),
                isa_engine_name(e), u->name ? u->name : "?");
  return 1;
}

/* Operands that must be positive where an opcode has them: a transfer of 0 bytes or a gemm
 * with m = 0 is a scheduler bug, not a no-op. */
static int must_be_positive(const char *name) {
  static const char *const names[] = {"bytes", "m", "n", "k", "elems", "count"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(name, names[i]) == 0) return 1;
  return 0;
}

typedef struct {
  const GsProgram *p;
  const GsArch *a;
  GsDiag *d;
  const char *file;
  uint32_t nregions, ntiles; /* ids below these exist: the program's (or, while it is emitted,
                              * the counts published with the instructions checked) */
  uint32_t id_lim[8];        /* the same as inst_plain's lanes (ctx_set_ids) */
  const GsQueue *q;
  size_t i;
  const GsInst *in;     /* instruction i of q */
  const GsUnitKind *unit; /* q's unit (queue_unit), NULL for a DMA queue */
  uint64_t accepts;     /* bit op: q runs opcode op (prog_queue_accepts) */
  uint64_t signals[4];  /* bit k: queue k of q's core exists, found as a signal's target */
  int quiet;            /* the second half's thread: an error only sets failed */
  int failed;
  int copied;           /* i is a copied instruction's place in q, not an own one's index */
} Ctx;

/* The place in q of its own instruction i (after the copied runs before it). */
static size_t own_place(const GsQueue *q, size_t i) {
  int64_t at = (int64_t)i;
  for (int k = 0; q->copies && k < q->copies->n && q->copies->run[k].at <= at; k++)
    at += q->copies->run[k].n;
  return (size_t)at;
}

static void ctx_set_ids(Ctx *c, uint32_t nregions, uint32_t ntiles) {
  c->nregions = nregions, c->ntiles = ntiles;
  uint32_t lim[8] = {0, nregions, nregions, nregions, ntiles, ntiles, ntiles, 0};
  memcpy(c->id_lim, lim, sizeof lim);
}

static void inst_error(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void inst_error(Ctx *c, const char *fmt, ...) {
  if (c->quiet) {
    c->failed = 1;
    return;
  }
  char qn[64], text[512], msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const GsInst *in = c->in;
  if (in->op < I_COUNT) gtasm_inst_format(c->a, c->p, in, text, sizeof text);
  else snprintf(text, sizeof text, "opcode %u", in->op);
  size_t at = c->copied || !c->q->ncopied ? c->i : own_place(c->q, c->i);
  diag_error(c->d, c->file, 0, 0, NULL, "queue %s, instruction %zu (%s): %s",
             gtasm_queue_name(c->a, c->q, qn, sizeof qn), at, text, msg);
}

/* A GsInst as words, read as four vectors of four (InstVecs, GCC's vector extension): words
 * 0-3, 4-7, 8-11 and 11-14, of which the last three lanes hold what the third did not. The
 * first vector as lanes of 4 bytes (IdVec): op, sub, dtype and flags; r[0..2]; t[0..2]; the
 * first four bytes of the synchronisation. Word 4: its last two bytes, and the reserved ones. */
enum { INST_WORDS = sizeof(GsInst) / 8, INST_VECS = 4 };
_Static_assert(sizeof(GsInst) == 120, "a GsInst is 15 words, without padding");
_Static_assert(offsetof(GsInst, n) == 40 && GS_INST_NUM == 10, "n[] is words 5-14");
_Static_assert(offsetof(GsInst, signal2) == 32 && offsetof(GsInst, reserved) == 34,
               "signal2, signal2_flag and the reserved bytes are word 4");
_Static_assert(offsetof(GsInst, r) == 4 && offsetof(GsInst, t) == 16 &&
                   offsetof(GsInst, wait) == 28,
               "r[] in lanes 1-3, t[] in 4-6");
typedef uint64_t NumVec __attribute__((vector_size(32)));
typedef uint32_t IdVec __attribute__((vector_size(32)));
static int inst_vec_word(int j, int lane) { return j < 3 ? 4 * j + lane : 11 + lane; }
static int inst_vec_new(int j, int lane) { return j < 3 || lane >= 1; }

/* Whether region operand r[index] of op may be 0 in some instruction (optional_region says in
 * which). */
static int region_may_be_none(GsOpcode op, int index) {
  return index == 2 && (op == I_VEC || op == I_MOV);
}

/* What check_inst needs of an opcode's operands that does not depend on the instruction: which
 * fields it names, and which of its operands must be positive. Built once from the ISA table
 * (a run checks millions of instructions; comparing operand names each time cost ~5% of it). */
typedef struct {
  unsigned used_r, used_t, used_n; /* bit k: field r[k] / t[k] / n[k] named */
  int used_sub, used_dt, used_fl;
  unsigned positive;               /* bit k: operand k must be positive */
  int nops;
  const GsOperand *ops[32];        /* its operands (isa_operand) */
  /* inst_plain's share: integer operands in n[] (bit: n index) and those of them that must
   * be positive; region and tile operands (bit: r / t index) */
  unsigned int_n, pos_n, reg_r, tile_t;
  unsigned others;                 /* bit k: operand k is none of these */
  /* The same masks over the instruction's bytes, as the four vectors inst_plain reads
   * (InstVecs): the fields the opcode does not name (sub, dtype, flags, r[], t[], n[]) all
   * ones; the integer operands in n[]; those of them that must be positive. */
  uint64_t unused[INST_VECS * 4], ints[INST_VECS * 4], positive_n[INST_VECS * 4];
  /* IdVec lanes, all ones or zero: the region and tile operands (reg_r, tile_t); the regions of
   * those that may never be 0 (not a mov's index list, nor a vec's b, which is optional for
   * one-input ops: inst_plain); the tiles that must not be 0 while their region is not
   * (every opcode's but alloc's). */
  IdVec id_used, id_nonzero, tile_nonzero;
} OpShape;

static OpShape op_shapes[I_COUNT];
static int op_shapes_built;

static void op_shapes_build(void) {
  for (int i = 0; i < I_COUNT; i++) {
    OpShape *s = &op_shapes[i];
    for (int k = 0; k < isa_operand_count((GsOpcode)i); k++) {
      const GsOperand *o = isa_operand((GsOpcode)i, k);
      switch (o->field) {
      case OPF_REGION: s->used_r |= 1u << o->index; break;
      case OPF_TILE: s->used_t |= 1u << o->index; break;
      case OPF_NUM: s->used_n |= 1u << o->index; break;
      case OPF_SUB: s->used_sub = 1; break;
      case OPF_DTYPE: s->used_dt = 1; break;
      case OPF_FLAGS: s->used_fl = 1; break;
      case OPF_WAIT: case OPF_SIGNAL: case OPF_SIGNAL_FLAG: case OPF_WAIT2: case OPF_SIGNAL2:
      case OPF_SIGNAL2_FLAG: break; /* check_sync */
      }
      if (must_be_positive(o->name)) s->positive |= 1u << k;
      gs_assert(k < 32);
      s->ops[s->nops++] = o;
      if (o->kind == OPK_INT && o->field == OPF_NUM) {
        s->int_n |= 1u << o->index;
        if (s->positive >> k & 1) s->pos_n |= 1u << o->index;
      } else if (o->kind == OPK_REGION && o->field == OPF_REGION) {
        s->reg_r |= 1u << o->index;
      } else if (o->kind == OPK_TILE && o->field == OPF_TILE) {
        s->tile_t |= 1u << o->index;
      } else {
        s->others |= 1u << k;
      }
    }
    GsInst m = {.sub = s->used_sub ? 0 : UINT8_MAX, .dtype = s->used_dt ? 0 : UINT8_MAX,
                .flags = s->used_fl ? 0 : UINT8_MAX}, ints = {0}, pos = {0};
    memset(m.reserved, UINT8_MAX, sizeof m.reserved); /* never used */
    for (int k = 0; k < GS_INST_NUM; k++) {
      m.n[k] = s->used_n >> k & 1 ? 0 : -1;
      ints.n[k] = s->int_n >> k & 1 ? -1 : 0;
      pos.n[k] = s->pos_n >> k & 1 ? -1 : 0;
    }
    for (int k = 0; k < 3; k++) {
      m.r[k] = s->used_r >> k & 1 ? 0 : UINT32_MAX;
      m.t[k] = s->used_t >> k & 1 ? 0 : UINT32_MAX;
    }
    uint64_t mw[INST_WORDS], iw[INST_WORDS], pw[INST_WORDS];
    memcpy(mw, &m, sizeof mw), memcpy(iw, &ints, sizeof iw), memcpy(pw, &pos, sizeof pw);
    for (int j = 0; j < INST_VECS; j++)
      for (int l = 0; l < 4; l++) {
        int w = inst_vec_word(j, l), fresh = inst_vec_new(j, l);
        s->unused[4 * j + l] = fresh ? mw[w] : 0;
        s->ints[4 * j + l] = fresh ? iw[w] : 0;
        s->positive_n[4 * j + l] = fresh ? pw[w] : 0;
      }
    for (int k = 0; k < 3; k++) {
      int reg = s->reg_r >> k & 1, tile = s->tile_t >> k & 1;
      int optional = region_may_be_none((GsOpcode)i, k);
      s->id_used[1 + k] = reg ? UINT32_MAX : 0;
      s->id_used[4 + k] = tile ? UINT32_MAX : 0;
      s->id_nonzero[1 + k] = reg && !optional ? UINT32_MAX : 0;
      s->tile_nonzero[4 + k] = tile && i != I_ALLOC ? UINT32_MAX : 0;
    }
  }
  op_shapes_built = 1;
}

/* (inline: a call per instruction was 3% of the checking thread) */
static inline const OpShape *op_shape(GsOpcode op) {
  if (__builtin_expect(!op_shapes_built, 0)) op_shapes_build();
  return &op_shapes[op];
}

/* Fields an opcode does not name must be zero (isa.def). inst_plain found them so in the
 * common case. */
static void check_unused_fields(Ctx *c, const GsInst *in, const OpShape *s) {
  GsOpcode op = (GsOpcode)in->op;
  for (int k = 0; k < 3; k++) {
    if (!(s->used_r & 1u << k) && in->r[k]) inst_error(c, "field r%d is not used by %s and must be 0", k, isa_mnemonic(op));
    if (!(s->used_t & 1u << k) && in->t[k]) inst_error(c, "field t%d is not used by %s and must be 0", k, isa_mnemonic(op));
  }
  for (int k = 0; k < GS_INST_NUM; k++)
    if (!(s->used_n & 1u << k) && in->n[k])
      inst_error(c, "field n%d is not used by %s and must be 0", k, isa_mnemonic(op));
  if (!s->used_sub && in->sub) inst_error(c, "field sub is not used by %s and must be 0", isa_mnemonic(op));
  if (!s->used_dt && in->dtype) inst_error(c, "field dtype is not used by %s and must be 0", isa_mnemonic(op));
  if (!s->used_fl && in->flags) inst_error(c, "field flags is not used by %s and must be 0", isa_mnemonic(op));
  static const uint8_t zero[sizeof in->reserved];
  if (memcmp(in->reserved, zero, sizeof zero)) inst_error(c, "the reserved bytes must be 0");
}

static const GsUnitKind *queue_unit(const GsArch *a, const GsQueue *q) {
  const GsCoreKind *k = prog_core_kind(a, q->core);
  if (!k || q->index < Q_UNIT0 || q->index - Q_UNIT0 >= k->nunits) return NULL;
  return &a->units[k->unit[q->index - Q_UNIT0]];
}

static void check_alloc(Ctx *c, const GsInst *in) {
  const GsArch *a = c->a;
  int64_t cluster = inst_alloc_cluster(in), core = inst_alloc_core(in);
  if (in->sub == LVL_DDR) return;
  if (cluster >= a->nclusters) {
    inst_error(c, "cluster %lld does not exist (arch '%s' has %d)", (long long)cluster,
               a->name ? a->name : "?", a->nclusters);
    return;
  }
  if (in->sub == LVL_GB && a->gb_bytes == 0)
    inst_error(c, "arch '%s' has no global buffer", a->name ? a->name : "?");
  if (in->sub == LVL_LB) {
    const GsCoreKind *k = core <= 0x7fffffff ? prog_core_kind(a, (int)core) : NULL;
    if (!k)
      inst_error(c, "core %lld does not exist (arch '%s' has %d per cluster)", (long long)core,
                 a->name ? a->name : "?", cores_in_cluster(a));
    else if (k->lb_bytes == 0)
      inst_error(c, "core %lld (kind '%s') has no local buffer", (long long)core,
                 k->name ? k->name : "?");
  }
}

/* a + b·c with every operand in [0, GS_OPERAND_MAX]; -1 when the result exceeds
 * GS_OPERAND_MAX (the product is tested for overflow first: 2^40 · 2^40 fits nowhere). No
 * division: a mov's two sides take up to eight of these. */
static int64_t bounded_madd(int64_t a, int64_t b, int64_t c) {
  int64_t bc;
  if (__builtin_mul_overflow(b, c, &bc) || bc > GS_OPERAND_MAX - a) return -1;
  return a + bc;
}

/* One past the last byte a mov side reaches: off + (planes-1)·pstride + (rows-1)·stride + row,
 * the strides' 0 meaning the row (the plane); -1 beyond GS_OPERAND_MAX. */
static int64_t mov_side_end(int64_t off, int64_t row, int64_t rows, int64_t stride, int64_t planes,
                            int64_t pstride) {
  if (!stride) stride = row;
  int64_t plane = bounded_madd(row, rows - 1, stride);
  if (plane < 0) return -1;
  if (!pstride) pstride = bounded_madd(0, rows, stride);
  int64_t end = pstride < 0 ? -1 : bounded_madd(plane, planes - 1, pstride);
  return end < 0 ? -1 : bounded_madd(end, 1, off);
}

/* A mov's pattern: bytes split evenly into rows x planes, no side reaching past
 * GS_OPERAND_MAX, and no two rows (or planes) of the destination on the same bytes — one
 * transfer writing a byte twice is no transfer a DMA engine does. Source rows may overlap: a
 * sliding window reads rows again. */
static void check_mov(Ctx *c, const GsInst *in) {
  int64_t bytes = inst_mov_bytes(in), pstride = inst_mov_dst_pstride(in);
  int64_t rows = inst_mov_rows(in) ? inst_mov_rows(in) : 1;
  int64_t planes = inst_mov_planes(in) ? inst_mov_planes(in) : 1;
  /* rows * planes <= bytes is tested by division first, so the product cannot overflow (a
   * plain copy, one row and plane, divides nothing) */
  int plain = rows == 1 && planes == 1;
  if (!plain && (rows > bytes || planes > bytes / rows || bytes % (rows * planes) != 0)) {
    inst_error(c, "bytes=%lld is not a multiple of rows=%lld x planes=%lld",
               (long long)bytes, (long long)rows, (long long)planes);
    return;
  }
  int64_t row = plain ? bytes : bytes / (rows * planes);
  if (mov_side_end(inst_mov_src_off(in), row, rows, inst_mov_src_stride(in), planes,
                   inst_mov_src_pstride(in)) < 0 ||
      mov_side_end(inst_mov_dst_off(in), row, rows, inst_mov_dst_stride(in), planes,
                   pstride) < 0) {
    inst_error(c, "the pattern reaches past byte 2^40 (offsets, strides and counts multiplied)");
    return;
  }
  int64_t stride = inst_mov_dst_stride(in) ? inst_mov_dst_stride(in) : row;
  if (rows > 1 && stride < row)
    inst_error(c, "dst_stride=%lld is shorter than a row (%lld bytes): the rows overlap",
               (long long)stride, (long long)row);
  else if (planes > 1 && pstride && pstride < (rows - 1) * stride + row)
    inst_error(c, "dst_pstride=%lld is shorter than a plane (%lld bytes): the planes overlap",
               (long long)pstride, (long long)((rows - 1) * stride + row));
}

/* A stored element is 1, 2, 4 or 8 bytes (0: the dtype's). */
static void check_elem_bytes(Ctx *c, int64_t e) {
  if (e != 0 && e != 1 && e != 2 && e != 4 && e != 8)
    inst_error(c, "elem_bytes=%lld: a stored element is 1, 2, 4 or 8 bytes (0: the dtype's size)",
               (long long)e);
}

/* A gemm's m·n·k (its MACs) is at most GS_OPERAND_MAX. */
static void check_gemm(Ctx *c, const GsInst *in) {
  int64_t m = inst_gemm_m(in), n = inst_gemm_n(in), k = inst_gemm_k(in);
  int64_t reps = isa_gemm_reps(in);
  if (bounded_madd(0, m, n) < 0 || bounded_madd(0, m * n, k) < 0)
    inst_error(c, "m x n x k = %lld x %lld x %lld exceeds 2^40 multiply-accumulates", (long long)m,
               (long long)n, (long long)k);
  else if (bounded_madd(0, m * n * k, reps) < 0)
    inst_error(c, "m x n x k x reps = %lld x %lld exceeds 2^40 multiply-accumulates",
               (long long)(m * n * k), (long long)reps);
  check_elem_bytes(c, inst_gemm_elem_bytes(in));
  if (inst_gemm_a_elems(in) < 0)
    inst_error(c, "gemm a_elems=%lld is negative (0: a holds m x k elements)",
               (long long)inst_gemm_a_elems(in));
}

/* Vector ops over groups or windows name the group length: 1 <= param <= elems. Every operand
 * read is named with its extent: a_elems where elems counts reads again, b_elems with b. */
static void check_vec_operands(Ctx *c, const GsInst *in) {
  GsVop v = (GsVop)in->sub;
  int64_t param = inst_vec_param(in), elems = inst_vec_elems(in);
  if (isa_vop_needs_param(v) && (param < 1 || (elems > 0 && param > elems)))
    inst_error(c, "vec %s needs 1 <= param <= elems (param=%lld, elems=%lld)",
               isa_vop_name(v), (long long)param, (long long)elems);
  if (isa_vop_windowed(v, param) && inst_vec_a_elems(in) == 0)
    inst_error(c, "vec %s%s reads elements of a again: a_elems must name how many a holds",
               isa_vop_name(v), isa_vop_needs_param(v) ? "" : " with a window param");
  check_elem_bytes(c, inst_vec_elem_bytes(in));
  if (!in->r[2] != !inst_vec_b_elems(in))
    inst_error(c, "b and b_elems go together: b names the second operand, b_elems its elements");
}

/* A gather names its index list and how many bytes of it it reads, or neither. */
static void check_mov_idx(Ctx *c, const GsInst *in) {
  if (!in->r[2] != !inst_mov_idx_bytes(in))
    inst_error(c, "idx and idx_bytes go together: idx names a gather's index list, idx_bytes "
               "the bytes of it read");
}

/* Region operands that may be 0: a one-input vector op's b, a plain copy's index list. */
static int optional_region(const GsInst *in, int index) {
  if (!region_may_be_none((GsOpcode)in->op, index)) return 0;
  return in->op != I_VEC || isa_vop_inputs((GsVop)in->sub) < 2;
}

/* Queue t of the current queue's core, the target of a signal (the opcode's or a carried one):
 * looked up once per queue, as nearly every instruction signals. */
static void check_signal_target(Ctx *c, int t) {
  char why[256];
  if (c->signals[t / 64] >> (t % 64) & 1) return;
  if (prog_queue_exists(c->a, c->q->cluster, c->q->core, t, why, sizeof why))
    c->signals[t / 64] |= 1ull << (t % 64);
  else
    inst_error(c, "signal target: %s", why);
}

/* Operand k of in (shape: its opcode's): in range, positive where it must be. *ints_ok is
 * cleared by an integer outside [0, 2^40] (the derived checks may multiply them). */
static void check_operand(Ctx *c, const GsInst *in, const OpShape *shape, int k, int *ints_ok) {
  const GsQueue *q = c->q;
  const GsUnitKind *u = c->unit;
  GsOpcode op = (GsOpcode)in->op;
  const GsOperand *o = shape->ops[k];
  int64_t v = isa_inst_get(in, o);
  switch (o->kind) {
  case OPK_INT:
    *ints_ok &= v >= 0 && v <= GS_OPERAND_MAX;
    if (v < 0) inst_error(c, "%s=%lld is negative", o->name, (long long)v);
    else if (v > GS_OPERAND_MAX) inst_error(c, "%s=%lld exceeds 2^40", o->name, (long long)v);
    else if (v == 0 && shape->positive & 1u << k) inst_error(c, "%s must be positive", o->name);
    break;
  case OPK_REGION:
    if (v >= c->nregions)
      inst_error(c, "%s: region %lld out of range (the program has ids 1..%u)", o->name,
                 (long long)v, c->nregions - 1);
    else if (v == 0 && !optional_region(in, o->index))
      inst_error(c, "%s names no region", o->name);
    break;
  case OPK_TILE:
    if (v >= c->ntiles)
      inst_error(c, "%s: tile %lld out of range (the program has ids 1..%u)", o->name,
                 (long long)v, c->ntiles - 1);
    else if (v == 0 && op != I_ALLOC && in->r[o->index] != 0)
      inst_error(c, "%s: a data instruction names the tile of every region it uses", o->name);
    break;
  case OPK_LEVEL:
    if (v >= GS_LEVEL_COUNT) inst_error(c, "level %lld out of range", (long long)v);
    break;
  case OPK_SCOPE:
    if (v >= GS_SCOPE_COUNT) inst_error(c, "scope %lld out of range", (long long)v);
    break;
  case OPK_VOP:
    if (v >= V_COUNT) inst_error(c, "vector op %lld out of range (0..%d)", (long long)v, V_COUNT - 1);
    break;
  case OPK_DTYPE:
    if (v >= DT_COUNT) inst_error(c, "dtype %lld out of range (0..%d)", (long long)v, DT_COUNT - 1);
    else if (u && op == I_GEMM && u->mac_rate[v] <= 0)
      inst_error(c, "unit '%s' does not support dtype %s", u->name, arch_dtype_name((GsDtype)v));
    else if (u && op == I_VEC && u->lanes[v] <= 0)
      inst_error(c, "unit '%s' does not support dtype %s", u->name, arch_dtype_name((GsDtype)v));
    break;
  case OPK_QUEUE:
    if (q->core < 0)
      inst_error(c, "%s", prog_no_flags_msg);
    else
      check_signal_target(c, (int)v); /* sub: 0..255 */
    break;
  case OPK_SYNC_FLAG:
  case OPK_SYNC_QUEUE: break; /* every opcode's, not in shape->ops (check_sync) */
  }
}

/* (vectors by pointer: passed or returned by value they would change the ABI of a function
 * built without AVX) */
static inline void vec_load(NumVec *v, const void *p) { memcpy(v, p, sizeof *v); }

/* Into *bad: vector j of InstVecs of instruction b, its fields not named and n[]'s operands
 * out of range. */
static inline void vec_bad(NumVec *bad, const unsigned char *b, const OpShape *s, int j) {
  const uint64_t M = (uint64_t)GS_OPERAND_MAX;
  const NumVec max = {M, M, M, M}, zero = {0};
  NumVec v, unused, ints, pos;
  vec_load(&v, b + 8 * inst_vec_word(j, 0));
  vec_load(&unused, s->unused + 4 * j);
  vec_load(&ints, s->ints + 4 * j);
  vec_load(&pos, s->positive_n + 4 * j);
  *bad |= (v & unused) | ((NumVec)(v > max) & ints) | ((NumVec)(v == zero) & pos);
}

/* Whether in needs no check but those of shape->others', in the common case, tested with
 * vectors over the whole instruction (InstVecs) and no branch per field: the fields the opcode
 * does not name are 0; its integer operands in n[] are in [0, 2^40], and positive where they
 * must be; its region and tile operands pass check_operand (ids in range, a region named
 * unless optional, a tile named with its region but for alloc). Else every check runs. The
 * three loops over fields and bits this replaced were a fifth of the checking thread. */
GS_AVX2_CLONES
static int inst_plain(const Ctx *c, const GsInst *in, const OpShape *s) {
  const unsigned char *b = (const unsigned char *)in;
  NumVec v0, unused0, bad = {0};
  vec_load(&v0, b); /* no n[] in words 0-3 */
  vec_load(&unused0, s->unused);
  bad |= v0 & unused0;
  _Static_assert(INST_VECS == 4, "the vectors at words 0, 4, 8 and 10");
#pragma GCC unroll 3
  for (int j = 1; j < INST_VECS; j++) vec_bad(&bad, b, s, j);
  IdVec ids = (IdVec)v0, none = {0}, lim;
  memcpy(&lim, c->id_lim, sizeof lim);
  IdVec regs = __builtin_shufflevector(ids, ids, 0, 0, 0, 0, 1, 2, 3, 0); /* lane 4 + k: r[k] */
  bad |= (NumVec)(((IdVec)(ids >= lim) & s->id_used) | ((IdVec)(ids == none) & s->id_nonzero) |
                  ((IdVec)(ids == none) & (IdVec)(regs != none) & s->tile_nonzero));
  if (bad[0] | bad[1] | bad[2] | bad[3]) return 0;
  /* the region operand id_nonzero leaves out, which only some instructions may leave 0 */
  return !((s->reg_r & 4) && in->r[2] == 0 && region_may_be_none((GsOpcode)in->op, 2) &&
           !optional_region(in, 2));
}

const char prog_no_flags_msg[] =
    "flags are per core: a cluster DMA queue synchronises with sempost/semwait/barrier";

/* The wait and signal an instruction carries (prog.h GsInst). */
static void check_sync(Ctx *c, const GsInst *in) {
  const GsQueue *q = c->q;
  if (q->core < 0) {
    inst_error(c, "%s", prog_no_flags_msg);
    return;
  }
  /* wait - 1 and wait2 - 1 are at most 254 = GS_SYNC_FLAG_MAX */
  if (in->signal_flag > GS_SYNC_FLAG_MAX)
    inst_error(c, "signal_flag=%d out of range (0..%d)", in->signal_flag, GS_SYNC_FLAG_MAX);
  if (in->signal2_flag > GS_SYNC_FLAG_MAX)
    inst_error(c, "signal2_flag=%d out of range (0..%d)", in->signal2_flag, GS_SYNC_FLAG_MAX);
  if (in->signal_flag && !in->signal) inst_error(c, "signal_flag without signal (the queue to signal)");
  if (in->signal2_flag && !in->signal2)
    inst_error(c, "signal2_flag without signal2 (the queue to signal)");
  if (in->signal2 && !in->signal)
    inst_error(c, "signal2 without signal (the queue signalled first)");
  if (in->wait2 && !in->wait) inst_error(c, "wait2 without wait (the flag waited on first)");
  if (in->signal) check_signal_target(c, in->signal - 1);
  if (in->signal2) check_signal_target(c, in->signal2 - 1);
}

static void check_inst(Ctx *c, const GsInst *in) {
  const GsArch *a = c->a;
  const GsQueue *q = c->q;
  char why[256];
  if (in->op >= I_COUNT) {
    inst_error(c, "opcode %u out of range (0..%d)", in->op, I_COUNT - 1);
    return;
  }
  GsOpcode op = (GsOpcode)in->op;
  if (!(c->accepts >> op & 1) && !prog_queue_accepts(a, q->core, q->index, op, why, sizeof why))
    inst_error(c, "%s", why);
  const OpShape *shape = op_shape(op);
  int plain = inst_plain(c, in, shape), ints_ok = 1;
  if (!plain) check_unused_fields(c, in, shape);
  unsigned to_check = plain ? shape->others : ~0u; /* bit k: operand k */
  if (shape->nops < 32) to_check &= (1u << shape->nops) - 1;
  for (; to_check; to_check &= to_check - 1)
    check_operand(c, in, shape, __builtin_ctz(to_check), &ints_ok);
  if (in->wait | in->signal | in->signal_flag | in->wait2 | in->signal2 | in->signal2_flag)
    check_sync(c, in);
  if (op == I_WAIT && q->core < 0)
    inst_error(c, "%s", prog_no_flags_msg);
  if (op == I_ALLOC && a && in->sub < GS_LEVEL_COUNT && inst_alloc_cluster(in) >= 0 &&
      inst_alloc_core(in) >= 0)
    check_alloc(c, in);
  if (op == I_MOV && ints_ok && inst_mov_bytes(in) > 0) check_mov(c, in);
  if (op == I_GEMM && ints_ok) check_gemm(c, in);
  if (op == I_VEC && in->sub < V_COUNT) check_vec_operands(c, in);
  if (op == I_MOV) check_mov_idx(c, in);
}

/* What c knows of queue q before its instructions: its unit, the opcodes it runs, no signal
 * target found valid yet. */
static void queue_begin(Ctx *c, const GsQueue *q) {
  c->q = q;
  c->unit = queue_unit(c->a, q);
  c->accepts = 0;
  memset(c->signals, 0, sizeof c->signals);
  for (int op = 0; op < I_COUNT; op++)
    if (prog_queue_accepts(c->a, q->core, q->index, (GsOpcode)op, NULL, 0)) c->accepts |= 1ull << op;
}

/* ---- copied runs (prog_copy.c) ----
 * A copied instruction is its source's, checked in the source's queue, but for its ids, the
 * offsets into the regions its map shifts, and an alloc's cluster (the queue's own). So a run
 * is checked by its source's place (the same core and queue index in another cluster: the
 * same engine and units, the same signal targets), its extent and its map: every span's image
 * must be ids that exist, and a shift must keep offsets in [0, 2^40]. A run whose map shifts
 * offsets is checked instruction by instruction too, as its mov patterns' last bytes move. */
static void run_error(Ctx *c, const GsCopyRun *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void run_error(Ctx *c, const GsCopyRun *r, const char *fmt, ...) {
  if (c->quiet) {
    c->failed = 1;
    return;
  }
  char qn[64], msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(c->d, c->file, 0, 0, NULL, "queue %s, instructions %lld..%lld (a copied run): %s",
             gtasm_queue_name(c->a, c->q, qn, sizeof qn), (long long)r->at,
             (long long)(r->at + r->n - 1), msg);
}

/* The spans s[0..n) of a map: sorted, apart, not naming id 0, their images below lim; shifts
 * only where `shifts`, in [0, 2^40]. Returns whether any span shifts. */
static int check_spans(Ctx *c, const GsCopyRun *r, const GsIdSpan *s, int n, uint32_t lim,
                       const char *what, int shifts) {
  int any = 0;
  for (int i = 0; i < n; i++) {
    int64_t first = (int64_t)s[i].lo + s[i].delta, last = (int64_t)s[i].hi - 1 + s[i].delta;
    if (s[i].lo == 0 || s[i].hi <= s[i].lo)
      run_error(c, r, "%s span [%u, %u) is empty or names id 0", what, s[i].lo, s[i].hi);
    else if (i > 0 && s[i].lo < s[i - 1].hi)
      run_error(c, r, "%s spans [%u, %u) and [%u, %u) are out of order or overlap", what,
                s[i - 1].lo, s[i - 1].hi, s[i].lo, s[i].hi);
    else if (first < 1 || last >= lim)
      run_error(c, r, "%s span [%u, %u) moved by %lld leaves the ids 1..%u", what, s[i].lo,
                s[i].hi, (long long)s[i].delta, lim - 1);
    else if (s[i].shift && (!shifts || s[i].shift < 0 || s[i].shift > GS_OPERAND_MAX))
      run_error(c, r, "%s span [%u, %u) shifts offsets by %lld", what, s[i].lo, s[i].hi,
                (long long)s[i].shift);
    any |= s[i].shift != 0;
  }
  return any;
}

typedef struct {
  Ctx *c;
  const GsCopyRun *r;
} CopiedAt;

static void check_copied(void *ctx, const GsInst *in, int64_t i) {
  CopiedAt *x = ctx;
  x->c->in = in;
  x->c->i = (size_t)(x->r->at + (i - x->r->from));
  check_inst(x->c, in);
}

/* The runs of queue q of p (c entered on q). */
static void check_copies(Ctx *c, const GsProgram *p, const GsQueue *q) {
  const GsQueueCopies *cp = q->copies;
  for (int i = 0; cp && i < cp->n && !c->failed; i++) {
    const GsCopyRun *r = &cp->run[i];
    const GsQueue *s = r->src_qi >= 0 && r->src_qi < p->nqueues ? &p->queues[r->src_qi] : NULL;
    char sn[64];
    if (!s || s == q || s->copies || s->core != q->core || s->index != q->index ||
        s->cluster == q->cluster) {
      run_error(c, r, "its source (queue %s) is not this queue's core and queue in another "
                "cluster, holding no runs itself",
                s ? gtasm_queue_name(c->a, s, sn, sizeof sn) : "none");
      continue;
    }
    if (r->from < 0 || r->from + r->n > s->ninsts) {
      run_error(c, r, "it copies instructions %lld..%lld of queue %s, which has %lld",
                (long long)r->from, (long long)(r->from + r->n - 1),
                gtasm_queue_name(c->a, s, sn, sizeof sn), (long long)s->ninsts);
      continue;
    }
    if (r->map->cluster != q->cluster)
      run_error(c, r, "its map names cluster %d, not the queue's", r->map->cluster);
    int before = c->d ? c->d->nerrors : 0;
    int shifts = check_spans(c, r, r->map->regs, r->map->nregs, c->nregions, "region", 1);
    check_spans(c, r, r->map->tiles, r->map->ntiles, c->ntiles, "tile", 0);
    int clean = !c->failed && (c->d ? c->d->nerrors : 0) == before;
    if (shifts && clean) {
      c->copied = 1;
      prog_copy_each(r, check_copied, &(CopiedAt){c, r});
      c->copied = 0;
    }
  }
}

/* Queues [from, to) of c->p, in order. */
static void check_queues(Ctx *c, int from, int to) {
  const GsProgram *p = c->p;
  const GsArch *a = c->a;
  char why[256], qn[64];
  for (int qi = from; qi < to; qi++) {
    const GsQueue *q = &p->queues[qi];
    c->q = q;
    int exists = prog_queue_exists(a, q->cluster, q->core, q->index, why, sizeof why);
    /* quadratic in queues, which stay below ~10^4 (IPU GC2: 2 x 1216 cores x 3 queues, about
     * 3·10^7 compares, tens of ms); the .gtp reader sorts instead since it sees raw files */
    int twice = exists && prog_find_queue(p, q->cluster, q->core, q->index) != qi;
    if ((!exists || twice) && c->quiet) {
      c->failed = 1;
      return;
    }
    if (!exists) {
      diag_error(c->d, c->file, 0, 0, NULL, "queue %s: %s", gtasm_queue_name(a, q, qn, sizeof qn), why);
      continue;
    }
    if (twice)
      diag_error(c->d, c->file, 0, 0, NULL, "queue %s appears twice",
                 gtasm_queue_name(a, q, qn, sizeof qn));
    queue_begin(c, q);
    GsCursor cur;
    prog_cursor_init_own(&cur, q);
    c->i = 0;
    for (; (c->in = prog_cursor_next(&cur)) != NULL; c->i++) check_inst(c, c->in);
    check_copies(c, p, q);
  }
}

typedef struct {
  Ctx c;
  int from, to;
} Half;

static void *check_half(void *arg) {
  Half *h = arg;
  check_queues(&h->c, h->from, h->to);
  return NULL;
}

/* The first queue of the second half: where the queues before it hold half the instructions;
 * 0 (no second half) for a program shorter than PROG_CHECK_SPLIT_MIN or one the first queues
 * already cover. */
static int split_queue(const GsProgram *p) {
  int64_t total = prog_ninsts(p), first = 0;
  if (total < PROG_CHECK_SPLIT_MIN) return 0;
  int qi = 0;
  while (qi < p->nqueues && 2 * first < total) first += p->queues[qi++].ninsts;
  return qi < p->nqueues ? qi : 0;
}

int prog_check(const GsProgram *p, const GsArch *a, GsDiag *d, const char *file) {
  int before = d->nerrors;
  Ctx c = {.p = p, .a = a, .d = d, .file = file};
  ctx_set_ids(&c, p->nregions, p->ntiles);
  _Static_assert(I_COUNT <= 64, "Ctx.accepts has a bit per opcode");
  int split = split_queue(p);
  Half h = {c, split, p->nqueues};
  h.c.quiet = 1;
  pthread_t th;
  if (split) {
    (void)op_shape(I_ALLOC); /* its table is built once, by this thread */
    if (pthread_create(&th, NULL, check_half, &h) != 0) split = 0;
  }
  check_queues(&c, 0, split ? split : p->nqueues);
  if (split) {
    pthread_join(th, NULL);
    if (h.c.failed) check_queues(&c, split, p->nqueues); /* again, with its messages */
  }
  return d->nerrors == before ? 0 : -1;
}

/* ---- checking while the program is emitted (prog_check_begin) ----
 * The emitting thread publishes a copy of its queue table and id counts under a lock; the
 * checker thread takes the latest copy and, per queue, decodes and checks the instructions
 * published since its last look (all but the staged last one, which may still change), with a
 * cursor kept per queue. The ids of a copy's regions and tiles are those made before its
 * instructions were published, so an id checked against them is checked against no more than
 * the whole program's. When the thread finds anything, or runs out of cursors, it stops
 * checking, and prog_check_end checks the whole program again with messages.
 *
 * Encoding there too (prog_check_attach). Encoding was about 40% of the emitting thread, and
 * the checks left the second core idle half the time (docs/speed.md, "Scheduling"). So two
 * queues of every three of an attached program (prog_check_takes) are encoded on this thread:
 * prog_emit copies such a queue's finished instruction into a batch (prog_check_put), a full
 * batch is handed over, and the thread encodes the batches in the order they came: each
 * queue's instructions in their order, into the bytes prog_emit would have made. It then
 * checks the batch's instructions as they are, against the ids that existed when the batch was
 * handed over (RunBatch), with no decoding and no look at those queues (their staged last
 * instructions aside, which run_rest checks), in a second pass over the batch: checked between
 * the encodes, instruction after instruction, they took twice as long. Not every queue,
 * because the hand-over costs the emitting thread too, and given every queue the thread
 * bounded the scheduling. The thread encodes before it looks at the other queues, and breaks
 * off a look when a batch comes, so that the emitting thread seldom waits for room in the
 * ring; a queue is looked at only as far as it is encoded (prog_queue_encoded), the rest at a
 * later look. The ring is fixed (RUN_SLOTS batches of RUN_BATCH records): memory stays
 * bounded, and when the thread is that far behind the emitting thread waits for it. The
 * thread encodes every batch even after the checks stopped: the program needs them. */

enum { RUN_MAX_QUEUES = 4096 }; /* a cursor keeps ~10 KiB of decoder state */
/* 128 KiB a batch: a hand-over (a lock, and a wake-up when the thread sleeps) per 1024
 * instructions; 2 MiB in all. */
enum { RUN_BATCH = 1024, RUN_SLOTS = 16 };

typedef struct {
  GsCursor *cur;                /* NULL until the queue has an encoded instruction */
  const GsUnitKind *unit;       /* Ctx's per-queue fields, kept between looks and batches */
  uint64_t accepts, signals[4];
  GsQueue place;                /* a queue the thread encodes: its cluster, core and index */
  int64_t nchecked;             /* such a queue's instructions checked as they were encoded */
  int begun;                    /* unit, accepts and signals are the queue's (rq_enter) */
} RunQueue;

typedef struct {
  _Alignas(64) GsInst in;
  uint32_t qi; /* the queue's index in the program (its code: the place's, run_encode) */
} RunRec;
_Static_assert(sizeof(RunRec) == 128 && offsetof(RunRec, qi) == 120,
               "a record is two cache lines, written whole: the last as n[9] and qi");
typedef struct {
  RunRec rec[RUN_BATCH];
  int n;
  uint32_t nregions, ntiles; /* the program's ids when the batch was handed over */
} RunBatch;

struct GsCheckRun {
  pthread_mutex_t mu;
  pthread_cond_t cv;      /* the thread waits on it for a batch, a publication or the end */
  pthread_cond_t cv_room; /* the emitting thread waits on it for room in the ring */
  pthread_t th;
  int started, halted; /* the thread was started; it was joined */
  GsProgram *attached; /* some of whose queues the thread encodes (prog_check_attach) */
  RunBatch *ring;      /* [RUN_SLOTS] while attached */
  int fill;            /* the emitting thread's: the batch it fills, ring[fill] */
  /* under mu: nfull batches handed over from ring[head] on (ring[head] the thread's while it
   * encodes it; nfull also read without the lock, atomically, to break off a look) */
  int head, nfull;
  /* under mu: the last publication */
  GsQueue *pub;
  int npub, pubcap;
  uint32_t nregions, ntiles;
  unsigned gen;  /* publications so far */
  int done;      /* prog_check_halt was called: every batch is handed over */
  /* under mu: the attached program's queues as of the last hand-over (their places) */
  GsQueue *places;
  int nplaces, placescap;
  /* the checker thread's (prog_check_end's after the join) */
  Ctx c;         /* the looks' */
  Ctx enc;       /* the checks of the instructions it encodes; its queue: rq[enc_qi] */
  int enc_qi;
  int checking;  /* 0 once it found anything or gave up: then it only encodes */
  GsQueue *snap;
  int nsnap, snapcap;
  RunQueue *rq;  /* [rqcap], zeroed when grown */
  int rqcap;
  int nknown;    /* rq[0..nknown) have their place */
};

static void *grow(void *v, int *cap, int need, size_t size) {
  if (need <= *cap) return v;
  int n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  v = realloc(v, (size_t)n * size);
  if (!v) die("out of memory");
  *cap = n;
  return v;
}

/* c set to queue q with its state kept in r (q's beginning the first time). */
static void rq_enter(Ctx *c, RunQueue *r, const GsQueue *q) {
  if (!r->begun) {
    queue_begin(c, q);
    r->unit = c->unit, r->accepts = c->accepts, r->begun = 1;
    memset(r->signals, 0, sizeof r->signals);
  }
  c->q = q, c->unit = r->unit, c->accepts = r->accepts;
  memcpy(c->signals, r->signals, sizeof c->signals);
}

/* The instructions of queue qi of the copy that are new since the last look, as far as they
 * are encoded; 0 when the thread should stop checking (an error, or too many queues). */
static int run_queue(GsCheckRun *cr, int qi) {
  const GsQueue *q = &cr->snap[qi];
  if (q->run) return 1; /* checked as it is encoded */
  RunQueue *r = &cr->rq[qi];
  Ctx *c = &cr->c;
  int64_t n = prog_queue_own(q) - 1, done = r->cur ? r->cur->i : 0; /* the staged one may
                                                                       * change */
  if (n <= done) return 1;
  int64_t encoded = prog_queue_encoded(q); /* (read only when there may be more: a miss) */
  if (n > encoded) n = encoded;
  if (n <= done) return 1;
  if (!r->cur) {
    if (qi >= RUN_MAX_QUEUES) return 0; /* gives up: prog_check_end checks it all */
    if (!prog_queue_exists(c->a, q->cluster, q->core, q->index, NULL, 0)) {
      c->failed = 1;
      return 0;
    }
    r->cur = malloc(sizeof *r->cur);
    if (!r->cur) die("out of memory");
    prog_cursor_init_own(r->cur, q); /* the copied runs: run_rest */
  }
  rq_enter(c, r, q);
  while (r->cur->i < n && !c->failed) {
    c->in = prog_cursor_next_encoded(r->cur);
    c->i = (size_t)r->cur->i - 1;
    check_inst(c, c->in);
  }
  memcpy(r->signals, c->signals, sizeof r->signals);
  return !c->failed;
}

/* rq holding at least n queues, the new ones zeroed. */
static void run_grow_queues(GsCheckRun *cr, int n) {
  int had = cr->rqcap;
  cr->rq = grow(cr->rq, &cr->rqcap, n, sizeof *cr->rq);
  memset(cr->rq + had, 0, (size_t)(cr->rqcap - had) * sizeof *cr->rq);
}

/* Under mu: the latest publication, copied for the looks that follow. */
static void run_take_publication(GsCheckRun *cr) {
  cr->snap = grow(cr->snap, &cr->snapcap, cr->npub, sizeof *cr->snap);
  memcpy(cr->snap, cr->pub, (size_t)cr->npub * sizeof *cr->snap);
  cr->nsnap = cr->npub;
  run_grow_queues(cr, cr->npub);
  ctx_set_ids(&cr->c, cr->nregions, cr->ntiles);
}

/* cr->enc's queue state back where it is kept (rq[enc_qi]), and no queue entered. */
static void run_leave_encoded(GsCheckRun *cr) {
  if (cr->enc_qi >= 0) memcpy(cr->rq[cr->enc_qi].signals, cr->enc.signals, sizeof cr->enc.signals);
  cr->enc_qi = -1;
}

/* An instruction the thread has just encoded, checked (quietly) as the looks would, with its
 * queue's state in cr->enc (the ids: its batch's, run_encode). */
static void run_check_encoded(GsCheckRun *cr, const RunRec *rec) {
  Ctx *c = &cr->enc;
  RunQueue *r = &cr->rq[rec->qi];
  if ((int)rec->qi != cr->enc_qi) {
    run_leave_encoded(cr);
    const GsQueue *q = &r->place;
    if (!r->begun && !prog_queue_exists(c->a, q->cluster, q->core, q->index, NULL, 0)) {
      cr->checking = 0;
      return;
    }
    rq_enter(c, r, q);
    cr->enc_qi = (int)rec->qi;
  }
  c->in = &rec->in;
  c->i = (size_t)r->nchecked++;
  check_inst(c, &rec->in);
  if (c->failed) cr->checking = 0;
}

/* Under mu, held again on return: the batch at the ring's head encoded (and checked). */
static void run_encode(GsCheckRun *cr) {
  RunBatch *b = &cr->ring[cr->head];
  run_leave_encoded(cr); /* cr->enc.q points into rq, which may move now or between batches */
  if (cr->nknown < cr->nplaces) { /* the places of queues made since the last batch */
    run_grow_queues(cr, cr->nplaces);
    for (; cr->nknown < cr->nplaces; cr->nknown++)
      cr->rq[cr->nknown].place = cr->places[cr->nknown];
  }
  pthread_mutex_unlock(&cr->mu);
  for (int i = 0; i < b->n; i++) prog_code_append(cr->rq[b->rec[i].qi].place.code, &b->rec[i].in);
  ctx_set_ids(&cr->enc, b->nregions, b->ntiles);
  for (int i = 0; i < b->n && cr->checking; i++) run_check_encoded(cr, &b->rec[i]);
  b->n = 0;
  pthread_mutex_lock(&cr->mu);
  cr->head = (cr->head + 1) % RUN_SLOTS;
  __atomic_sub_fetch(&cr->nfull, 1, __ATOMIC_RELAXED);
  pthread_cond_signal(&cr->cv_room);
}

/* Checks the copy's queues from *next on, until a batch comes. */
static void run_look(GsCheckRun *cr, int *next) {
  for (; cr->checking && *next < cr->nsnap; ++*next) {
    if (__atomic_load_n(&cr->nfull, __ATOMIC_RELAXED)) return; /* encoding goes first */
    cr->checking = run_queue(cr, *next);
  }
}

/* Encodes the batches handed over, else looks at the latest publication's queues, else waits;
 * ends when halted with every batch encoded. */
static void *run_thread(void *arg) {
  GsCheckRun *cr = arg;
  unsigned seen = 0;
  int next = 0; /* the queue of the copy the look goes on from */
  pthread_mutex_lock(&cr->mu);
  for (;;) {
    if (cr->nfull) {
      run_encode(cr);
    } else if (cr->checking && (next < cr->nsnap || cr->gen != seen)) {
      if (next >= cr->nsnap) {
        seen = cr->gen;
        run_take_publication(cr);
        next = 0;
      }
      pthread_mutex_unlock(&cr->mu);
      run_look(cr, &next);
      pthread_mutex_lock(&cr->mu);
    } else if (cr->done) {
      break;
    } else {
      pthread_cond_wait(&cr->cv, &cr->mu);
    }
  }
  pthread_mutex_unlock(&cr->mu);
  return NULL;
}

GsCheckRun *prog_check_begin(const GsArch *a) {
  GsCheckRun *cr = calloc(1, sizeof *cr);
  if (!cr) die("out of memory");
  cr->c.a = a;
  cr->c.quiet = 1;
  cr->enc.a = a;
  cr->enc.quiet = 1;
  cr->enc_qi = -1;
  cr->checking = 1;
  pthread_mutex_init(&cr->mu, NULL);
  pthread_cond_init(&cr->cv, NULL);
  pthread_cond_init(&cr->cv_room, NULL);
  (void)op_shape(I_ALLOC); /* its table is built once, by this thread */
  cr->started = pthread_create(&cr->th, NULL, run_thread, cr) == 0;
  return cr;
}

void prog_check_attach(GsCheckRun *cr, GsProgram *p) {
  if (!cr || !cr->started || cr->halted || cr->attached) return; /* then encoded inline */
  cr->ring = aligned_alloc(_Alignof(RunBatch), RUN_SLOTS * sizeof *cr->ring);
  if (!cr->ring) die("out of memory");
  for (int i = 0; i < RUN_SLOTS; i++) cr->ring[i].n = 0;
  cr->attached = p;
  p->run = cr;
  for (int qi = 0; qi < p->nqueues; qi++)
    if (prog_check_takes(qi)) {
      p->queues[qi].run = cr;
      prog_queue_code_begin(&p->queues[qi]); /* the place the thread finds it by */
    }
}

/* The emitting thread's: hands over the batch it fills, if it holds any, and goes on to the
 * next, waiting while the ring is full. */
static void run_hand_over(GsCheckRun *cr) {
  RunBatch *b = &cr->ring[cr->fill];
  if (!b->n) return;
  const GsProgram *p = cr->attached;
  b->nregions = p->nregions, b->ntiles = p->ntiles;
  util_stream_fence(); /* the records' streaming stores before the lock's release */
  pthread_mutex_lock(&cr->mu);
  if (cr->nplaces < p->nqueues) {
    cr->places = grow(cr->places, &cr->placescap, p->nqueues, sizeof *cr->places);
    memcpy(cr->places + cr->nplaces, p->queues + cr->nplaces,
           (size_t)(p->nqueues - cr->nplaces) * sizeof *cr->places);
    cr->nplaces = p->nqueues;
  }
  __atomic_add_fetch(&cr->nfull, 1, __ATOMIC_RELAXED);
  pthread_cond_signal(&cr->cv);
  while (cr->nfull == RUN_SLOTS) pthread_cond_wait(&cr->cv_room, &cr->mu);
  cr->fill = (cr->head + cr->nfull) % RUN_SLOTS;
  pthread_mutex_unlock(&cr->mu);
}

/* Written past the caches (util_stream_copy): with plain stores every line of the ring moved to
 * the thread's cache and back, and scheduling took 1.7 times as long (docs/speed.md,
 * "Scheduling"). */
void prog_check_put(GsCheckRun *cr, const GsQueue *q, const GsInst *in) {
  RunBatch *b = &cr->ring[cr->fill];
  RunRec *r = &b->rec[b->n];
  /* n[9], then qi in the low half of the last pair (the encoder, prog_code.c, is for
   * little-endian machines only) */
  uint64_t qi = (uint64_t)(q - cr->attached->queues);
  util_stream_copy(&r->in, in, offsetof(GsInst, n[GS_INST_NUM - 1]));
  util_stream_pair(&r->in.n[GS_INST_NUM - 1], (uint64_t)in->n[GS_INST_NUM - 1], qi);
  if (++b->n == RUN_BATCH) run_hand_over(cr);
}

void prog_check_publish(GsCheckRun *cr, const GsProgram *p) {
  if (!cr || !cr->started) return;
  pthread_mutex_lock(&cr->mu);
  cr->pub = grow(cr->pub, &cr->pubcap, p->nqueues, sizeof *cr->pub);
  memcpy(cr->pub, p->queues, (size_t)p->nqueues * sizeof *cr->pub);
  cr->npub = p->nqueues;
  cr->nregions = p->nregions, cr->ntiles = p->ntiles;
  cr->gen++;
  pthread_cond_signal(&cr->cv);
  pthread_mutex_unlock(&cr->mu);
}

/* After the thread: the queues' checks and what no copy had, quietly; 0 on any finding. */
static int run_rest(GsCheckRun *cr, const GsProgram *p) {
  Ctx *c = &cr->c;
  ctx_set_ids(c, p->nregions, p->ntiles);
  run_leave_encoded(cr);
  GsCursor *fresh = NULL;
  for (int qi = 0; qi < p->nqueues && !c->failed; qi++) {
    const GsQueue *q = &p->queues[qi];
    if (!prog_queue_exists(c->a, q->cluster, q->core, q->index, NULL, 0) ||
        prog_find_queue(p, q->cluster, q->core, q->index) != qi)
      return 0;
    RunQueue *r = qi < cr->rqcap ? &cr->rq[qi] : NULL;
    const GsInst *last = prog_queue_staged(q);
    if (r && r->nchecked && last && r->nchecked == prog_queue_own(q) - 1) { /* checked as
                                                                              * encoded */
      rq_enter(c, r, q);
      c->in = last;
      c->i = (size_t)r->nchecked;
      check_inst(c, last);
      check_copies(c, p, q);
      continue;
    }
    GsCursor *cur;
    if (r && r->cur) { /* on from where the thread left it */
      cur = r->cur;
      rq_enter(c, r, q);
    } else {
      if (!fresh && !(fresh = malloc(sizeof *fresh))) die("out of memory");
      cur = fresh;
      prog_cursor_init_own(cur, q);
      queue_begin(c, q);
    }
    cur->q = q; /* the staged last instruction is final now */
    while (!c->failed && (c->in = prog_cursor_next(cur)) != NULL) {
      c->i = (size_t)cur->i - 1;
      check_inst(c, c->in);
    }
    if (!c->failed) check_copies(c, p, q);
  }
  free(fresh);
  return !c->failed;
}

void prog_check_halt(GsCheckRun *cr) {
  if (!cr || !cr->started || cr->halted) return;
  if (cr->attached) run_hand_over(cr);
  pthread_mutex_lock(&cr->mu);
  cr->done = 1;
  pthread_cond_signal(&cr->cv);
  pthread_mutex_unlock(&cr->mu);
  pthread_join(cr->th, NULL);
  cr->halted = 1;
  GsProgram *p = cr->attached;
  if (p) { /* every instruction is encoded: prog_emit encodes them again */
    p->run = NULL;
    for (int qi = 0; qi < p->nqueues; qi++) p->queues[qi].run = NULL;
  }
}

int prog_check_end(GsCheckRun *cr, const GsProgram *p, GsDiag *d, const char *file) {
  prog_check_halt(cr);
  int rc = 0;
  if (p) {
    int clean = cr->started && cr->checking && run_rest(cr, p);
    rc = clean ? 0 : prog_check(p, cr->c.a, d, file);
  }
  for (int i = 0; i < cr->rqcap; i++) free(cr->rq[i].cur);
  free(cr->rq);
  free(cr->snap);
  free(cr->pub);
  free(cr->places);
  free(cr->ring);
  pthread_cond_destroy(&cr->cv);
  pthread_cond_destroy(&cr->cv_room);
  pthread_mutex_destroy(&cr->mu);
  free(cr);
  return rc;
}
