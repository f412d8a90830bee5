/* prog.h — a Program: per-queue instruction streams, the contract between sched/ and sim/.
 *
 * Queues. Every core has queues 0 = dma_in, 1 = dma_out, and 2 + i for the i-th unit of its
 * core kind (GsCoreKind.unit[i]); every cluster has one DMA queue per cluster DMA engine
 * (core = -1). All queues run concurrently, each in order.
 * Assembly names: `c0.k3.dma_in`, `c0.k3.dma_out`, `c0.k3.<unit name>`, `c0.dma1`.
 *
 * Encodings: .gtp (binary, zlib, versioned header) and .gtasm (text); both are defined by
 * isa.def and described in docs/isa.md.
 */
#ifndef GS_PROG_H
#define GS_PROG_H

#include <stdint.h>
#include <stdio.h>

#include "arch.h"
#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { E_ANY, E_DMA, E_MATRIX, E_VECTOR, E_SCALAR } GsEngine;

typedef enum {
#define ISA(e, m, eng, d) e,
#include "isa.def"
  I_COUNT
} GsOpcode;

/* The opcodes again, named by mnemonic (ISA_OP_mov == I_MOV): isa.def's operand lines name
 * their opcode by mnemonic. */
enum {
#define ISA(e, m, eng, d) ISA_OP_##m = e,
#include "isa.def"
};

typedef enum {
#define VOP(e, n, in, s, m, d, t, r, desc) e,
#include "isa.def"
  V_COUNT
} GsVop;

typedef enum { LVL_DDR, LVL_GB, LVL_LB } GsLevel;
typedef enum { SCOPE_CLUSTER, SCOPE_CHIP } GsScope;
enum { Q_DMA_IN = 0, Q_DMA_OUT = 1, Q_UNIT0 = 2 };
enum { GS_INST_NUM = 10 };

typedef struct {
  uint8_t op;     /* GsOpcode */
  uint8_t sub;    /* level / vop / queue / scope, by opcode */
  uint8_t dtype;  /* GsDtype */
  uint8_t flags;
  uint32_t r[3];  /* regions: r0 written, r1 r2 read */
  uint32_t t[3];  /* tiles: t0 left in r0, t1 t2 expected in r1 r2 */
  /* Synchronisation any instruction may carry (the `wait=`, `wait2=`, `signal=`,
   * `signal_flag=`, `signal2=`, `signal2_flag=` operands): wait is 1 + a flag of this queue
   * waited on before the instruction starts, as a `wait` before it would; wait2 (only with
   * wait) 1 + a flag waited on after that one, as a second `wait`; signal is 1 + a queue of
   * the same core whose flag signal_flag is incremented once the instruction has completed,
   * as a `signal` after it would; signal2 (only with signal) 1 + a queue whose flag
   * signal2_flag is incremented after that, as a second `signal`; 0: none. The six bytes
   * from wait on are one slot of the encoding (prog_code.c); `reserved` is always 0. */
  uint8_t wait, signal, signal_flag, wait2, signal2, signal2_flag;
  uint8_t reserved[6];
  int64_t n[GS_INST_NUM];
} GsInst;

/* A queue's instructions are held encoded (prog_code.c, about 4 bytes an instruction instead
 * of sizeof(GsInst)); prog_emit appends one, a GsCursor reads them in order. */
typedef struct GsQueueCode GsQueueCode;
typedef struct GsCheckRun GsCheckRun;
typedef struct GsQueueCopies GsQueueCopies;
typedef struct GsIdMap GsIdMap;
typedef struct {
  int cluster;
  int core;       /* -1: a cluster DMA queue */
  int index;      /* queue index in the core, or the cluster DMA engine */
  int64_t ninsts; /* instructions in the queue */
  GsQueueCode *code;  /* heap, prog_code.c; NULL while the queue is empty (but for a queue
                         an attached check's thread encodes: prog_queue_code_begin) */
  GsCheckRun *run;    /* while the program is attached to a check's thread: set on the
                         queues whose instructions that thread encodes and checks
                         (prog_check_takes) */
  int64_t ncopied;    /* of ninsts, those in runs copied from another queue (prog_copy.c);
                         the others are the queue's own, held in code */
  GsQueueCopies *copies; /* heap, the runs (prog_copy.c); NULL while there are none */
} GsQueue;

