/* gt_dump.c — the schedule as text after any pass (--dump-after) and as JSON
 * (--dump-schedule --json). Both walk the arrays in id / topological order only, so the
 * output is a pure function of the inputs (docs/graphturbo.md describes both formats).
 * Names: initial sub-graph sgN (its id), live group gN (its topological position), instance
 * gN.K (K-th slice), extra op xN; sizes in bytes.
 */
#include "gt.h"

#include <inttypes.h>
#include <string.h>

static const char *op_name(const GsGraph *g, int op) {
  const GsOp *o = &g->ops[op];
  return o->name ? o->name : g->tensors[o->out[0]].name;
}

static void print_shape(FILE *out, int nd, const int64_t *d) {
  fputc('[', out);
  for (int k = 0; k < nd; k++) fprintf(out, "%s%" PRId64, k ? "," : "", d[k]);
  fputc(']', out);
}

static void print_split(FILE *out, const GtSplit *sp) {
  if (!sp->split) fputs("none", out);
  else fprintf(out, "(1,%d,%" PRId64 ",%d)", sp->n, sp->factor, sp->dim);
}

static void print_group(FILE *out, const GtSchedule *s, int gid, const char *label) {
  const GtGroup *gr = &s->groups[gid];
  const GsTensor *t = &s->g->tensors[gr->out];
  fprintf(out, "%s ops=%d [", label, gr->nops);
  for (int i = 0; i < gr->nops; i++) fprintf(out, "%s%s", i ? " " : "", op_name(s->g, gr->ops[i]));
  fprintf(out, "]\n    out=%s", t->name);
  print_shape(out, t->ndim, t->dim);
  fprintf(out, " peak=%" PRId64 " best=", gr->peak);
  print_split(out, &gr->best);
  fputs(" splitinfo={", out);
  for (int i = 0; i < gr->nsplits; i++) {
    if (i) fputc(' ', out);
    print_split(out, &gr->splits[i]);
  }
  fputs("}\n", out);
}

static void inst_label(const GtSchedule *s, int i, char *buf, size_t n) {
  const GtInstance *in = &s->insts[i];
  snprintf(buf, n, "g%d.%d", s->groups[in->group].topo, in->index);
}

static void print_bind(FILE *out, const int64_t *b, int nd) {
  print_shape(out, nd, b);
}

/* The orders, each with its peak; the chosen one's bound and gap; the optimal search. */
static void print_orders(FILE *out, const GtSchedule *s) {
  const int *orders[] = {s->order_bfs, s->order_dfs, s->order_foot, s->order_opt};
  const int64_t peaks[] = {s->peak_bfs, s->peak_dfs, s->peak_foot, s->optimal.peak};
  static const char *const names[] = {"bfs", "dfs", "footprint", "optimal"};
  char a[32];
  for (int k = 0; k < 4 && orders[k]; k++) {
    fprintf(out, "order %s peak=%" PRId64 "%s:", names[k], peaks[k],
            orders[k] == s->order ? " (chosen)" : "");
    for (int i = 0; i < s->ninsts; i++) {
      inst_label(s, orders[k][i], a, sizeof a);
      fprintf(out, " %s", a);
    }
    fputc('\n', out);
  }
  fprintf(out, "order chosen=%s peak=%" PRId64 " bound=%" PRId64 " gap=%s\n", s->order_name, s->peak,
          s->peak_bound, gt_order_gap_text(s->arena, s->peak, s->peak_bound));
  if (!s->order_opt) return;
  const GtOrderResult *r = &s->optimal;
  int dp = strcmp(r->method, "bound") != 0, ilp = strcmp(r->method, "ilp") == 0; /* which ran */
  fprintf(out, "order search greedy=%" PRId64 " by=%s status=%s", r->greedy_peak, r->method,
          gt_order_status_name(r->status));
  if (dp) fprintf(out, " dp=%s,%ld states", gt_order_status_name(r->dp.status), r->dp.work);
  if (ilp) fprintf(out, " ilp=%s,%ld nodes", gt_order_status_name(r->ilp.status), r->ilp.work);
  fputc('\n', out);
}

