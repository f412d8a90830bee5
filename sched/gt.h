/* gt.h — the GraphTurbo graph-level scheduler (paper §3): data structures and pipeline.
 *
 * Module map (one file per pass, driven top to bottom by gt_schedule() in gt.c):
 *   gt.c            driver, options, shared helpers, invariant checker (gt_check)
 *   gt_dims.c       how an output index range of an op maps back to its operands (match_dim)
 *   gt_splitinfo.c  Algorithm 1 (SplitInfo) and Eq. 1 (BestSplit)           gt_compute_splitinfo
 *   gt_group.c      Algorithm 2: straight / diamond / branch merges           gt_group_subgraphs
 *   gt_instances.c  split groups into instances, pruned instance DAG          gt_split_instances
 *   gt_order.c      BFS, DFS (Alg. 3) and footprint orders, peak memory, choice gt_order_instances
 *   gt_order_opt.c  --gt-order optimal: lower bound, then the DP or the ILP     gt_order_optimal
 *   gt_order_dp.c   exact minimum-peak order by a DP over downsets             gt_order_dp
 *   gt_order_ilp.c  minimum-peak order as an ILP on GLPK (time limited)        gt_order_ilp
 *   gt_bind.c       Algorithm 4: binding tuples and buffer scopes             gt_bind_instances
 *   gt_concat.c     §3.5 concat / copy / redistribute insertion               gt_insert_concats
 *   gt_dump.c       text dump after any pass, JSON of the final schedule
 *
 * Everything lives in one arena (GtSchedule.arena) and is referred to by integer ids: a
 * group id indexes GtSchedule.groups (merged-away groups stay, with alive = 0, so the merge
 * log can name them), an instance id indexes .insts, an extra-op id indexes .xops.
 * The graph must be bound by graph_infer() to the batch of ONE cluster (the paper's n);
 * docs/graphturbo.md lists every decision taken where the paper is vague.
 */
#ifndef GS_GT_H
#define GS_GT_H

#include <stdint.h>
#include <stdio.h>

#include "arch.h"
#include "graph.h"
#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_INF_FACTOR INT64_MAX /* f of a sub-graph no split makes fit (Alg. 1's f_d = inf) */
enum { GT_NPASSES_MAX = 8 };    /* room for the passes below */

typedef enum { GT_LB_CLUSTER, GT_LB_CORE } GtLbScope;
typedef enum { GT_INIT_CHAIN, GT_INIT_LAYER, GT_INIT_OP } GtInitGroups;
typedef enum {
  GT_ORDER_AUTO, GT_ORDER_BFS, GT_ORDER_DFS, GT_ORDER_FOOTPRINT, GT_ORDER_OPTIMAL
} GtOrderChoice;
typedef enum { GT_FOOT_OP, GT_FOOT_LIVE } GtFootprint;

typedef struct {
  GtLbScope lb_scope;       /* sizeof(LB) of Alg. 1: all LBs of a cluster, or one core's */
  int64_t lb_bytes;         /* > 0: override the capacity derived from the arch */
  GtInitGroups init;        /* the sub-graphs Alg. 2 starts from */
  double max_recompute;     /* reject a split whose recomputed work exceeds this fraction */
  GtOrderChoice order;      /* auto = lower peak of BFS and DFS (ties: DFS) */
  double order_time_limit;  /* seconds the ILP of GT_ORDER_OPTIMAL may run (default 2) */
  int check;                /* run gt_check() after every pass (default: 1 unless NDEBUG) */
  GtFootprint footprint;    /* Alg. 1's peak: largest op working set, or largest live set */
} GtOptions;
void gt_options_default(GtOptions *o);

/* (split_d, n_d, f_d, d) of Algorithm 1. */
typedef struct {
  int split;
  int n;                    /* ops split by d */
  int64_t factor;           /* f_d: number of instances */
  int dim;                  /* dimension of the group's output tensor */
} GtSplit;