/* Whether an attached check's thread (prog_check_attach) takes queue qi of the program, the
 * index in the order the queues were made: two queues of every three. It checks the ones it
 * encodes as it encodes them, where it must decode the others to check them, so with half the
 * queues it had work to spare (docs/speed.md, "Scheduling"). */
static inline int prog_check_takes(int qi) { return qi % 3 != 0; }

/* Names of ids, for messages and assembly: most ids (a scheduler's tiles) have none, so the
 * map holds only the named ones (open addressing on the id; prog.c). */
typedef struct {
  uint32_t *ids;        /* [cap], id + 1 (0: empty slot) */
  char **names;         /* [cap] */
  size_t cap, n;
} GsNameMap;

typedef struct {
  int nqueues;
  GsQueue *queues;      /* heap; prog_free releases */
  uint32_t nregions;    /* region ids are 1..nregions-1 (0 = none) */
  uint32_t ntiles;      /* tile ids are 1..ntiles-1 (0 = none) */
  GsNameMap names[2];   /* optional names of [0] regions, [1] tiles: prog_name */
  GsCheckRun *run;      /* the check the program is attached to (prog_check_attach) */
  GsIdMap **maps;       /* heap, each map of the copied runs (prog_new_map) */
  int nmaps, mapscap;
} GsProgram;

/* Static facts from isa.def. */
const char *isa_mnemonic(GsOpcode op);
GsEngine isa_engine(GsOpcode op);
const char *isa_vop_name(GsVop v);
int isa_vop_inputs(GsVop v);
/* 1 when the op works over groups or windows of `param` elements (param must be >= 1). */
int isa_vop_needs_param(GsVop v);
int isa_vop_passes(GsVop v, GsVClass c);
/* 1 when `elems` of vector op v with this param counts elements of `a` read again (pooling
 * windows, dot products of pairs, a window param given to an op without groups): then the
 * instruction must name a's extent in a_elems. */
int isa_vop_windowed(GsVop v, int64_t param);
/* Elements of the result of vector op v over elems inputs: one per group or window of param
 * for the reductions, dot, pooling and an op given a window (a depthwise conv's multiply-
 * accumulate over its taps), else elems. */
int64_t isa_vop_out_elems(GsVop v, int64_t elems, int64_t param);
/* Bytes of one operand element of a gemm or vec as stored: elem_bytes, else its dtype's size
 * (other opcodes: the dtype's size). */
int64_t isa_elem_bytes(const GsInst *in);
/* How many times a gemm runs (its reps, 0 read as 1); 1 for any other opcode. */
int64_t isa_gemm_reps(const GsInst *in);

/* Building programs (schedulers) */
GsProgram *prog_new(void);
void prog_free(GsProgram *p);
/* Queue for (cluster, core, index); created on first use. core = -1: cluster DMA engine.
 * Creating a queue may move p->queues: a GsQueue* from an earlier call is valid only until
 * the next call that creates a queue (create every queue first, or look it up again). */
GsQueue *prog_queue(GsProgram *p, int cluster, int core, int index);
/* Appends a zeroed instruction and returns it to be filled in; the pointer is valid until the
 * next prog_emit on the same queue (then the instruction is encoded and can only be read
 * back through a cursor). */
GsInst *prog_emit(GsQueue *q);
/* The queue's code made, empty, if it has none (prog_emit does it on first use; a queue an
 * attached check's thread encodes has it from its creation: the thread finds it in the copy of
 * the queue it was handed, prog_check.c). */
void prog_queue_code_begin(GsQueue *q);
/* Reading a queue in order: prog_cursor_init, then prog_cursor_next until it returns NULL.
 * The returned instruction lives in the cursor until the next call. A cursor keeps the
 * decoder's prediction state (prog_code.c), a few KiB: allocate it once per queue. */
