/* prog.h — a Program: per-queue instruction streams, the contract between sched/ and sim/.
 *
 * Queues. Every core has queues 0 = dma_in, 1 = dma_out, and 2 + i for the i-th unit of its
 * core kind (GtCoreKind.unit[i]); every cluster has one DMA queue per cluster DMA engine
 * (core = -1). All queues run concurrently, each in order.
 * Assembly names: `c0.k3.dma_in`, `c0.k3.dma_out`, `c0.k3.<unit name>`, `c0.dma1`.
 *
 * Encodings: .gtp (binary, zlib, versioned header) and .gtasm (text); both are defined by
 * isa.def and described in docs/isa.md.
 */
#ifndef GT_PROG_H
#define GT_PROG_H

#include <stdint.h>
#include <stdio.h>

#include "arch.h"
#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { E_ANY, E_DMA, E_MATRIX, E_VECTOR, E_SCALAR } GtEngine;

typedef enum {
#define ISA(e, m, eng, d) e,
#include "isa.def"
  I_COUNT
} GtOpcode;

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
} GtVop;

typedef enum { LVL_DDR, LVL_GB, LVL_LB } GtLevel;
typedef enum { SCOPE_CLUSTER, SCOPE_CHIP } GtScope;
enum { Q_DMA_IN = 0, Q_DMA_OUT = 1, Q_UNIT0 = 2 };
enum { GT_INST_NUM = 10 };

typedef struct {
  uint8_t op;     /* GtOpcode */
  uint8_t sub;    /* level / vop / queue / scope, by opcode */
  uint8_t dtype;  /* GtDtype */
  uint8_t flags;
  uint32_t r[3];  /* regions: r0 written, r1 r2 read */
  uint32_t t[3];  /* tiles: t0 left in r0, t1 t2 expected in r1 r2 */
  int64_t n[GT_INST_NUM];
} GtInst;

typedef struct {
  int cluster;
  int core;       /* -1: a cluster DMA queue */
  int index;      /* queue index in the core, or the cluster DMA engine */
  GtVec insts;    /* GtInst */
} GtQueue;

typedef struct {
  int nqueues;
  GtQueue *queues;      /* heap; program_free releases */
  uint32_t nregions;    /* region ids are 1..nregions-1 (0 = none) */
  uint32_t ntiles;      /* tile ids are 1..ntiles-1 (0 = none) */
  char **tile_names;    /* optional, [ntiles], for messages; NULL entries allowed */
  char **region_names;  /* optional, [nregions] */
} GtProgram;

/* Static facts from isa.def. */
const char *isa_mnemonic(GtOpcode op);
GtEngine isa_engine(GtOpcode op);
const char *vop_name(GtVop v);
int vop_inputs(GtVop v);
/* 1 when the op works over groups or windows of `param` elements (param must be >= 1). */
int vop_needs_param(GtVop v);
int vop_passes(GtVop v, GtVClass c);

/* Building programs (schedulers) */
GtProgram *program_new(void);
void program_free(GtProgram *p);
/* Queue for (cluster, core, index); created on first use. core = -1: cluster DMA engine.
 * Creating a queue may move p->queues: a GtQueue* from an earlier call is valid only until
 * the next call that creates a queue (create every queue first, or look it up again). */
GtQueue *program_queue(GtProgram *p, int cluster, int core, int index);
GtInst *program_emit(GtQueue *q);  /* appends a zeroed instruction */
uint32_t program_new_region(GtProgram *p, const char *name);
uint32_t program_new_tile(GtProgram *p, const char *name);

/* Queue name as in assembly, e.g. "c0.k3.mme"; buf of at least 64 bytes. */
const char *program_queue_name(const GtArch *a, const GtQueue *q, char *buf, size_t n);
/* One instruction as assembly text (no newline). */
void inst_format(const GtArch *a, const GtProgram *p, const GtInst *in, char *buf, size_t n);

/* Files. Loaders report `file:line:col: error:` (gtasm) or `file: error:` (gtp) to d and
 * return NULL on bad input. Writers go through a temporary name and rename. */
GtProgram *gtasm_parse(const char *path, const char *text, const GtArch *a, GtDiag *d);
int gtasm_write(FILE *out, const GtArch *a, const GtProgram *p);
GtProgram *gtp_read(const char *path, GtDiag *d);
int gtp_write(const char *path, const GtProgram *p);
/* Static checks against an arch: queues, units, cores and clusters exist; engines match. */
int program_check(const GtProgram *p, const GtArch *a, GtDiag *d, const char *file);