typedef struct {
  int nops, *ops;           /* op ids, ascending (a topological order) */
  int nouts, *outs;         /* tensors read outside the group or graph outputs, ascending */
  int out;                  /* the output tensor Alg. 1 splits (the largest; ties: lowest id) */
  int64_t peak;             /* bytes: Alg. 1's peak (opt.footprint, docs/graphturbo.md) */
  int nsplits;
  GtSplit *splits;          /* SplitInfo, by dimension */
  GtSplit best;             /* Eq. 1; best.split = 0 when nothing fits (factor = INF) */
  int alive;                /* 0 once merged into another group */
  int topo;                 /* position among live groups (valid after gt_group_subgraphs) */
} GtGroup;

typedef enum { GT_MERGE_STRAIGHT, GT_MERGE_DIAMOND, GT_MERGE_BRANCH } GtMergeKind;
const char *gt_merge_name(GtMergeKind k);
typedef struct {
  GtMergeKind kind;
  int iteration;            /* 1-based repeat of Alg. 2's loop */
  int nparts, parts[3];     /* group ids merged (producer first) */
  int result;               /* the new group id */
} GtMerge;

/* Index ranges. A requirement on a tensor: nothing, a range on one dim, or all of it. */
typedef enum { GT_REQ_NONE, GT_REQ_RANGE, GT_REQ_FULL } GtReqKind;
typedef struct {
  GtReqKind kind;
  int dim;
  int64_t lo, hi;
} GtReq;
typedef enum { GT_SCOPE_LB, GT_SCOPE_GB } GtBufScope;
const char *gt_scope_name(GtBufScope s);

typedef struct {
  int group, index;         /* instance index in [0, factor) of its group */
  int dim;                  /* split dimension of the group output (-1: not split) */
  int64_t lo, hi;           /* slice [lo, hi) of dim */
  int64_t out_bytes;        /* bytes of the output slice */
  int64_t footprint;        /* ceil(peak / factor) */
  int nprod, *prod;         /* producer edge ids (pruned DAG), ascending by producer */
  int ncons, *cons;         /* consumer edge ids */
  int64_t bind[GS_MAX_DIMS];/* Alg. 4 binding factors per output dim (0 = not bound yet) */
  GtBufScope scope;            /* where the output slice lives */
} GtInstance;

typedef struct {
  int from, to;             /* instance ids */
  int tensor;               /* the producer group's output tensor read by `to` */
  int dim;                  /* dim of `tensor` the range is on (-1: the whole tensor) */
  int64_t lo, hi;           /* the part of `tensor` `to` reads that `from` produced (0, 0
                               when dim is -1) */
} GtEdge;

typedef enum { GT_XOP_CONCAT, GT_XOP_COPY, GT_XOP_REDISTRIBUTE } GtXopKind;
const char *gt_xop_name(GtXopKind k);
typedef struct {
  int is_xop;               /* 0: an instance output; 1: the result of an extra op */
  int id;
} GtRef;
typedef struct {
  GtXopKind kind;
  int consumer;             /* first instance that reads it: it runs right before that one */
  int nusers, cap_users;    /* every instance that reads it (users[0] == consumer); an */
  int *users;               /* identical value needed again is shared, not rebuilt */
  int tensor;               /* graph tensor this value is (a part of) */
  int nin;
  GtRef *in;                /* concat: parts in order along dim; copy/redistribute: one */
  int ninst, *inst;         /* concat: the producer instance of each part */
  int dim;                  /* concat axis (the producer's split dim) */
  int ndim;
  int64_t shape[GS_MAX_DIMS];
  int64_t bind[GS_MAX_DIMS];
  GtBufScope scope, from_scope;/* copy: from_scope -> scope */
} GtXop;

/* The instance DAG as the order searches see it (gt_order*.c): per node its footprint and
 * output bytes, and its distinct producers and consumers in CSR form. The peak of an order
 * is gt_order_peak's (docs/graphturbo.md, "Orders"). */