void gt_dump(FILE *out, const GtSchedule *s, GtPass p) {
  const GsGraph *g = s->g;
  char a[32], b[32];
  fprintf(out, "# graphturbo after %s: model %s, batch per cluster %" PRId64 ", %d ops\n",
          gt_pass_name(p), g->name ? g->name : "?", g->batch, g->nops);
  fprintf(out, "# LB capacity %" PRId64 " bytes (%s), %d cores per cluster\n", s->lb_capacity,
          s->opt.lb_bytes > 0 ? "set" : s->opt.lb_scope == GT_LB_CORE ? "core" : "cluster", s->cores);
  if (p == GT_PASS_SPLITINFO) {
    fprintf(out, "subgraphs %d\n", s->ninit);
    for (int i = 0; i < s->ninit; i++) {
      snprintf(a, sizeof a, "sg%d", i);
      print_group(out, s, i, a);
    }
    return;
  }
  fprintf(out, "merges %d in %d iterations\n", s->nmerges, s->iterations);
  for (int i = 0; i < s->nmerges; i++) {
    const GtMerge *m = &s->merges[i];
    fprintf(out, "  %d %s", m->iteration, gt_merge_name(m->kind));
    for (int k = 0; k < m->nparts; k++) fprintf(out, "%s%d", k ? "+" : " ", m->parts[k]);
    fprintf(out, " -> %d\n", m->result);
  }
  fprintf(out, "groups %d\n", s->nlive);
  for (int i = 0; i < s->nlive; i++) {
    snprintf(a, sizeof a, "g%d (id %d)", i, s->live[i]);
    print_group(out, s, s->live[i], a);
  }
  if (p < GT_PASS_INSTANCES) return;
  fprintf(out, "instances %d, edges %d kept of %" PRId64 "\n", s->ninsts, s->nedges, s->gray_edges);
  for (int i = 0; i < s->ninsts; i++) {
    const GtInstance *in = &s->insts[i];
    inst_label(s, i, a, sizeof a);
    fprintf(out, "  %s", a);
    if (in->dim >= 0) fprintf(out, " dim%d[%" PRId64 ",%" PRId64 ")", in->dim, in->lo, in->hi);
    else fputs(" whole", out);
    fprintf(out, " out=%" PRId64 " footprint=%" PRId64, in->out_bytes, in->footprint);
    if (p >= GT_PASS_BIND) {
      fputs(" bind=", out);
      print_bind(out, in->bind, g->tensors[s->groups[in->group].out].ndim);
      fprintf(out, " scope=%s", gt_scope_name(in->scope));
    }
    fputs(" <-", out);
    if (in->nprod == 0) fputs(" (none)", out);
    for (int j = 0; j < in->nprod; j++) {
      const GtEdge *e = &s->edges[in->prod[j]];
      inst_label(s, e->from, b, sizeof b);
      fprintf(out, " %s:%s", b, g->tensors[e->tensor].name);
      if (e->dim >= 0) fprintf(out, "@%d[%" PRId64 ",%" PRId64 ")", e->dim, e->lo, e->hi);
    }
    fputc('\n', out);
  }
  if (p < GT_PASS_ORDER) return;
  print_orders(out, s);
  if (p < GT_PASS_BIND) return;
  fprintf(out, "binding mismatches moved to GB: %d\n", s->nbind_mismatch);
  if (p < GT_PASS_CONCAT) return;
  fprintf(out, "extra ops %d\n", s->nxops);
  for (int x = 0; x < s->nxops; x++) {
    const GtXop *op = &s->xops[x];
    inst_label(s, op->consumer, b, sizeof b);
    fprintf(out, "  x%d %s", x, gt_xop_name(op->kind));
    if (op->kind == GT_XOP_COPY)
      fprintf(out, "(%s->%s)", gt_scope_name(op->from_scope), gt_scope_name(op->scope));
    if (op->kind == GT_XOP_REDISTRIBUTE) print_bind(out, op->bind, op->ndim);
    fputs(" in=", out);
    for (int k = 0; k < op->nin; k++) {
      if (op->in[k].is_xop) snprintf(a, sizeof a, "x%d", op->in[k].id);
      else inst_label(s, op->in[k].id, a, sizeof a);
      fprintf(out, "%s%s", k ? "," : "", a);
    }
    fprintf(out, " %s shape=", g->tensors[op->tensor].name);
    print_shape(out, op->ndim, op->shape);
    fputs(" bind=", out);
    print_bind(out, op->bind, op->ndim);
    fprintf(out, " scope=%s before %s", gt_scope_name(op->scope), b);
    if (op->nusers > 1) fprintf(out, " (+%d more readers)", op->nusers - 1);
    fputc('\n', out);
  }
}

