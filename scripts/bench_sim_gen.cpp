// bench_sim_gen.cpp — the simulation benchmark driver of scripts/bench_sim.sh: builds a
// synthetic program of about N instructions spread over 32 cores (configs/tiny.cfg with
// --set core.pe.count=16: 2 clusters x 16 cores), writes it to OUT.gtp if given, and runs it
// on the Simulator in this process, printing instructions, simulated cycles and the wall time
// of the run itself (elaboration and program generation excluded and printed apart).
// Per core and iteration, the pipeline a scheduler emits: dma_in loads a 512 B tile from the
// cluster GB into one of two LB buffers (double buffering), mme multiplies it, vec applies an
// activation, dma_out stores the result to DDR; flags order the four queues.
// Usage: bench_sim_gen [INSTRUCTIONS [OUT.gtp]]   (default 1000000); run from the repo root.
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <vector>

#include "simtest.h"

static double secs(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int sc_main(int argc, char **argv) {
  long target = argc > 1 ? atol(argv[1]) : 1000000;
  const char *sets[] = {"core.pe.count=16"};  // 2 clusters x 16 cores = 32 cores
  GsDiag d;
  diag_init(&d);
  GsArch *A = arch_load("configs/tiny.cfg", sets, 1, &d);
  if (!A) return 1;
  auto t0 = std::chrono::steady_clock::now();
  Simulator sim(A);
  auto t1 = std::chrono::steady_clock::now();
  Prog pr;
  const int cores = 32;
  // Instructions per core and iteration: dma_in 3 (wait, mov, signal) + mme 3 + vec 3 + dma_out 3.
  long iters = target / (cores * 12) + 1;
  uint32_t tw = pr.tile("w");
  for (int c = 0; c < cores; c++) {
    int cl = c / 16, k = c % 16;
    QRef in = pr.q(cl, k, TQ_IN), mm = pr.q(cl, k, TQ_MME), vc = pr.q(cl, k, TQ_VEC), out = pr.q(cl, k, TQ_OUT);
    uint32_t gsrc = pr.region(nullptr), buf[2] = {pr.region(nullptr), pr.region(nullptr)};
    uint32_t w = pr.region(nullptr), acc = pr.region(nullptr), act = pr.region(nullptr), dst = pr.region(nullptr);
    uint32_t tx = pr.tile(nullptr), ty = pr.tile(nullptr), tz = pr.tile(nullptr);
    pr.alloc(in, gsrc, LVL_GB, cl, 0, 4096 * k, 4096, tx);
    pr.alloc(in, buf[0], LVL_LB, cl, k, 0, 512);
    pr.alloc(in, buf[1], LVL_LB, cl, k, 512, 512);
    pr.alloc(in, w, LVL_LB, cl, k, 1024, 512, tw);
    pr.alloc(in, acc, LVL_LB, cl, k, 2048, 512);
    pr.alloc(in, act, LVL_LB, cl, k, 4096, 512);
    pr.alloc(in, dst, LVL_DDR, 0, 0, 512L * c, 512);
    // flags: 0 in->mme (data ready), 1 mme->in (buffer free), 2 mme->vec, 3 vec->mme (acc free),
    // 4 vec->out, 5 out->vec (act free)
    for (long i = 0; i < iters; i++) {
      int b = (int)(i & 1);
      if (i >= 2) pr.wait(in, 1);
      pr.mov(in, buf[b], tx, gsrc, tx, 512);
      pr.signal(in, TQ_MME, 0);
      pr.wait(mm, 0);
      if (i >= 1) pr.wait(mm, 3);
      pr.gemm(mm, acc, ty, buf[b], tx, w, tw, 16, 16, 16, DT_FP16);
      pr.signal(mm, TQ_IN, 1);
      pr.signal(mm, TQ_VEC, 2);
      pr.wait(vc, 2);
      if (i >= 1) pr.wait(vc, 5);
      pr.vec(vc, V_RELU, act, tz, acc, ty, 256, DT_FP16);
      pr.signal(vc, TQ_MME, 3);
      pr.signal(vc, TQ_OUT, 4);
      pr.wait(out, 4);
      pr.mov(out, dst, tz, act, tz, 512);
      pr.signal(out, TQ_VEC, 5);
    }
  }
  long n = 0;
  for (int i = 0; i < pr.p->nqueues; i++) n += (long)pr.p->queues[i].ninsts;
  if (argc > 2 && gtp_write(argv[2], pr.p) != 0) {
    perror(argv[2]);
    return 1;
  }
  auto t2 = std::chrono::steady_clock::now();
  std::clock_t c2 = std::clock();
  SimResult r;
  sim.run(pr.p, SimOptions(), &r);
  std::clock_t c3 = std::clock();
  auto t3 = std::chrono::steady_clock::now();
  if (r.status) {
    fprintf(stderr, "%s", r.message.c_str());
    return 2;
  }
  printf("instructions %ld\ncycles %llu\nelab_s %.3f\ngen_s %.3f\nrun_s %.3f\nrun_cpu_s %.3f\n", n,
         (unsigned long long)r.cycles, secs(t0, t1), secs(t1, t2), secs(t2, t3),
         (double)(c3 - c2) / CLOCKS_PER_SEC);
  return 0;
}