typedef struct {
  int n;
  const int64_t *foot, *out;
  const int *pstart, *p;    /* producers of node v: p[pstart[v] .. pstart[v+1]) */
  const int *cstart, *c;    /* consumers of node v: c[cstart[v] .. cstart[v+1]) */
} GtOrderDag;

/* How a search for a minimum-peak order ended. */
typedef enum {
  GT_ORDER_PROVEN,          /* the peak is optimal (bound == peak) */
  GT_ORDER_BUDGET,          /* stopped by its deterministic work budget (states, nodes) */
  GT_ORDER_TIME_LIMIT,      /* the ILP hit the time limit: its result is discarded */
  GT_ORDER_TOO_LARGE,       /* not attempted: the DAG is beyond the method's size limit */
  GT_ORDER_FAILED,          /* the solver gave no usable answer (discarded) */
} GtOrderStatus;
const char *gt_order_status_name(GtOrderStatus st);
/* (peak - bound) / peak as "12.5%" (one decimal, rounded down; "0%" when bound == peak). */
const char *gt_order_gap_text(GsArena *a, int64_t peak, int64_t bound);
typedef struct {
  GtOrderStatus status;
  int improved;             /* 1: the order written is strictly better than the bound given */
  int64_t peak;             /* peak of the best order known at the end */
  int64_t bound;            /* proven lower bound on the optimal peak (<= peak) */
  long work;                /* DP states memoised, or ILP branch-and-bound nodes */
} GtOrderSearch;

/* What --gt-order optimal did: the method that settled it and the gap left. */
typedef struct {
  const char *method;       /* "bound" (best greedy meets the lower bound), "dp" or "ilp" */
  GtOrderStatus status;     /* of that method */
  int64_t peak, bound;      /* the order's peak and the best proven lower bound */
  int64_t greedy_peak;      /* min(BFS, DFS, footprint) peaks: the start and the fallback */
  GtOrderSearch dp, ilp;    /* each method's own outcome (method "bound": neither ran; "dp":
                               the DP ran; "ilp": both ran) */
} GtOrderResult;

typedef struct {
  GsArena *arena;
  const GsGraph *g;
  const GsArch *arch;
  GtOptions opt;
  int64_t lb_capacity;      /* sizeof(LB) used by Alg. 1 */
  int cores;                /* c: cores per cluster */
  /* scratch shared by the passes (owned here, sized by the graph) */
  int *group_of_op;         /* op -> live group id */
  int *cons_start, *cons_ops;/* CSR: consumer ops of each tensor */
  int64_t *op_ws;           /* working set bytes of each op */
  /* groups and merges */
  int ngroups, cap_groups;
  GtGroup *groups;
  int ninit;                /* groups [0, ninit) are the initial sub-graphs */
  int nlive, *live;         /* live group ids in topological order */
  int nmerges, cap_merges;
  GtMerge *merges;
  int iterations;           /* repeats of Alg. 2's loop */
  /* instances */
  int ninsts, *first_inst;  /* group -> first instance id (instances of a group are contiguous) */
  GtInstance *insts;
  int nedges;
  GtEdge *edges;
  int64_t gray_edges;       /* edges before pruning (every producer to every consumer) */
  /* orders (gt_order*.c) */
  int *order_bfs, *order_dfs, *order_foot; /* the greedy orders (instance ids) */
  int64_t peak_bfs, peak_dfs, peak_foot;
  int *order_opt;           /* GT_ORDER_OPTIMAL: the order it found (else NULL) */
  GtOrderResult optimal;    /* GT_ORDER_OPTIMAL: how it was found */
  int *order;               /* points at the chosen one of the orders above */
  int64_t peak;             /* the chosen order's peak */
  int64_t peak_bound;       /* a proven lower bound on every order's peak */
  const char *order_name;   /* bfs, dfs, footprint or optimal */
  const char *order_summary;/* one line for the report: order, peaks, gap */
  /* extra ops */
  int nxops, cap_xops;
  GtXop *xops;
  int *xop_hash, cap_hash;  /* open addressing over xops, for sharing (gt_concat.c) */
  int nbind_mismatch;       /* Alg. 4 line 12 events */
  const char *last_pass;
  double pass_ms[GT_NPASSES_MAX]; /* wall time of each pass (not part of any dump) */
  /* private scratch */
  int *op_mark, stamp;      /* op membership of a tentative group */
  int *scratch[3], cap_scratch; /* gt_fill_live_groups' work arrays */
  int *t_first, *t_last;    /* per tensor, -1 between uses: live ranges (GT_FOOT_LIVE) */
  int infer_q, infer_t;     /* gt_infer_binding's last (consumer, tensor, binding) and the */
  int64_t infer_qb[GS_MAX_DIMS];      /* reads it found per consumer dim: a consumer's */
  GtReq infer_r[GS_MAX_DIMS];         /* producers of one tensor come one after another */
  int infer_pg, infer_pdim; /* and its last answer (infer_ret, infer_pb) for a producer of */
  int64_t infer_plen;       /* group pg split along pdim, plen long: all of the producer */
  int infer_ret;            /* the answer depends on (pg -1: none kept) */
  int64_t infer_pb[GS_MAX_DIMS];
  GtReq *req;               /* per tensor, all NONE between uses */
  int *touched;
} GtSchedule;

