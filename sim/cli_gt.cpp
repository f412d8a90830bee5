// cli_gt.cpp — `gtsim --arch CFG MODEL --sched graphturbo --dump-after PASS | --dump-schedule
// [--json] [-o FILE] [--batch B] [--gt-* ...]`: runs the GraphTurbo graph passes (sched/gt.h)
// on MODEL and prints the state after PASS, or the whole schedule (text or JSON); a lowering
// step instead of PASS goes to cli_lower_dump (sim/cli_run.cpp, any --sched). The batch
// (the file's own unless --batch) is the whole chip's; the scheduler sees the batch of one
// cluster, B / clusters (docs/graphturbo.md), and B must be a multiple of the clusters.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli.h"

extern "C" {
#include "graph.h"
#include "gt.h"
#include "util.h"
}

static int gt_usage(const char *msg) {
  fprintf(stderr, "gtsim: %s\n(try 'gtsim --help')\n", msg);
  return GS_EXIT_INPUT;
}

int cli_gt_option(CliOptions &o, const char *name, const char *value) {
  GtOptions &g = o.gt;
  std::string n(name);
  if (n == "gt-lb-scope") {
    if (!strcmp(value, "cluster")) g.lb_scope = GT_LB_CLUSTER;
    else if (!strcmp(value, "core")) g.lb_scope = GT_LB_CORE;
    else return gt_usage((std::string("--gt-lb-scope takes core or cluster, not '") + value + "'").c_str());
  } else if (n == "gt-lb-bytes") {
    char *end = nullptr;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (errno || *end || v < 1)
      return gt_usage((std::string("--gt-lb-bytes needs an integer >= 1, not '") + value + "'").c_str());
    g.lb_bytes = v;
  } else if (n == "gt-init") {
    if (!strcmp(value, "chain")) g.init = GT_INIT_CHAIN;
    else if (!strcmp(value, "layer")) g.init = GT_INIT_LAYER;
    else if (!strcmp(value, "op")) g.init = GT_INIT_OP;
    else return gt_usage((std::string("--gt-init takes chain, layer or op, not '") + value + "'").c_str());
  } else if (n == "gt-max-recompute") {
    char *end = nullptr;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || *end || !(v >= 0) || v > 1e6)
      return gt_usage((std::string("--gt-max-recompute needs a fraction >= 0, not '") + value + "'").c_str());
    g.max_recompute = v;
  } else if (n == "gt-footprint") {
    if (!strcmp(value, "op")) g.footprint = GT_FOOT_OP;
    else if (!strcmp(value, "live")) g.footprint = GT_FOOT_LIVE;
    else return gt_usage((std::string("--gt-footprint takes op or live, not '") + value + "'").c_str());
  } else if (n == "gt-time") {
    o.gt_time = true;
  } else if (n == "gt-order") {
    if (!strcmp(value, "auto")) g.order = GT_ORDER_AUTO;
    else if (!strcmp(value, "bfs")) g.order = GT_ORDER_BFS;
    else if (!strcmp(value, "dfs")) g.order = GT_ORDER_DFS;
    else if (!strcmp(value, "footprint")) g.order = GT_ORDER_FOOTPRINT;
    else if (!strcmp(value, "optimal")) g.order = GT_ORDER_OPTIMAL;
    else return gt_usage((std::string("--gt-order takes auto, bfs, dfs, footprint or optimal, not '") + value + "'").c_str());
  } else if (n == "gt-order-time-limit") {
    char *end = nullptr;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || *end || end == value || !(v > 0) || v > 3600)
      return gt_usage((std::string("--gt-order-time-limit needs seconds in (0, 3600], not '") + value + "'").c_str());
    g.order_time_limit = v;
  } else if (n == "gt-level") {
    GtLadder v;
    if (gt_ladder_parse(value, &v) != 0)
      return gt_usage((std::string("--gt-level takes gb, lb, instances or full, not '") + value + "'").c_str());
    o.gt_level = v;
  } else if (n == "gt-spill") {
    if (!strcmp(value, "longest")) o.gt_spill = GT_SPILL_LONGEST;
    else if (!strcmp(value, "largest")) o.gt_spill = GT_SPILL_LARGEST;
    else return gt_usage((std::string("--gt-spill takes longest or largest, not '") + value + "'").c_str());
  } else if (n == "gt-stitch") {
    char *end = nullptr;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || *end || !(v >= 0) || v > 0.95)
      return gt_usage((std::string("--gt-stitch needs a fraction in [0, 0.95], not '") + value + "'").c_str());
    o.gt_stitch = v;
    o.gt_stitch_set = true;
  } else if (n == "gt-prefetch") {
    char *end = nullptr;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || *end || end == value || v < 0 || v > GT_AHEAD_MAX)
      return gt_usage((std::string("--gt-prefetch needs a layer count in [0, ") +
                       std::to_string(GT_AHEAD_MAX) + "], not '" + value + "'").c_str());
    o.gt_prefetch = (int)v;
  } else if (n == "gt-prefetch-gb") {
    char *end = nullptr;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || *end || end == value || !(v >= 0) || v > 1)
      return gt_usage((std::string("--gt-prefetch-gb needs a fraction in [0, 1], not '") + value + "'").c_str());
    o.gt_prefetch_gb = v;
  } else if (n == "gt-cols") {
    if (!strcmp(value, "rows")) o.gt_cols = 0;
    else if (!strcmp(value, "split")) o.gt_cols = 1;
    else return gt_usage((std::string("--gt-cols takes rows or split, not '") + value + "'").c_str());
  } else {
    return gt_usage((std::string("unknown option: --") + name).c_str());
  }
  return GS_EXIT_OK;
}