/* ---- JSON ---- */

static void json_ints(FILE *out, const int64_t *v, int n) {
  fputc('[', out);
  for (int k = 0; k < n; k++) fprintf(out, "%s%" PRId64, k ? "," : "", v[k]);
  fputc(']', out);
}

static void json_split(FILE *out, const GtSplit *sp) {
  if (!sp->split) fputs("null", out);
  else fprintf(out, "{\"n\":%d,\"factor\":%" PRId64 ",\"dim\":%d}", sp->n, sp->factor, sp->dim);
}

static void json_order(FILE *out, const int *o, int n) {
  fputc('[', out);
  for (int i = 0; i < n; i++) fprintf(out, "%s%d", i ? "," : "", o[i]);
  fputc(']', out);
}

/* "order": the chosen name, peak, bound and gap, each order with its peak, the search. */
static void json_orders(FILE *out, const GtSchedule *s) {
  fprintf(out, "\"order\":{\"chosen\":\"%s\",\"peak_bytes\":%" PRId64 ",\"lower_bound_bytes\":%" PRId64
               ",\"gap\":\"%s\",\"peak_bfs_bytes\":%" PRId64 ",\"peak_dfs_bytes\":%" PRId64
               ",\"peak_footprint_bytes\":%" PRId64 ",\"bfs\":",
          s->order_name, s->peak, s->peak_bound, gt_order_gap_text(s->arena, s->peak, s->peak_bound),
          s->peak_bfs, s->peak_dfs, s->peak_foot);
  json_order(out, s->order_bfs, s->ninsts);
  fputs(",\"dfs\":", out);
  json_order(out, s->order_dfs, s->ninsts);
  fputs(",\"footprint\":", out);
  json_order(out, s->order_foot, s->ninsts);
  if (s->order_opt) {
    const GtOrderResult *r = &s->optimal;
    fprintf(out, ",\"optimal\":{\"peak_bytes\":%" PRId64 ",\"greedy_peak_bytes\":%" PRId64
                 ",\"method\":\"%s\",\"status\":\"%s\",\"dp_states\":%ld,\"ilp_nodes\":%ld,\"order\":",
            r->peak, r->greedy_peak, r->method, gt_order_status_name(r->status), r->dp.work, r->ilp.work);
    json_order(out, s->order_opt, s->ninsts);
    fputc('}', out);
  }
  fputc('}', out);
}

