// fuzz_sim.cpp — libFuzzer target for the simulator (`make fuzz-sim`). Each input is a .gtasm
// program for configs/tiny.cfg; when it assembles and passes the static checks, it runs on the
// simulator with every check on, and must end with status 0, 1 or 2 — never a crash, a hang, an
// exception or a sanitizer report. The simulator's own time grows with the chunks of a transfer
// and the rows its checks walk, not with the cycles they stand for, so programs that move more
// than kMaxBytes in all or name more than kMaxRows rows are skipped (the limits of docs/timing.md
// keep any other program's arithmetic exact). Seeds: tests/cases/sim. Crashes found are fixed
// and kept in tests/fuzz/regress/sim/, replayed by tests/sim/test_sim_fuzz_inputs.cpp, which
// also runs a short deterministic set of variants in the suite.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim.h"

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fuzz_sim {

const int64_t kMaxBytes = 1 << 22, kMaxRows = 1 << 14, kMaxInsts = 4096;
int simulated, by_status[3];  // inputs that ran, by how they ended

// Small enough to simulate quickly: the bytes its transfers move and the rows they (and the
// checks) walk, and its instructions.
bool small(const GsProgram *p) {
  int64_t bytes = 0, rows = 0, insts = 0;
  static GsCursor c;  // (a few KiB of decoder state)
  for (int q = 0; q < p->nqueues; q++) {
    insts += p->queues[q].ninsts;
    prog_cursor_init(&c, &p->queues[q]);
    for (const GsInst *in; (in = prog_cursor_next(&c));) {
      if (in->op != I_MOV) continue;
      bytes += inst_mov_bytes(in);
      rows += std::max<int64_t>(1, inst_mov_rows(in)) * std::max<int64_t>(1, inst_mov_planes(in));
      if (bytes > kMaxBytes || rows > kMaxRows) return false;
    }
  }
  return insts <= kMaxInsts;
}

}  // namespace fuzz_sim

#ifdef FUZZ_SIM_SC_MAIN
// libFuzzer brings main(); SystemC's library wants an sc_main (extern "C", as SystemC declares
// it), which it does not call here.
extern "C" int sc_main(int, char **) { return 0; }
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Simulator *sim;
  const GsArch *a = fuzz_tiny();
  if (!sim) sim = new Simulator(a);
  std::string text((const char *)data, size);
  GsDiag d;
  diag_init(&d);
  d.out = fuzz_null();
  GsProgram *p = gtasm_parse("fuzz.gtasm", text.c_str(), a, &d);
  if (!p) return 0;
  if (prog_check(p, a, &d, "fuzz.gtasm") == 0 && fuzz_sim::small(p)) {
    SimOptions o;
    SimResult r;
    int rc = sim->run(p, o, &r);
    if (rc < 0 || rc > 2 || rc != r.status) {
      fprintf(stderr, "fuzz_sim: the simulator ended with status %d:\n%s\n", rc, r.message.c_str());
      abort();
    }
    fuzz_sim::simulated++;
    fuzz_sim::by_status[rc]++;
  }
  prog_free(p);
  return 0;
}