/* ---- Additions (isa helper, issue 4) ---- */
const char *isa_description(GtOpcode op);
const char *vop_description(GtVop v);
const char *isa_engine_name(GtEngine e);   /* "any", "dma", "matrix", "vector", "scalar" */
const char *level_name(GtLevel l);         /* "ddr", "gb", "lb" */
const char *scope_name(GtScope s);         /* "cluster", "chip" */
enum { GT_LEVEL_COUNT = 3, GT_SCOPE_COUNT = 2 };

/* The operands of an opcode, in assembly order, from isa.def's operand lines: assembly name,
 * the GtInst field it lives in, and what its values mean. */
typedef enum {
  OPF_REGION,  /* r[index] */
  OPF_TILE,    /* t[index] */
  OPF_NUM,     /* n[index] */
  OPF_SUB,     /* sub: a level, vop, queue or scope (see GtOperandKind) */
  OPF_DTYPE,   /* dtype */
  OPF_FLAGS    /* flags */
} GtOperandField;
typedef enum { OPK_INT, OPK_REGION, OPK_TILE, OPK_LEVEL, OPK_VOP, OPK_QUEUE, OPK_SCOPE,
               OPK_DTYPE } GtOperandKind;
typedef struct {
  const char *name;      /* as written in assembly, e.g. "dst_tile" */
  GtOperandField field;
  int index;             /* for r/t/n */
  GtOperandKind kind;
} GtOperand;
int isa_operand_count(GtOpcode op);
const GtOperand *isa_operand(GtOpcode op, int i);
int64_t inst_get(const GtInst *in, const GtOperand *o);
void inst_set(GtInst *in, const GtOperand *o, int64_t v);
/* A field by kind and index (r/t/n), whatever the opcode: for code that walks every field
 * (encoders, the unused-field check). Code about one opcode uses isa_ops.h's accessors. */
int64_t inst_field(const GtInst *in, GtOperandField f, int index);
void inst_set_field(GtInst *in, GtOperandField f, int index, int64_t v);

/* A queue's index in p->queues for (cluster, core, index), or -1; never creates one. */
int program_find_queue(const GtProgram *p, int cluster, int core, int index);
/* Total instructions over all queues. */
int64_t program_ninsts(const GtProgram *p);
/* Load a program by extension: .gtasm (text, needs a for unit names; may be NULL when only
 * numeric queue names are used) or .gtp (binary). Errors to d; NULL on bad input. */
GtProgram *program_load(const char *path, const GtArch *a, GtDiag *d);
/* Save by extension (.gtp or .gtasm) through write_file_atomic; 0 ok, -1 with errno. */
int program_save(const char *path, const GtArch *a, const GtProgram *p);

/* Region and tile counts above GT_MAX_IDS are rejected by the readers (bounds the names arrays). */
enum { GT_MAX_IDS = 1 << 26 };
/* Region and tile names are at most GT_MAX_NAME bytes (the assembler rejects longer ones). */
enum { GT_MAX_NAME = 65535 };
/* .gtp: the format version gtp_write writes and the only one gtp_read accepts; fixed sizes
 * of the header, a queue table entry and an instruction word (docs/isa.md). */
enum { GTP_VERSION = 1, GTP_HEADER_BYTES = 48, GTP_QUEUE_BYTES = 16, GTP_INST_BYTES = 112 };
/* docs/isa.md, generated from isa.def (`gtsim --isa-doc`). */
void isa_write_doc(FILE *out);
/* Pieces of that document owned by the format modules. */
void gtp_write_layout_doc(FILE *out);
void gtasm_write_grammar_doc(FILE *out);
/* Queue facts against an arch (prog_check.c), shared by the assembler and program_check.
 * Each returns 1 if fine, else 0 with the reason in why. a may be NULL: then only the
 * queue's shape is checked (a cluster DMA queue or a core's dma_in/dma_out vs a unit queue). */
int queue_exists(const GtArch *a, int cluster, int core, int index, char *why, size_t n);
int queue_accepts(const GtArch *a, int core, int index, GtOpcode op, char *why, size_t n);
/* The core kind of core `core` of a cluster (cores numbered kind by kind), or NULL. */
const GtCoreKind *prog_core_kind(const GtArch *a, int core);
/* Make ids < nregions / < ntiles valid (counts only grow; new names are NULL). */
void program_reserve_ids(GtProgram *p, uint32_t nregions, uint32_t ntiles);
/* Give id its name (replacing any); the id must be valid. */
void program_set_name(GtProgram *p, int is_tile, uint32_t id, const char *name);

#ifdef __cplusplus
}
#endif

#include "isa_ops.h"
#endif
