/* util.h — the few things every module of gtsim shares.
 *
 * Module map of sched/ (the C11 library; no SystemC here). Every extern function and variable
 * starts with its module's prefix, given first below; types are GsName, the project's
 * constants and macros GS_NAME, header guards GS_FILE_H. GraphTurbo is the module gt_ with its
 * own Gt and GT_ (gt.h); sim/ has its map in sim/sim.h.
 *   util.[ch]         util_: arena (arena_), growable arrays (vec_), util_die() behind die(),
 *                     diagnostics (diag_), atomic file output, JSON strings
 *   arch.[ch]         arch_: architecture config: dtypes, INI parsing (libinih), checks, derived
 *                     figures, core numbering
 *   arch_schema.h     arch_: the config schema table shared by arch.c and arch_report.c
 *   arch_report.c     arch_: --describe (text, JSON) and docs/config.md, from the schema table
 *   energy.[ch]       energy_: energy from action counts and the config's [energy] figures;
 *                     --describe's energy part (docs/energy.md)
 *   graph.[ch]        graph_: graph IR: tensors and ops as arrays with integer ids (graph_priv.h
 *                     inside); reshape roots and graph outputs
 *   graph_infer.c     graph_: batch binding and shape inference
 *   graph_cost.c      graph_: MACs, FLOPs, parameters, bytes; the largest live activation
 *   graph_stats.c     graph_: --stats as text, JSON or CSV
 *   gtg_*.c           gtg_: the .gtg text format: attribute table, parser, writer, name rule
 *   onnx_*.c          onnx_: ONNX import through protobuf-c (ox_ inside, onnx_imp.h)
 *   model.c           model_: model_load(): .gtg or .onnx by the file's extension
 *   isa.def           the instruction table (X-macro)
 *   isa_ops.h         named accessors of the integer operands, generated from isa.def
 *   isa.c             isa_: static facts from isa.def
 *   prog.[ch]         prog_: Programs: per-queue instruction streams, the contract with sim/;
 *                     building them in memory, loading and saving by extension
 *   gtasm.c           gtasm_: .gtasm text: assembler, disassembler, instruction text
 *   gtp.c             gtp_: .gtp binary program files
 *   prog_check.c      prog_: static checks of a Program against an arch
 *   lower.h           lower_: lowering a graph to a Program: tvm, astitch, graphturbo
 *   lower_common.c    lower_: the driver (lower_run, lower_plan): kernel grouping, units,
 *                     placement, options
 *   lower_tvm.c       lower_: tvm grouping: a kernel per layer
 *   lower_astitch.c   lower_: astitch grouping: memory-intensive ops stitched onto their neighbours
 *   lower_dtype.c     lower_: the model's dtypes against the units (an error suggesting --dtype)
 *   unit_timing.[ch]  timing_: the timing model of the simulator and the tiler: compute
 *                     formulas (gemm, vector, scalar cycles), DDR burst rounding
 *   lower_tiling.c    lower_: a kernel's partition over a cluster's cores, tile sizes
 *   lower_partition.c lower_: a kernel's rows per core and cluster, copy kernels' parts
 *   lower_ops.c       lower_: how each op kind becomes tiles; a kernel's operands
 *   lower_gt.c        gt_: graphturbo lowering: instances as kernels, kept tensors, spills
 *                     (gt_plan)
 *   lower_check.c     lower_: the lowering's invariants, checked after every planning step
 *   lower_dump.c      lower_: the plan after a step as text (--dump-after STEP)
 *   lower_summary.c   lower_: the run as the report sees it (summary.h)
 *   emit.[ch]         emit_: the strategy-neutral emitter: plan -> Program; memory map,
 *                     kernels over clusters and cores, pipes, barriers, the accounting sink
 *   emit_impl.h       emit_: the emitter's internals shared by its three files
 *   emit_tiles.c      emit_: one kernel's instruction streams on one core
 *   emit_slices.c     emit_: a plan's slices (graphturbo) as regions in the Program
 *   ivl.[ch]          ivl_: the allocator of DDR, GB and LB: first fit over blocks with
 *                     lifetimes or in program order, high-water mark
 *   gt.[ch]           gt_: GraphTurbo graph passes: data structures, pipeline, invariant checker
 *   gt_*.c            gt_: one file per GraphTurbo pass, and the schedule dump (map in gt.h)
 *   summary.h         the run as the report sees it: tasks, groups, totals (no functions)
 *   report.[ch]       report_: the run report (text, JSON, CSV) and the --compare table
 *   report_energy.c   report_: the report's energy lines, JSON member and --compare table
 *
 * Errors: a user error prints `file:line:col: error: msg` (plus the line and a caret when the
 * text is at hand) and exits 1; an internal bug calls die() which exits 3.
 */