enum { GS_CODE_SLOTS = 20, GS_CODE_ROWS = 16, GS_CODE_INDEX = 64 };
typedef struct {     /* one stream of similar instructions: its last values and strides */
  uint64_t last[GS_CODE_SLOTS], stride[GS_CODE_SLOTS], lastd[GS_CODE_SLOTS];
  int op;            /* the opcode it last held, -1: unused */
  uint32_t moving;   /* slots whose stride or last difference is not zero */
  GsInst inst;       /* decoder: the last values as an instruction */
} GsCodeRow;
typedef struct {     /* encoder: what it matches a row by, apart from the rows (a scan of 16 */
  uint32_t r0[GS_CODE_ROWS], r1[GS_CODE_ROWS], r2[GS_CODE_ROWS]; /* rows 584 bytes apart */
  uint32_t op[GS_CODE_ROWS];   /* missed the cache on every instruction), a field of every */
  uint32_t sub[GS_CODE_ROWS];  /* row side by side (the scan compares the 16 at once); op as */
  uint32_t used[GS_CODE_ROWS]; /* GsCodeRow.op (none: UINT32_MAX); used: when last chosen */
} GsCodeKeys;
typedef struct {
  GsCodeRow row[GS_CODE_ROWS];
  GsCodeKeys key;  /* encoder: each row's opcode, regions and sub after its last use */
  int8_t recent[16];   /* per opcode (15: every other one), the row it last used, -1: none */
  int8_t mru;          /* encoder: the row chosen last */
  int8_t index[GS_CODE_INDEX]; /* encoder: by a hash of opcode, regions and sub, the row
                                * given that key last, -1: none (prog_code.c hist_choose) */
  uint32_t clock;
} GsCodeHist;
typedef struct GsCodeBlock GsCodeBlock;
typedef struct GsCursor {
  const GsQueue *q;
  const GsCodeBlock *blk;
  uint32_t pos;
  int64_t i;          /* instructions returned so far: the last one's index is i - 1 */
  GsCodeHist hist;
  const GsInst *at;   /* the instruction returned last (in a row of hist, or in) */
  GsInst in;          /* the staged instruction, or a copied one, when it was the last */
  int64_t own;        /* of i, the queue's own instructions (the others were copied) */
  int own_only;       /* prog_cursor_init_own */
  int run;            /* the copied run i is in or before (prog_copy.c) */
  struct GsCursor *src; /* heap: reads the runs' source (prog_cursor_release frees it) */
} GsCursor;
void prog_cursor_init(GsCursor *c, const GsQueue *q);
const GsInst *prog_cursor_next(GsCursor *c);
/* A cursor over the queue's own instructions only, its copied runs left out: the static
 * checks', which check a run by its map (prog_copy.c). */
void prog_cursor_init_own(GsCursor *c, const GsQueue *q);
/* Frees what a cursor took to read copied runs (nothing for a queue without them); the
 * cursor may then be initialised again. A zeroed cursor may be released. */
void prog_cursor_release(GsCursor *c);
/* The next encoded instruction of a queue another thread may still be emitting into, which
 * the caller knows is there (it was told, through a lock, that the queue held more than
 * c->i + 1 instructions); never the staged last one. c->q is not read. */
const GsInst *prog_cursor_next_encoded(GsCursor *c);
/* The queue's last instruction, which is held staged, not encoded (prog_emit); NULL when the
 * queue is empty. */
const GsInst *prog_queue_staged(const GsQueue *q);
/* The whole queue decoded into a new array of q->ninsts instructions (caller frees): for
 * tests and tools that index instructions; the simulator and writers use cursors. */
GsInst *prog_queue_array(const GsQueue *q);
/* Releases a queue's instructions (the queue is then empty); prog_free does it for all. */
void prog_queue_code_free(GsQueue *q);
/* A queue's records as a .gtp file of version 5 stores them (gtp.c; docs/isa.md): export calls
 * put (when not NULL) with each piece in order, the staged instruction's record last (encoded
 * on a copy of the encoder's state: q does not change), and returns the bytes; import appends
 * to q the n instructions whose records are exactly s[0..len), checking every byte and handing
 * each instruction to accept first, and returns 0; -1 with *bad the index of the first
 * malformed record (n: bytes are left over); -2 with *bad the instruction accept refused.
 * Into an empty queue import keeps the records as they are (no encoding: export then gives
 * them back byte for byte), and leaves the queue empty when it fails. */