/* The passes, in pipeline order; `name` is what --dump-after takes. */
#define GT_PASSES(X)                                                     \
  X(GT_PASS_SPLITINFO, "splitinfo", "SplitInfo and BestSplit of every initial sub-graph") \
  X(GT_PASS_GROUP, "group", "straight/diamond/branch merges (Alg. 2)")     \
  X(GT_PASS_INSTANCES, "instances", "instances and the pruned instance DAG") \
  X(GT_PASS_ORDER, "order", "BFS, DFS (Alg. 3), footprint orders, the chosen one") \
  X(GT_PASS_BIND, "bind", "core binding and buffer scopes (Alg. 4)")       \
  X(GT_PASS_CONCAT, "concat", "concat, copy and redistribute ops (§3.5)")
typedef enum {
#define X(e, n, d) e,
  GT_PASSES(X)
#undef X
  GT_NPASSES
} GtPass;
#ifndef __cplusplus
_Static_assert((int)GT_NPASSES <= (int)GT_NPASSES_MAX, "GT_NPASSES_MAX too small");
#endif
const char *gt_pass_name(GtPass p);
int gt_pass_parse(const char *s, GtPass *out); /* 0 ok, -1 unknown */

/* Runs the passes up to and including `last` (GT_NPASSES - 1 for all). The graph must be
 * inferred (graph_infer) at the per-cluster batch. Never fails on a valid graph; internal
 * inconsistencies die() naming the pass. The result is freed with gt_free(). */
GtSchedule *gt_schedule(const GsGraph *g, const GsArch *a, const GtOptions *o, GtPass last);
void gt_free(GtSchedule *s);

/* The passes (each file's header states its contract). */
void gt_compute_splitinfo(GtSchedule *s);
void gt_group_subgraphs(GtSchedule *s);
void gt_split_instances(GtSchedule *s);
void gt_order_instances(GtSchedule *s);
void gt_bind_instances(GtSchedule *s);
void gt_insert_concats(GtSchedule *s);
/* The order searches (gt_order*.c) on a GtOrderDag; scratch comes from arena `a`.
 * gt_order_peak: the peak on-chip memory of a topological order.
 * gt_order_dfs: Algorithm 3's order (BFS, its starting point, is the order of the node ids).
 * gt_order_footprint: the footprint-first greedy order (heaviest ready footprint first).
 * gt_order_lower_bound: a lower bound on every order's peak (no search).
 * gt_order_dp: exact search for an order with peak < ub (ub = INT64_MAX: the optimum) within
 *   max_states memoised states; writes it to order when found (result.improved).
 * gt_order_ilp: the same as an ILP on GLPK, warm-started from `warm` (a topological order
 *   whose peak is ub), within max_nodes branch-and-bound nodes and time_limit seconds; a run
 *   the time limit stops is discarded (status GT_ORDER_TIME_LIMIT), so results do not depend on
 *   the machine's speed unless that limit is reached.
 * gt_order_optimal: the whole --gt-order optimal search, given the best greedy order. */
