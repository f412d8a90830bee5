// test_sim_progress.cpp — the progress line of sim/cli_progress.cpp without a simulation: what
// CliSimProgress prints for a known total (percentage, elapsed, time left; 100% at the end)
// and for an unknown one (instructions done and rate, no percentage), that it is silent and
// leaves SimOptions::progress empty when off, and that the default is off when stderr is not
// a terminal. stderr is redirected to a file around each case (never a terminal here), so a
// forced-on line is a line of its own. The whole-run behaviour is tests/cli/test_progress.sh.
#include <unistd.h>

#include <functional>

#include "cli.h"
#include "simtest.h"

// What `body` writes to stderr.
static std::string capture(const std::function<void()> &body) {
  fflush(stderr);
  FILE *f = tmpfile();
  assert_non_null(f);
  int saved = dup(STDERR_FILENO);
  dup2(fileno(f), STDERR_FILENO);
  body();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::string s;
  rewind(f);
  for (int c; (c = fgetc(f)) != EOF;) s += (char)c;
  fclose(f);
  return s;
}

static bool has(const std::string &s, const char *what) { return s.find(what) != std::string::npos; }

static void known_total(void **) {
  std::string s = capture([] {
    cli_progress_setup(1);
    SimOptions so;
    CliSimProgress p("prog.gtasm", 20000, &so);
    assert_true((bool)so.progress);
    so.progress(4096, 20000);  // within the first half second: not shown
    usleep(600000);
    so.progress(5000, 20000);  // 25%, with the time left
    p.finish(20000);
  });
  assert_true(has(s, "gtsim: prog.gtasm: simulating 20.0 k instructions ...\n"));
  assert_true(has(s, "simulating 20.0 k instructions: 25%, "));
  assert_true(has(s, " left\n"));
  assert_false(has(s, ": 20%"));
  // the last line: 100%, the elapsed time, no time left
  size_t last = s.rfind("gtsim:");
  assert_true(has(s.substr(last), ": 100%, ") && has(s.substr(last), " elapsed\n"));
  assert_false(has(s, "\r"));  // not a terminal: lines, nothing rewritten
}

static void unknown_total(void **) {
  std::string s = capture([] {
    cli_progress_setup(1);
    SimOptions so;
    CliSimProgress p("stream", 0, &so);
    p.finish(123456);
  });
  assert_true(has(s, "gtsim: stream: simulating ...\n"));
  assert_true(has(s, "gtsim: stream: simulating: 123.5 k instructions done, "));
  assert_true(has(s, "/s, "));
  assert_false(has(s, "%"));
}

static void off_and_default(void **) {
  for (int mode : {-1, 0}) {  // --no-progress; no option with stderr not a terminal
    std::string s = capture([mode] {
      cli_progress_setup(mode);
      assert_false(cli_progress_on());
      SimOptions so;
      CliSimProgress p("prog.gtasm", 100, &so);
      assert_false((bool)so.progress);  // the simulator does not even call it
      cli_progress_stage("gtsim: tvm: scheduling ...");
      p.finish(100);
    });
    assert_true(s.empty());
  }
}

int sc_main(int, char **) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(known_total),
      cmocka_unit_test(unknown_total),
      cmocka_unit_test(off_and_default),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