uint64_t prog_code_export(const GsQueue *q, void (*put)(void *ctx, const void *b, size_t n),
                          void *ctx);
int prog_code_import(GsQueue *q, const unsigned char *s, size_t len, uint64_t n,
                     int (*accept)(void *ctx, const GsInst *in, uint64_t i), void *ctx,
                     uint64_t *bad);
/* Bytes of memory the program's encoded instructions take (blocks and encoder state, the
 * copied runs and their maps). */
size_t prog_code_bytes(const GsProgram *p);

/* Copied runs (prog_copy.c). A queue may hold, among its own instructions, runs copied from
 * another queue of the same core and index in another cluster: instructions [from, from + n)
 * of that queue with their ids moved by a map. Every reader sees the copies as instructions
 * (cursors, writers, the simulator); only the static checks tell them apart, checking a run
 * by its map. A map moves an id of a span [lo, hi) by delta, and for a region also every
 * offset into it by shift (a mov's dst_off and src_off, a vec's dst_off); ids in no span stay;
 * a copied alloc names the map's cluster. Spans are sorted by lo and do not overlap. */
typedef struct {
  uint32_t lo, hi;
  int64_t delta, shift;
} GsIdSpan;
struct GsIdMap {
  int cluster;
  int nregs, ntiles;
  GsIdSpan *regs, *tiles;  /* heap */
};
/* A run: the queue's instructions [at, at + n) are queue src_qi's [from, from + n) under map. */
typedef struct {
  int64_t at, n, from;
  int src_qi;
  const GsQueueCode *src;  /* src_qi's code (a queue's place may move; its code does not) */
  const GsIdMap *map;
} GsCopyRun;
struct GsQueueCopies {
  int n, cap;
  GsCopyRun *run;  /* heap, in queue order */
};
/* Each instruction of run r, under its map, in order, with its index in the source. */
void prog_copy_each(const GsCopyRun *r, void (*f)(void *ctx, const GsInst *in, int64_t i),
                    void *ctx);
/* A map the program keeps (copies of the spans). */
const GsIdMap *prog_new_map(GsProgram *p, int cluster, const GsIdSpan *regs, int nregs,
                            const GsIdSpan *tiles, int ntiles);
/* Appends to queue qi instructions [from, from + n) of queue src_qi under m. src_qi must have
 * them (it is emitted first), hold no runs itself, and be the source of every run of qi;
 * runs take its instructions in order (from at or after the last run's end). The copies are
 * read when read (a cursor), so the source's last instruction may still change (prog_emit). */
void prog_copy_run(GsProgram *p, int qi, int src_qi, int64_t from, int64_t n, const GsIdMap *m);
/* in under m, in place. */
void prog_map_apply(const GsIdMap *m, GsInst *in);
/* A queue's own instructions (not copied). */
static inline int64_t prog_queue_own(const GsQueue *q) { return q->ninsts - q->ncopied; }
/* Memory the copied runs and maps take. */
size_t prog_copy_bytes(const GsProgram *p);
/* Between prog_code.c and prog_copy.c: a cursor's next own instruction; reading a run's
 * source, instruction idx of code (idx at or after the last one read) into s, set up with
 * prog_code_read_begin; a queue's runs released. */
const GsInst *prog_cursor_own_next(GsCursor *c);
void prog_code_read_begin(GsCursor *s, const GsQueueCode *code);
const GsInst *prog_code_read(GsCursor *s, const GsQueueCode *code, int64_t idx);
void prog_copy_free(GsProgram *p);

/* How much the later clusters repeat cluster 0 (prog_repeat.c): of the program's `insts`
 * instructions, `later` are in queues of clusters 1, 2, ..., and `covered` of those lie in
 * `runs` runs of at least GS_REPEAT_MIN that are, in order, a run of cluster 0's queue of the
 * same core and index under one map of regions, one of tiles and a shift of the offsets into
 * each region; a run's start is sought at the next GS_REPEAT_TRIES instructions of cluster 0's
 * queue of its shape. What segments over cluster 0's records could cover. */