int64_t gt_order_peak(const GtOrderDag *d, const int *order, GsArena *a);
void gt_order_dfs(const GtOrderDag *d, GsArena *a, int *order);
void gt_order_footprint(const GtOrderDag *d, GsArena *a, int *order);
int64_t gt_order_lower_bound(const GtOrderDag *d, GsArena *a);
GtOrderSearch gt_order_dp(const GtOrderDag *d, GsArena *a, int64_t ub, long max_states, int *order);
GtOrderSearch gt_order_ilp(const GtOrderDag *d, GsArena *a, const int *warm, int64_t ub,
                           double time_limit, long max_nodes, int *order);
GtOrderResult gt_order_optimal(const GtOrderDag *d, GsArena *a, const int *greedy,
                               double time_limit, int *order);

/* Invariants after `p`; die()s naming the pass on a violation. */
void gt_check(const GtSchedule *s, GtPass p);

/* Dumps (gt_dump.c): the state after pass `p` as text, or the whole schedule as JSON. */
void gt_dump(FILE *out, const GtSchedule *s, GtPass p);
void gt_dump_json(FILE *out, const GtSchedule *s);

/* ---- helpers shared by the passes (gt.c, gt_dims.c, gt_splitinfo.c) ---- */
/* Topological list of live groups into s->live (and each group's .topo). */
void gt_fill_live_groups(GtSchedule *s);
/* Producer / consumer groups of a live group (distinct, ascending topo); returns count. */
int gt_group_producers(const GtSchedule *s, int gid, int *out, int cap);
int gt_group_consumers(const GtSchedule *s, int gid, int *out, int cap);
/* A group from an ascending op list, with outs/out/peak and SplitInfo filled; gt_add_group
 * appends it to s->groups (returns its id) and points group_of_op at it. */
GtGroup gt_make_group(GtSchedule *s, const int *ops, int nops);
int gt_add_group(GtSchedule *s, const GtGroup *gr);
void gt_compute_group_splitinfo(GtSchedule *s, GtGroup *gr);
int gt_split_better(const GtSplit *a, const GtSplit *b); /* Eq. 1: a > b lexicographically */

/* Which part of operand `k` of op `op` is read to compute [lo, hi) of dim `dim` of output
 * `outk` of the op (all other output dims whole). */
GtReq gt_op_input_req(const GsGraph *g, int op, int outk, int dim, int64_t lo, int64_t hi, int k);
/* Back-propagates "output `tensor` restricted to [lo, hi) on dim" through the ops of group
 * `gr` (every external output restricted the same way); req[] is indexed by tensor id and
 * must be all NONE on entry; the touched tensor ids are appended to touched (returns count). */
int gt_group_reqs(const GtSchedule *s, const GtGroup *gr, int dim, int64_t lo, int64_t hi,
                  GtReq *req, int *touched);

/* Alg. 4's infer_binding: the binding of producer instance p's output `tensor` implied by
 * consumer q bound as qb; 0 when invalid or when it binds nothing (gt_bind.c). */
int gt_infer_binding(GtSchedule *s, const GtInstance *q, const int64_t *qb, const GtInstance *p,
                     int tensor, int64_t *pb);

#ifdef __cplusplus
}
#endif
#endif
