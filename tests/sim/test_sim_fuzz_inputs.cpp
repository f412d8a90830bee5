// test_sim_fuzz_inputs.cpp — the simulator's fuzz target (tests/fuzz/fuzz_sim.cpp) in the suite,
// without libFuzzer: every input of tests/fuzz/regress/sim/, then each program of
// tests/cases/sim/*.gtasm and kVariants variants of it (tests/fuzz/fuzz_mutate.h, a fixed
// generator seed: the same inputs every run), each assembled, checked and simulated on
// configs/tiny.cfg. The target aborts when a run ends in anything but 0, 1 or 2; a crash, a hang
// (the suite's time-out) or a sanitizer report (`make asan`) fails the test. The long run is
// `make fuzz-sim`. FUZZ_VERBOSE=1 names every input before it runs.
#include <glob.h>

#include "simtest.h"

#include "../fuzz/fuzz_sim.cpp"
#include "../fuzz/fuzz_mutate.h"

static const int kVariants = 200;

static std::string read_all(const char *path) {
  size_t n;
  char *b = util_read_file(path, &n);
  assert_non_null(b);
  std::string s(b, n);
  free(b);
  return s;
}

static void run_one(const std::string &what, const unsigned char *b, size_t n) {
  if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "# sim: %s\n", what.c_str());
  LLVMFuzzerTestOneInput(b, n);
}

static void regressions_and_variants(void **) {
  glob_t g;
  if (glob("tests/fuzz/regress/sim/*", 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; i++) {
      std::string s = read_all(g.gl_pathv[i]);
      run_one(g.gl_pathv[i], (const unsigned char *)s.data(), s.size());
    }
    globfree(&g);
  }
  assert_int_equal(glob("tests/cases/sim/*.gtasm", 0, nullptr, &g), 0);
  FuzzRng r = {0x51a0000u};
  int runs = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    std::string s = read_all(g.gl_pathv[i]), o = read_all(g.gl_pathv[(i + 1) % g.gl_pathc]);
    run_one(g.gl_pathv[i], (const unsigned char *)s.data(), s.size());
    for (int v = 0; v < kVariants; v++, runs++) {
      FuzzBuf m;
      fuzz_mutate(&r, (const unsigned char *)s.data(), s.size(), (const unsigned char *)o.data(),
                  o.size(), &m);
      run_one(std::string(g.gl_pathv[i]) + ", variant " + std::to_string(v), m.b, m.n);
      free(m.b);
    }
  }
  printf("# %zu programs, %d variants; simulated %d: exit 0 %d, 1 %d, 2 %d\n", g.gl_pathc, runs,
         fuzz_sim::simulated, fuzz_sim::by_status[0], fuzz_sim::by_status[1], fuzz_sim::by_status[2]);
  globfree(&g);
}

int sc_main(int, char **) {
  const CMUnitTest tests[] = {cmocka_unit_test(regressions_and_variants)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