enum { GS_REPEAT_MIN = 8, GS_REPEAT_TRIES = 8 };
typedef struct {
  int64_t insts, later, covered, runs;
} GsRepeats;
GsRepeats prog_repeats(const GsProgram *p);
/* Between prog_emit and an attached check's thread (prog_check_attach): prog_emit hands a
 * finished instruction of queue q (of the attached program) to prog_check_put, and the thread
 * encodes it into q's code with prog_code_append, in the order they were handed over. */
void prog_check_put(GsCheckRun *cr, const GsQueue *q, const GsInst *in);
void prog_code_append(GsQueueCode *c, const GsInst *in);
/* Instructions of q encoded so far (a checker on another thread reads no further). */
int64_t prog_queue_encoded(const GsQueue *q);
uint32_t prog_new_region(GsProgram *p, const char *name);
uint32_t prog_new_tile(GsProgram *p, const char *name);

/* Queue name as in assembly, e.g. "c0.k3.mme"; buf of at least 64 bytes. */
const char *gtasm_queue_name(const GsArch *a, const GsQueue *q, char *buf, size_t n);
/* One instruction as assembly text (no newline). */
void gtasm_inst_format(const GsArch *a, const GsProgram *p, const GsInst *in, char *buf, size_t n);

/* Files. Loaders report `file:line:col: error:` (gtasm) or `file: error:` (gtp) to d and
 * return NULL on bad input. Writers go through a temporary name and rename. */
GsProgram *gtasm_parse(const char *path, const char *text, const GsArch *a, GsDiag *d);
int gtasm_write(FILE *out, const GsArch *a, const GsProgram *p);
GsProgram *gtp_read(const char *path, GsDiag *d);
int gtp_write(const char *path, const GsProgram *p);
/* Static checks against an arch: queues, units, cores and clusters exist; engines match.
 * A program of PROG_CHECK_SPLIT_MIN instructions or more is checked in two halves at once (a
 * thread costs tens of microseconds; a million instructions, tens of milliseconds); the
 * messages are the same. */
enum { PROG_CHECK_SPLIT_MIN = 1 << 20 };
int prog_check(const GsProgram *p, const GsArch *a, GsDiag *d, const char *file);
/* The same checks while the program is still being emitted, on a thread of their own:
 *   GsCheckRun *cr = prog_check_begin(a);
 *   prog_check_attach(cr, p);                 optional: that thread encodes p's instructions too
 *   ... prog_check_publish(cr, p) whenever p's emitted instructions may be read ...
 *   int rc = prog_check_end(cr, p, d, file);   returns what prog_check returns, with its
 *                                             messages (p NULL: no program; 0), and frees cr
 * Between publications the emitting thread may append to p (new queues, regions, tiles and
 * instructions) but not change what it emitted before them, its staged last instructions
 * aside (prog_emit). The thread checks quietly; prog_check_end checks what is left, and when
 * anything failed runs prog_check on the whole program, so the messages are one pass's.
 * Attached, prog_emit hands each instruction it finishes on the queues of p the thread takes
 * (prog_check_takes) to the thread, which encodes it, in the queue's order, into the bytes
 * prog_emit would have made, and checks it.
 * No one may read p's instructions (a cursor, a writer, the byte count) until prog_check_halt
 * or prog_check_end has been called: they wait for the last of them to be encoded and detach
 * p, which must not be freed before. */
GsCheckRun *prog_check_begin(const GsArch *a);
void prog_check_attach(GsCheckRun *cr, GsProgram *p);
void prog_check_publish(GsCheckRun *cr, const GsProgram *p);
/* Stops the thread (after it has encoded every instruction handed to it): the program it reads
 * may be freed after this (prog_check_end then only with p NULL). */
void prog_check_halt(GsCheckRun *cr);
int prog_check_end(GsCheckRun *cr, const GsProgram *p, GsDiag *d, const char *file);

