/* test_fuzz_replay.c — the parsers' fuzz targets (tests/fuzz/fuzz_*.c) in the suite, without
 * libFuzzer: for each target, every input of its regression corpus (tests/fuzz/regress/NAME/:
 * inputs that once crashed it, kept after the fix), then a short deterministic run — each seed
 * (the project's own files of that format) and FUZZ_VARIANTS variants of it (fuzz_mutate.h,
 * fixed generator seed: the same inputs every run) through the target. A target aborts on
 * what it can see is a bug (a round trip that changes the program); a crash or a sanitizer
 * report (`make asan`) fails the test. The long runs are libFuzzer's: `make fuzz-gtasm`,
 * `fuzz-gtp`, `fuzz-cfg`, `fuzz` (.gtg), `fuzz-onnx`, `fuzz-sim` (the simulator's target has
 * its own short run, tests/sim/test_sim_fuzz_inputs.cpp).
 * FUZZ_VERBOSE=1 names every input before it runs (to find the one that crashed). */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LLVMFuzzerTestOneInput fuzz_gtasm_one
#include "../fuzz/fuzz_gtasm.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gtp_one
#include "../fuzz/fuzz_gtp.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_cfg_one
#include "../fuzz/fuzz_cfg.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gtg_one
#include "../fuzz/fuzz_gtg.c"
#undef LLVMFuzzerTestOneInput
#include "../fuzz/fuzz_mutate.h"

enum { FUZZ_VARIANTS = 150 };

typedef int (*Target)(const uint8_t *, size_t);

typedef struct {
  const char *name;
  Target fn;
  const char *seeds[3];  /* globs of seed files */
  int assemble;          /* seeds are .gtasm, the target reads their .gtp */
} Fuzz;

static const Fuzz targets[] = {
    {"gtasm", fuzz_gtasm_one, {"tests/cases/asm/*.gtasm", "tests/cases/sim/*.gtasm", NULL}, 0},
    {"gtp", fuzz_gtp_one, {"tests/cases/sim/*.gtasm", NULL, NULL}, 1},
    {"cfg", fuzz_cfg_one, {"configs/*.cfg", "tests/cases/cfg/*.cfg", NULL}, 0},
    {"gtg", fuzz_gtg_one, {"tests/cases/gtg/*.gtg", "workloads/*.gtg", NULL}, 0},
};

static void run_one(const Fuzz *f, const char *what, const unsigned char *b, size_t n) {
  if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "# %s: %s\n", f->name, what);
  f->fn(b, n);
}

/* A seed's bytes: the file's, or (assemble) the .gtp the .gtasm file assembles to (0 bytes
 * when it does not assemble). */
static unsigned char *seed_bytes(const Fuzz *f, const char *path, size_t *n) {
  char *text = util_read_file(path, n);
  assert_non_null(text);
  if (!f->assemble) return (unsigned char *)text;
  GsDiag d;
  diag_init(&d);
  d.out = fuzz_null();
  GsProgram *p = gtasm_parse(path, text, fuzz_tiny(), &d);
  free(text);
  *n = 0;
  if (!p) return (unsigned char *)calloc(1, 1);
  assert_int_equal(gtp_write(fuzz_gtp_path(), p), 0);
  prog_free(p);
  return (unsigned char *)util_read_file(fuzz_gtp_path(), n);
}

static void test_target(void **st) {
  const Fuzz *f = *st;
  char pat[128];
  glob_t g;
  /* the regression corpus */
  snprintf(pat, sizeof pat, "tests/fuzz/regress/%s/*", f->name);
  if (glob(pat, 0, NULL, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; i++) {
      size_t n;
      char *b = util_read_file(g.gl_pathv[i], &n);
      assert_non_null(b);
      run_one(f, g.gl_pathv[i], (unsigned char *)b, n);
      free(b);
    }
    globfree(&g);
  }
  /* the seeds and their variants */
  int seeds = 0, runs = 0;
  for (int s = 0; s < 3 && f->seeds[s]; s++) {
    if (glob(f->seeds[s], 0, NULL, &g) != 0) continue;
    FuzzRng r = {0x5eed0000u + (uint64_t)s};
    for (size_t i = 0; i < g.gl_pathc; i++) {
      size_t n, on;
      unsigned char *b = seed_bytes(f, g.gl_pathv[i], &n);
      unsigned char *o = seed_bytes(f, g.gl_pathv[(i + 1) % g.gl_pathc], &on);
      run_one(f, g.gl_pathv[i], b, n);
      for (int v = 0; v < FUZZ_VARIANTS; v++, runs++) {
        FuzzBuf m;
        fuzz_mutate(&r, b, n, o, on, &m);
        char what[300];
        snprintf(what, sizeof what, "%s, variant %d", g.gl_pathv[i], v);
        run_one(f, what, m.b, m.n);
        free(m.b);
      }
      free(b);
      free(o);
      seeds++;
    }
    globfree(&g);
  }
  assert_true(seeds > 0);
  printf("# %s: %d seeds, %d variants\n", f->name, seeds, runs);
}

int main(void) {
  struct CMUnitTest tests[sizeof targets / sizeof *targets];
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
    struct CMUnitTest t = {targets[i].name, test_target, NULL, NULL, (void *)&targets[i]};
    tests[i] = t;
  }
  int rc = _cmocka_run_group_tests("fuzz_replay", tests, sizeof targets / sizeof *targets, NULL, NULL);
  unlink(fuzz_gtp_path());
  return rc;
}