#ifndef GS_UTIL_H
#define GS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum { GS_EXIT_OK = 0, GS_EXIT_INPUT = 1, GS_EXIT_SIM = 2, GS_EXIT_INTERNAL = 3 };

/* Internal failure: prints __FILE__:__LINE__ and exits 3. */
#define die(...) util_die(__FILE__, __LINE__, __VA_ARGS__)
#ifdef __cplusplus /* <stdnoreturn.h> defines `noreturn` for C only */
[[noreturn]]
#else
noreturn
#endif
void util_die(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define gs_assert(c) ((c) ? (void)0 : util_die(__FILE__, __LINE__, "assertion failed: %s", #c))

/* ---- Arena: one per compilation; nothing inside is freed on its own. ---- */
typedef struct GsArena GsArena;
GsArena *arena_new(void);
void arena_free(GsArena *a);
void *arena_alloc(GsArena *a, size_t n);          /* zeroed, 16-byte aligned */
char *arena_strdup(GsArena *a, const char *s);
char *arena_strndup(GsArena *a, const char *s, size_t n);
char *arena_printf(GsArena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands p (from malloc/realloc, or NULL) to the arena, which frees it in arena_free; returns
 * p. For an array grown on the heap: copying it in would zero and copy every byte again. */
void *arena_adopt(GsArena *a, void *p);

/* Asks for huge pages under the whole 2 MiB pages of [p, p + n) (a hint; see util.c). */
void util_advise_huge(void *p, size_t n);
/* Faults in the pages of [p, p + n) for writing in one system call, before their first use
 * (a hint; see util.c). */
void util_populate(void *p, size_t n);
/* May this process run on two cores? (Its affinity: a Slurm task, taskset, a container's CPU
 * set.) On one, a second thread only takes turns with the first. */
int util_two_cores(void);

/* ---- Growable array of fixed-size elements (heap, owner frees with vec_free). ---- */
typedef struct {
  void *data;
  size_t len, cap, elem;
} GsVec;
void vec_init(GsVec *v, size_t elem);
void *vec_push(GsVec *v);                   /* returns a zeroed new slot */
void vec_free(GsVec *v);
#define VEC_AT(v, T, i) (((T *)(v)->data)[i])

/* ---- Diagnostics for user errors. ----
 * A GsDiag collects errors instead of exiting, so callers (and tests) decide. `src` may be
 * NULL; when given, the offending line is printed with a caret under `col`. */
typedef struct {
  FILE *out;            /* where messages go (stderr by default) */
  int nerrors;
  int max_errors;       /* stop reporting after this many (0 = 1) */
} GsDiag;
void diag_init(GsDiag *d);
void diag_error(GsDiag *d, const char *file, int line, int col, const char *src,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Print one line of `src` (line numbers from 1) and a caret under `col` (from 1). */
void diag_show_line(FILE *out, const char *src, int line, int col);

/* Read a whole file into a NUL-terminated heap buffer; NULL and errno on failure. */
char *util_read_file(const char *path, size_t *len);
/* Write `len` bytes to `path` through `path.tmp.PID` + rename, so a failure loses nothing;
 * a path that exists and is not a regular file (/dev/null, a FIFO) is written directly, never
 * replaced. Returns 0 on success, -1 with errno set. */
int util_write_file_atomic(const char *path, const void *data, size_t len);
/* The temporary an output is written under before the rename: "PATH.tmp.PID" (heap). */
char *util_tmp_name(const char *path);
/* Whether util_write_file_atomic(path) could create its temporary now: the temporary is created
 * and removed again (a device or FIFO is not opened; a directory is EISDIR). Lets a command
 * refuse an output it cannot write before its work, not after. 0, or -1 with errno set. */
int util_check_writable(const char *path);
/* Temporary files removed if the process is stopped by SIGINT, SIGTERM or SIGHUP before it
 * renames or removes them: util_tmp_track(path) before creating one (-1 when all
 * UTIL_TMP_SLOTS are taken or the path is too long: then a signal leaves it behind),
 * util_tmp_untrack(path) after the rename or unlink. The handler unlinks what is tracked, then
 * the signal ends the process as it would have (default action, same exit status). die()
 * removes them too. */
enum { UTIL_TMP_SLOTS = 8 };
int util_tmp_track(const char *path);
void util_tmp_untrack(const char *path);
/* 1 when `path` ends in `ext` (".gtg"; case-insensitive) and has a name before it. */
int util_has_ext(const char *path, const char *ext);
/* 1 when `path` exists and is not a regular file: outputs go to it directly (no temporary). */
int util_write_in_place(const char *path);
/* `s` as a JSON string literal: quoted, `"` and `\` escaped with a backslash, bytes below 0x20
 * as \u00XX, everything else (UTF-8 included) as is. NULL prints as "". */
void util_json_str(FILE *out, const char *s);

/* Before a function of fixed-size loops GCC vectorises: on x86-64 it is compiled twice, for
 * AVX2 and for the baseline (SSE2, which has no 64-bit compare and no unsigned maximum), and
 * the version the CPU runs is picked at load time. Elsewhere it is nothing. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GS_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GS_AVX2_CLONES
#endif

/* Hand-over between threads through rings (prog_check.c, sim/checker.h): util_stream_copy
 * writes `bytes` (a multiple of 16) from `from` to `to` (16-byte aligned) past the caches
 * (SSE2's streaming stores, which x86-64 always has; plain stores elsewhere), so that a line
 * another core reads does not first come to this core's cache to be written and then go back.
 * Best used for whole lines. util_stream_fence orders them before the store that publishes
 * them. */
static inline void util_stream_copy(void *to, const void *from, size_t bytes) {
#ifdef __SSE2__
  __m128i *t = (__m128i *)to;
  const __m128i *f = (const __m128i *)from;
  for (size_t k = 0; k < bytes / 16; k++) _mm_stream_si128(t + k, _mm_loadu_si128(f + k));
#else
  memcpy(to, from, bytes);
#endif
}
/* 16 bytes, lo then hi, streamed the same way from registers: a value made in memory just
 * before by smaller stores would be read back by a wider load, which waits for them. */
static inline void util_stream_pair(void *to, uint64_t lo, uint64_t hi) {
#ifdef __SSE2__
  _mm_stream_si128((__m128i *)to, _mm_set_epi64x((long long)hi, (long long)lo));
#else
  memcpy(to, &lo, 8);
  memcpy((char *)to + 8, &hi, 8);
#endif
}
static inline void util_stream_fence(void) {
#ifdef __SSE2__
  _mm_sfence();
#endif
}

/* A hash of n 64-bit words, for open-addressed tables keyed by them (gt_order_dp.c's states,
 * sim/memory.cpp's access patterns). */
static inline uint64_t util_hash_words(const uint64_t *w, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < n; i++) {
    h = (h ^ w[i]) * 0xff51afd7ed558ccdu;
    h ^= h >> 29;
  }
  return h;
}

/* Integer helpers. */
static inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

#ifdef __cplusplus
}
#endif
#endif