/* ---- Additions (isa helper) ---- */
const char *isa_description(GsOpcode op);
const char *isa_vop_description(GsVop v);
const char *isa_engine_name(GsEngine e);   /* "any", "dma", "matrix", "vector", "scalar" */
const char *isa_level_name(GsLevel l);     /* "ddr", "gb", "lb" */
const char *isa_scope_name(GsScope s);     /* "cluster", "chip" */
enum { GS_LEVEL_COUNT = 3, GS_SCOPE_COUNT = 2 };

/* The operands of an opcode, in assembly order, from isa.def's operand lines: assembly name,
 * the GsInst field it lives in, and what its values mean. */
typedef enum {
  OPF_REGION,  /* r[index] */
  OPF_TILE,    /* t[index] */
  OPF_NUM,     /* n[index] */
  OPF_SUB,     /* sub: a level, vop, queue or scope (see GsOperandKind) */
  OPF_DTYPE,   /* dtype */
  OPF_FLAGS,   /* flags */
  OPF_WAIT,    /* wait (1 + the flag) */
  OPF_SIGNAL,  /* signal (1 + the queue) */
  OPF_SIGNAL_FLAG, /* signal_flag */
  OPF_WAIT2,   /* wait2 (1 + the flag) */
  OPF_SIGNAL2, /* signal2 (1 + the queue) */
  OPF_SIGNAL2_FLAG /* signal2_flag */
} GsOperandField;
/* OPK_SYNC_FLAG and OPK_SYNC_QUEUE are a flag and a queue of the same core stored + 1 (0:
 * none); assembly writes the flag or queue itself. */
typedef enum { OPK_INT, OPK_REGION, OPK_TILE, OPK_LEVEL, OPK_VOP, OPK_QUEUE, OPK_SCOPE,
               OPK_DTYPE, OPK_SYNC_FLAG, OPK_SYNC_QUEUE } GsOperandKind;
typedef struct {
  const char *name;      /* as written in assembly, e.g. "dst_tile" */
  GsOperandField field;
  int index;             /* for r/t/n */
  GsOperandKind kind;
} GsOperand;
int isa_operand_count(GsOpcode op);
const GsOperand *isa_operand(GsOpcode op, int i);
/* The operands every opcode takes besides its own (wait, wait2, signal, signal_flag, signal2,
 * signal2_flag): i < GS_SYNC_OPERANDS. */
enum { GS_SYNC_OPERANDS = 6, GS_SYNC_FLAG_MAX = 254 };
const GsOperand *isa_sync_operand(int i);
void isa_inst_set(GsInst *in, const GsOperand *o, int64_t v);
/* A field by kind and index (r/t/n), whatever the opcode: for code that walks every field
 * (encoders, the unused-field check). Code about one opcode uses isa_ops.h's accessors.
 * Inline: the static checks read every operand of millions of instructions. */
static inline int64_t isa_inst_field(const GsInst *in, GsOperandField f, int index) {
  switch (f) {
  case OPF_REGION: return in->r[index];
  case OPF_TILE: return in->t[index];
  case OPF_NUM: return in->n[index];
  case OPF_SUB: return in->sub;
  case OPF_DTYPE: return in->dtype;
  case OPF_FLAGS: return in->flags;
  case OPF_WAIT: return in->wait;
  case OPF_SIGNAL: return in->signal;
  case OPF_SIGNAL_FLAG: return in->signal_flag;
  case OPF_WAIT2: return in->wait2;
  case OPF_SIGNAL2: return in->signal2;
  case OPF_SIGNAL2_FLAG: return in->signal2_flag;
  }
  die("bad operand field %d", (int)f);
}
static inline int64_t isa_inst_get(const GsInst *in, const GsOperand *o) {
  return isa_inst_field(in, o->field, o->index);
}
/* The synchronisation an instruction carries as one number: wait | signal << 8 | signal_flag
 * << 16 | wait2 << 24 | signal2 << 32 | signal2_flag << 40, its bytes' order in GsInst (the
 * encoding's sync slot, prog_code.c; the comparisons of prog_repeat.c). */