void gt_dump_json(FILE *out, const GtSchedule *s) {
  const GsGraph *g = s->g;
  fputs("{\"format\":\"gtsim-graphturbo-schedule\",\"version\":1,\"model\":", out);
  util_json_str(out, g->name);
  fprintf(out, ",\"batch_per_cluster\":%" PRId64 ",\"lb_capacity_bytes\":%" PRId64
               ",\"cores\":%d,\"iterations\":%d,\n\"groups\":[",
          g->batch, s->lb_capacity, s->cores, s->iterations);
  for (int i = 0; i < s->nlive; i++) {
    const GtGroup *gr = &s->groups[s->live[i]];
    fprintf(out, "%s\n {\"id\":%d,\"ops\":[", i ? "," : "", i);
    for (int k = 0; k < gr->nops; k++) {
      if (k) fputc(',', out);
      util_json_str(out, op_name(g, gr->ops[k]));
    }
    fputs("],\"outputs\":[", out);
    for (int k = 0; k < gr->nouts; k++) {
      if (k) fputc(',', out);
      util_json_str(out, g->tensors[gr->outs[k]].name);
    }
    fputs("],\"split_output\":", out);
    util_json_str(out, g->tensors[gr->out].name);
    fprintf(out, ",\"peak_bytes\":%" PRId64 ",\"best\":", gr->peak);
    json_split(out, &gr->best);
    fputs(",\"splitinfo\":[", out);
    for (int k = 0; k < gr->nsplits; k++) {
      if (k) fputc(',', out);
      json_split(out, &gr->splits[k]);
    }
    fprintf(out, "],\"first_instance\":%d}", s->first_inst[s->live[i]]);
  }
  fputs("],\n\"merges\":[", out);
  for (int i = 0; i < s->nmerges; i++) {
    const GtMerge *m = &s->merges[i];
    fprintf(out, "%s{\"iteration\":%d,\"kind\":\"%s\",\"parts\":[", i ? "," : "", m->iteration,
            gt_merge_name(m->kind));
    for (int k = 0; k < m->nparts; k++) fprintf(out, "%s%d", k ? "," : "", m->parts[k]);
    fprintf(out, "],\"result\":%d}", m->result);
  }
  fputs("],\n\"instances\":[", out);
  for (int i = 0; i < s->ninsts; i++) {
    const GtInstance *in = &s->insts[i];
    int nd = g->tensors[s->groups[in->group].out].ndim;
    fprintf(out, "%s\n {\"id\":%d,\"group\":%d,\"index\":%d,\"dim\":%d,\"lo\":%" PRId64 ",\"hi\":%" PRId64
                 ",\"out_bytes\":%" PRId64 ",\"footprint_bytes\":%" PRId64 ",\"bind\":",
            i ? "," : "", i, s->groups[in->group].topo, in->index, in->dim, in->lo, in->hi,
            in->out_bytes, in->footprint);
    json_ints(out, in->bind, nd);
    fprintf(out, ",\"scope\":\"%s\"}", gt_scope_name(in->scope));
  }
  fputs("],\n\"edges\":[", out); /* [from, to, tensor, dim, lo, hi] */
  for (int e = 0; e < s->nedges; e++) {
    const GtEdge *ed = &s->edges[e];
    fprintf(out, "%s[%d,%d,", e ? "," : "", ed->from, ed->to);
    util_json_str(out, g->tensors[ed->tensor].name);
    fprintf(out, ",%d,%" PRId64 ",%" PRId64 "]", ed->dim, ed->lo, ed->hi);
  }
  fprintf(out, "],\"gray_edges\":%" PRId64 ",\n", s->gray_edges);
  json_orders(out, s);
  fputs(",\n\"extra_ops\":[", out);
  for (int x = 0; x < s->nxops; x++) {
    const GtXop *op = &s->xops[x];
    fprintf(out, "%s\n {\"id\":%d,\"kind\":\"%s\",\"before\":%d,\"readers\":[", x ? "," : "", x,
            gt_xop_name(op->kind), op->consumer);
    for (int k = 0; k < op->nusers; k++) fprintf(out, "%s%d", k ? "," : "", op->users[k]);
    fputs("],\"tensor\":", out);
    util_json_str(out, g->tensors[op->tensor].name);
    fputs(",\"inputs\":[", out);
    for (int k = 0; k < op->nin; k++)
      fprintf(out, "%s{\"%s\":%d}", k ? "," : "", op->in[k].is_xop ? "extra_op" : "instance", op->in[k].id);
    fprintf(out, "],\"dim\":%d,\"shape\":", op->dim);
    json_ints(out, op->shape, op->ndim);
    fputs(",\"bind\":", out);
    json_ints(out, op->bind, op->ndim);
    fprintf(out, ",\"from_scope\":\"%s\",\"scope\":\"%s\"}", gt_scope_name(op->from_scope),
            gt_scope_name(op->scope));
  }
  fputs("]}\n", out);
}