int cli_gt_dump(const CliOptions &o) {
  GtPass last = GT_PASS_CONCAT;
  LowerStep step;
  if (o.dump_after && gt_pass_parse(o.dump_after, &last) != 0) {
    if (lower_step_parse(o.dump_after, &step) == 0 && !o.dump_schedule) return cli_lower_dump(o, step);
    std::string names, steps;
    for (int p = 0; p < GT_NPASSES; p++) names += std::string(p ? ", " : "") + gt_pass_name((GtPass)p);
    for (int p = 0; p < LOWER_NSTEPS; p++) steps += std::string(p ? ", " : "") + lower_step_name((LowerStep)p);
    if (o.dump_schedule)
      return gt_usage((std::string("--dump-schedule goes with a graphturbo pass, not '") + o.dump_after + "'").c_str());
    return gt_usage((std::string("unknown pass '") + o.dump_after + "' (passes: " + names +
                     "; lowering steps: " + steps + ")").c_str());
  }
  if (o.sched && strcmp(o.sched, "graphturbo") != 0)
    return gt_usage("--dump-after PASS and --dump-schedule show the graphturbo schedule (--sched graphturbo)");
  if (o.inputs.size() != 1) return gt_usage("--dump-after/--dump-schedule need exactly one model file");
  if (!o.arch) return gt_usage("--dump-after/--dump-schedule need --arch FILE");
  if (o.dump_after && o.json) return gt_usage("--json goes with --dump-schedule, not --dump-after");
  GsArch *a = cli_load_arch(o);
  GsDiag d;
  diag_init(&d);
  GsGraph *g = cli_load_model(o, o.inputs[0], &d);
  if (!g) {
    arch_free(a);
    return GS_EXIT_INPUT;
  }
  int64_t batch = o.batch > 0 ? o.batch : g->default_batch;
  if (batch % a->nclusters != 0) {
    fprintf(stderr, "%s: error: batch %lld is not a multiple of the %d clusters of %s (the scheduler "
                    "gives each cluster batch/clusters images)\n",
            o.inputs[0], (long long)batch, a->nclusters, a->name);
    graph_free(g);
    arch_free(a);
    return GS_EXIT_INPUT;
  }
  int64_t n = batch / a->nclusters;
  if (n != g->batch && graph_infer(g, n, &d) != 0) {
    graph_free(g);
    arch_free(a);
    return GS_EXIT_INPUT;
  }
  GtSchedule *s = gt_schedule(g, a, &o.gt, last);
  if (o.gt_time) {
    double total = 0;
    for (int p = 0; p <= last; p++) total += s->pass_ms[p];
    fprintf(stderr, "graphturbo: %s on %s, %.3f ms:", g->name, a->name, total);
    for (int p = 0; p <= last; p++) fprintf(stderr, " %s %.3f", gt_pass_name((GtPass)p), s->pass_ms[p]);
    fputc('\n', stderr);
  }
  int rc = cli_write_output(o.output, [&](FILE *f) {
    if (o.dump_schedule && o.json) gt_dump_json(f, s);
    else gt_dump(f, s, last);
  });
  gt_free(s);
  graph_free(g);
  arch_free(a);
  return rc;
}