static inline uint64_t isa_inst_sync(const GsInst *in) {
  return (uint64_t)in->wait | (uint64_t)in->signal << 8 | (uint64_t)in->signal_flag << 16 |
         (uint64_t)in->wait2 << 24 | (uint64_t)in->signal2 << 32 | (uint64_t)in->signal2_flag << 40;
}
void isa_inst_set_field(GsInst *in, GsOperandField f, int index, int64_t v);

/* A queue's index in p->queues for (cluster, core, index), or -1; never creates one. */
int prog_find_queue(const GsProgram *p, int cluster, int core, int index);
/* Total instructions over all queues. */
int64_t prog_ninsts(const GsProgram *p);
/* Load a program by extension: .gtasm (text, needs a for unit names; may be NULL when only
 * numeric queue names are used) or .gtp (binary). Errors to d; NULL on bad input. */
GsProgram *prog_load(const char *path, const GsArch *a, GsDiag *d);
/* Save by extension (.gtp or .gtasm) through util_write_file_atomic; 0 ok, -1 with errno. */
int prog_save(const char *path, const GsArch *a, const GsProgram *p);

/* Every integer operand is at most GS_OPERAND_MAX (2^40), and so are a gemm's m·n·k and the
 * last byte a mov's pattern reaches on either side (prog_check): with the config ranges that
 * keeps every timing formula exact in 64 bits (docs/isa.md, "Static checks"). */
#define GS_OPERAND_MAX ((int64_t)1 << 40)
/* Region and tile counts above GS_MAX_IDS are rejected by the readers (bounds the names arrays). */
enum { GS_MAX_IDS = 1 << 26 };
/* Region and tile names are at most GS_MAX_NAME bytes (the assembler rejects longer ones). */
enum { GS_MAX_NAME = 65535 };
/* .gtp: the format version gtp_write writes (gtp_read also reads versions 1 and 2, whose
 * instructions are fixed words: version 1 before instructions carried synchronisation; and
 * versions 3 and 4, version 5's records before the sync slot's byte 3 became wait2 (4) and
 * its bytes 4 and 5 signal2 and signal2_flag (5));
 * fixed sizes of the header, a queue table entry (versions 1-2 and 3) and an instruction word
 * (versions 1-2) (docs/isa.md). */
enum {
  GTP_VERSION = 5, GTP_HEADER_BYTES = 48, GTP_QUEUE_BYTES = 16, GTP_QUEUE3_BYTES = 24,
  GTP_INST_BYTES = 112
};
/* docs/isa.md, generated from isa.def (`gtsim --isa-doc`). */
void isa_write_doc(FILE *out);
/* Pieces of that document owned by the format modules. */
void gtp_write_layout_doc(FILE *out);
void gtasm_write_grammar_doc(FILE *out);
/* Queue facts against an arch (prog_check.c), shared by the assembler and prog_check.
 * Each returns 1 if fine, else 0 with the reason in why. a may be NULL: then only the
 * queue's shape is checked (a cluster DMA queue or a core's dma_in/dma_out vs a unit queue). */
int prog_queue_exists(const GsArch *a, int cluster, int core, int index, char *why, size_t n);
/* Why a cluster DMA queue may not signal, wait or carry either (the assembler and prog_check). */
extern const char prog_no_flags_msg[];
int prog_queue_accepts(const GsArch *a, int core, int index, GsOpcode op, char *why, size_t n);
/* The core kind of core `core` of a cluster (cores numbered kind by kind), or NULL. */
const GsCoreKind *prog_core_kind(const GsArch *a, int core);
/* Make ids < nregions / < ntiles valid (counts only grow; new names are NULL). */
void prog_reserve_ids(GsProgram *p, uint32_t nregions, uint32_t ntiles);
/* Give id its name (replacing any; NULL removes it); the id must be valid. */
void prog_set_name(GsProgram *p, int is_tile, uint32_t id, const char *name);
/* The name of region (is_tile = 0) or tile id, or NULL. */
const char *prog_name(const GsProgram *p, int is_tile, uint32_t id);

#ifdef __cplusplus
}
#endif

#include "isa_ops.h"
#endif
