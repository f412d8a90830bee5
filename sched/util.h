/* util.h — the few things every module of gtsim shares.
 *
 * Module map of sched/ (the C11 library; no SystemC here):
 *   util.[ch]         arena, growable arrays, die(), diagnostics, atomic file output, JSON strings
 *   arch.[ch]         architecture config: dtypes, INI parsing (libinih), checks, derived figures
 *   arch_schema.h     the config schema table shared by arch.c and arch_report.c
 *   arch_report.c     --describe (text, JSON) and docs/config.md, from the schema table
 *   graph.[ch]        graph IR: tensors and ops as arrays with integer ids (graph_priv.h inside)
 *   graph_infer.c     batch binding and shape inference
 *   graph_cost.c      MACs, FLOPs, parameters, activation bytes; the largest live activation
 *   graph_stats.c     --stats as text, JSON or CSV
 *   gtg_*.c           the .gtg text format: attribute table, parser and writer
 *   onnx_*.c          ONNX import through protobuf-c (onnx_imp.h inside)
 *   model.c           model_load(): .gtg or .onnx by the file's extension
 *   isa.def           the instruction table (X-macro)
 *   isa_ops.h         named accessors of the integer operands, generated from isa.def
 *   isa.c             static facts from isa.def, building Programs in memory
 *   prog.h            Programs: per-queue instruction streams, the contract with sim/
 *   gtasm.c           .gtasm text: assembler, disassembler, instruction text
 *   gtp.c             .gtp binary program files
 *   prog_check.c      static checks of a Program against an arch
 *   lower.h           lowering a graph to a Program: tvm, astitch, graphturbo
 *   lower_common.c    the driver (lower_run, lower_plan): kernel grouping, units, placement
 *   lower_tvm.c       tvm grouping: a kernel per layer
 *   lower_astitch.c   astitch grouping: memory-intensive ops stitched onto their neighbours
 *   unit_timing.[ch]  the compute formulas (gemm, vector, scalar cycles): simulator and tiler
 *   lower_tiling.c    a kernel's partition over a cluster's cores, tile sizes
 *   lower_ops.c       how each op kind becomes tiles
 *   lower_emit.[ch]   the shared emitter: memory map, kernels over clusters and cores
 *   lower_tiles.c     the shared emitter: one kernel's instruction streams on one core
 *   lower_gt.c        graphturbo lowering: instances as kernels, kept tensors, spills (gt_plan)
 *   lower_emit_gt.c   graphturbo's slices as regions in the Program
 *   lower_check.c     the lowering's invariants, checked after every planning step
 *   lower_dump.c      the plan after a step as text (--dump-after STEP)
 *   ivl.[ch]          the allocator of DDR, GB and LB: first fit over blocks with lifetimes
 *                     or in program order, high-water mark
 *   gt.[ch]           GraphTurbo graph passes: data structures, pipeline, invariant checker
 *   gt_*.c            one file per GraphTurbo pass, and the schedule dump (map in gt.h)
 *   report.[ch]       the run report (text, JSON, CSV) and the --compare table
 *
 * Errors: a user error prints `file:line:col: error: msg` (plus the line and a caret when the
 * text is at hand) and exits 1; an internal bug calls die() which exits 3.
 */
#ifndef GT_UTIL_H
#define GT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GT_EXIT_OK = 0, GT_EXIT_INPUT = 1, GT_EXIT_SIM = 2, GT_EXIT_INTERNAL = 3 };

/* Internal failure: prints __FILE__:__LINE__ and exits 3. */
#define die(...) gt_die(__FILE__, __LINE__, __VA_ARGS__)
#ifdef __cplusplus /* <stdnoreturn.h> defines `noreturn` for C only */
[[noreturn]]
#else
noreturn
#endif
void gt_die(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define gt_assert(c) ((c) ? (void)0 : gt_die(__FILE__, __LINE__, "assertion failed: %s", #c))

/* ---- Arena: one per compilation; nothing inside is freed on its own. ---- */
typedef struct GtArena GtArena;
GtArena *arena_new(void);
void arena_free(GtArena *a);
void *arena_alloc(GtArena *a, size_t n);          /* zeroed, 16-byte aligned */
char *arena_strdup(GtArena *a, const char *s);
char *arena_strndup(GtArena *a, const char *s, size_t n);
char *arena_printf(GtArena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- Growable array of fixed-size elements (heap, owner frees with vec_free). ---- */
typedef struct {
  void *data;
  size_t len, cap, elem;
} GtVec;
void vec_init(GtVec *v, size_t elem);
void *vec_push(GtVec *v);                   /* returns a zeroed new slot */
void vec_free(GtVec *v);
#define VEC_AT(v, T, i) (((T *)(v)->data)[i])

/* ---- Diagnostics for user errors. ----
 * A GtDiag collects errors instead of exiting, so callers (and tests) decide. `src` may be
 * NULL; when given, the offending line is printed with a caret under `col`. */
typedef struct {
  FILE *out;            /* where messages go (stderr by default) */
  int nerrors;
  int max_errors;       /* stop reporting after this many (0 = 1) */
} GtDiag;
void diag_init(GtDiag *d);
void diag_error(GtDiag *d, const char *file, int line, int col, const char *src,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Print one line of `src` (line numbers from 1) and a caret under `col` (from 1). */
void diag_show_line(FILE *out, const char *src, int line, int col);

/* Read a whole file into a NUL-terminated heap buffer; NULL and errno on failure. */
char *read_file(const char *path, size_t *len);
/* Write `len` bytes to `path` through `path.tmp.PID` + rename, so a failure loses nothing;
 * a path that exists and is not a regular file (/dev/null, a FIFO) is written directly, never
 * replaced. Returns 0 on success, -1 with errno set. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* 1 when `path` ends in `ext` (".gtg"; case-insensitive) and has a name before it. */
int util_has_ext(const char *path, const char *ext);
/* 1 when `path` exists and is not a regular file: outputs go to it directly (no temporary). */
int util_write_in_place(const char *path);
/* `s` as a JSON string literal: quoted, `"` and `\` escaped with a backslash, bytes below 0x20
 * as \u00XX, everything else (UTF-8 included) as is. NULL prints as "". */
void util_json_str(FILE *out, const char *s);

/* Integer helpers. */
static inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

#ifdef __cplusplus
}
#endif
#endif
