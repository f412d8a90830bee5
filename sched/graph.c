/* graph.c — the graph IR builder: tensors and ops in arena arrays with integer ids.
 *
 * Building appends: graph_add_input() and graph_add_op() only ever add a tensor or an op at
 * the end, and an op may only name tensors that already exist, so the op array is always in
 * a topological order (invariant relied on by every pass and by graph_infer()). Names are
 * unique per graph; a string-keyed open-addressing hash (FNV-1a, no pointers hashed) maps a
 * name to its tensor id, so lookups cost O(1) and iteration order never depends on it.
 * Growth reallocates from the arena (old arrays are simply abandoned: at most 2x waste).
 * Shape inference is in graph_infer.c, accounting in graph_cost.c.
 */
#include <string.h>

#include "graph.h"

static const struct {
  const char *name;
  int lo, hi;
} op_table[OP_COUNT] = {
#define X(e, n, lo, hi, d) {n, lo, hi},
    GS_OPKINDS(X)
#undef X
};

const char *graph_opkind_name(GsOpKind k) {
  if ((int)k < 0 || k >= OP_COUNT) return "?";
  return op_table[k].name;
}

int graph_opkind_parse(const char *s, GsOpKind *out) {
  for (int k = 0; k < OP_COUNT; k++)
    if (strcmp(op_table[k].name, s) == 0) {
      *out = (GsOpKind)k;
      return 0;
    }
  return -1;
}

int graph_opkind_min_inputs(GsOpKind k) { return op_table[k].lo; }
int graph_opkind_max_inputs(GsOpKind k) { return op_table[k].hi; }

void graph_attrs_default(GsAttrs *at) {
  memset(at, 0, sizeof *at);
  at->kernel[0] = at->kernel[1] = 1;
  at->stride[0] = at->stride[1] = 1;
  at->dilation[0] = at->dilation[1] = 1;
  at->groups = 1;
  at->bias = 1; /* PyTorch's default for nn.Conv*d and nn.Linear */
  at->axis = -1;
  at->bag = 1;
}

GsGraph *graph_new(const char *name) {
  GsArena *a = arena_new();
  GsGraph *g = arena_alloc(a, sizeof *g);
  g->arena = a;
  g->name = arena_strdup(a, name ? name : "graph");
  g->file = g->name;
  g->version = 1;
  g->default_batch = 1;
  g->batch = 0;
  g->dtype = DT_FP16;
  g->cast_from = -1;
  return g;
}

void graph_free(GsGraph *g) {
  if (g) arena_free(g->arena);
}

/* Grows an arena array of `elem`-byte items to hold at least `need` items. */
static void grow(GsArena *a, void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return;
  int ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > (1 << 29)) die("graph too large");
    ncap *= 2;
  }
  void *n = arena_alloc(a, (size_t)ncap * elem);
  if (*cap) memcpy(n, *arr, (size_t)*cap * elem);
  *arr = n;
  *cap = ncap;
}

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void index_insert(GsGraph *g, int id) {
  uint32_t mask = (uint32_t)g->cap_name_index - 1;
  for (uint32_t i = name_hash(g->tensors[id].name) & mask;; i = (i + 1) & mask)
    if (g->name_index[i] < 0) {
      g->name_index[i] = id;
      return;
    }
}

/* Keeps the load factor of the name index at or below 1/2. */
static void index_reserve(GsGraph *g, int n) {
  if (2 * n <= g->cap_name_index) return;
  int cap = g->cap_name_index ? g->cap_name_index : 64;
  while (2 * n > cap) cap *= 2;
  g->name_index = arena_alloc(g->arena, (size_t)cap * sizeof(int));
  g->cap_name_index = cap;
  for (int i = 0; i < cap; i++) g->name_index[i] = -1;
  for (int t = 0; t < g->ntensors; t++) index_insert(g, t);
}

int graph_find_tensor(const GsGraph *g, const char *name) {
  if (!g->cap_name_index || !name) return -1;
  uint32_t mask = (uint32_t)g->cap_name_index - 1;
  for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
    int id = g->name_index[i];
    if (id < 0) return -1;
    if (strcmp(g->tensors[id].name, name) == 0) return id;
  }
}

static int new_tensor(GsGraph *g, const char *name, GsDtype t, int producer) {
  index_reserve(g, g->ntensors + 1);
  grow(g->arena, (void **)&g->tensors, &g->cap_tensors, g->ntensors + 1, sizeof(GsTensor));
  int id = g->ntensors++;
  GsTensor *x = &g->tensors[id];
  memset(x, 0, sizeof *x);
  x->name = arena_strdup(g->arena, name);
  x->dtype = t;
  x->producer = producer;
  index_insert(g, id);
  return id;
}

int graph_add_input(GsGraph *g, const char *name, int ndim, const int64_t *decl, GsDtype t) {
  if (!name || !*name || graph_find_tensor(g, name) >= 0) return -1;
  if (ndim < 1 || ndim > GS_MAX_DIMS || (int)t < 0 || t >= DT_COUNT) return -1;
  for (int i = 0; i < ndim; i++)
    if (decl[i] < 1 && decl[i] != GS_DIM_N) return -1;
  int id = new_tensor(g, name, t, -1);
  GsTensor *x = &g->tensors[id];
  x->ndim = ndim;
  memcpy(x->decl, decl, (size_t)ndim * sizeof *decl);
  grow(g->arena, (void **)&g->inputs, &g->cap_inputs, g->ninputs + 1, sizeof(int));
  g->inputs[g->ninputs++] = id;
  return id;
}

int graph_add_op(GsGraph *g, GsOpKind k, const int *in, int nin, const char *const *out_names,
                 int nout, const GsAttrs *at) {
  if ((int)k < 0 || k >= OP_COUNT) return -1;
  if (nin < op_table[k].lo || nin > op_table[k].hi) return -1;
  if (nout < 1 || nout > (k == OP_SPLIT ? GS_MAX_OPERANDS : 1)) return -1;
  for (int i = 0; i < nin; i++)
    if (in[i] < 0 || in[i] >= g->ntensors) return -1;
  for (int i = 0; i < nout; i++) {
    if (!out_names[i] || !*out_names[i] || graph_find_tensor(g, out_names[i]) >= 0) return -1;
    for (int j = 0; j < i; j++)
      if (strcmp(out_names[i], out_names[j]) == 0) return -1;
  }
  grow(g->arena, (void **)&g->ops, &g->cap_ops, g->nops + 1, sizeof(GsOp));
  int id = g->nops++;
  GsOp *op = &g->ops[id];
  memset(op, 0, sizeof *op);
  op->kind = k;
  op->nin = nin;
  op->nout = nout;
  memcpy(op->in, in, (size_t)nin * sizeof *in);
  if (at) op->at = *at;
  else graph_attrs_default(&op->at);
  /* Outputs take the first operand's dtype for now; graph_infer() sets the final one. */
  GsDtype t = g->tensors[in[0]].dtype;
  for (int i = 0; i < nout; i++) op->out[i] = new_tensor(g, out_names[i], t, id);
  op->name = g->tensors[op->out[0]].name;
  return id;
}

void graph_fill_outputs(GsGraph *g) {
  unsigned char *used = arena_alloc(g->arena, (size_t)g->ntensors + 1);
  for (int o = 0; o < g->nops; o++)
    for (int i = 0; i < g->ops[o].nin; i++) used[g->ops[o].in[i]] = 1;
  g->noutputs = 0;
  for (int t = 0; t < g->ntensors; t++) {
    if (used[t]) continue;
    grow(g->arena, (void **)&g->outputs, &g->cap_outputs, g->noutputs + 1, sizeof(int));
    g->outputs[g->noutputs++] = t;
  }
}

int graph_root(const GsGraph *g, int t) {
  while (g->tensors[t].producer >= 0 && g->ops[g->tensors[t].producer].kind == OP_RESHAPE)
    t = g->ops[g->tensors[t].producer].in[0];
  return t;
}

int graph_is_output(const GsGraph *g, int t) {
  for (int i = 0; i < g->noutputs; i++)
    if (graph_root(g, g->outputs[i]) == t) return 1;
  return 0;
}

const char *graph_check(const GsGraph *g) {
  int *seen_input = arena_alloc(g->arena, (size_t)g->ntensors * sizeof(int) + 1);
  for (int i = 0; i < g->ninputs; i++) {
    int t = g->inputs[i];
    if (t < 0 || t >= g->ntensors) return arena_printf(g->arena, "input %d is no tensor", i);
    if (seen_input[t]++) return arena_printf(g->arena, "tensor %d listed twice as input", t);
    if (g->tensors[t].producer != -1)
      return arena_printf(g->arena, "input '%s' has producer %d", g->tensors[t].name,
                      g->tensors[t].producer);
  }
  /* defined[t]: t is an input or the output of an op already visited */
  unsigned char *defined = arena_alloc(g->arena, (size_t)g->ntensors + 1);
  for (int i = 0; i < g->ninputs; i++) defined[g->inputs[i]] = 1;
  for (int o = 0; o < g->nops; o++) {
    const GsOp *op = &g->ops[o];
    if ((int)op->kind < 0 || op->kind >= OP_COUNT)
      return arena_printf(g->arena, "op %d has kind %d", o, (int)op->kind);
    if (op->nin < op_table[op->kind].lo || op->nin > op_table[op->kind].hi || op->nout < 1 ||
        op->nout > (op->kind == OP_SPLIT ? GS_MAX_OPERANDS : 1))
      return arena_printf(g->arena, "op %d (%s) has %d operands and %d outputs", o,
                      op_table[op->kind].name, op->nin, op->nout);
    for (int i = 0; i < op->nin; i++) {
      int t = op->in[i];
      if (t < 0 || t >= g->ntensors || !defined[t])
        return arena_printf(g->arena, "op %d (%s) reads tensor %d before it is defined", o,
                        op_table[op->kind].name, t);
    }
    for (int i = 0; i < op->nout; i++) {
      int t = op->out[i];
      if (t < 0 || t >= g->ntensors || defined[t] || g->tensors[t].producer != o)
        return arena_printf(g->arena, "op %d (%s) output %d: tensor %d has another producer",
                        o, op_table[op->kind].name, i, t);
      defined[t] = 1;
    }
  }
  for (int t = 0; t < g->ntensors; t++) {
    const GsTensor *x = &g->tensors[t];
    if (!defined[t]) return arena_printf(g->arena, "tensor %d has no producer", t);
    if (graph_find_tensor(g, x->name) != t)
      return arena_printf(g->arena, "tensor %d's name is not unique or not indexed", t);
    if (g->batch > 0 && (x->ndim < 1 || x->ndim > GS_MAX_DIMS))
      return arena_printf(g->arena, "tensor '%s' has %d dims", x->name, x->ndim);
    for (int k = 0; g->batch > 0 && k < x->ndim; k++)
      if (x->dim[k] < 1)
        return arena_printf(g->arena, "tensor '%s' has dim %d = %lld", x->name, k,
                        (long long)x->dim[k]);
  }
  return NULL;
}

static int dtype_is_float(GsDtype t) { return t == DT_FP16 || t == DT_BF16 || t == DT_FP32; }

int graph_cast(GsGraph *g, GsDtype t, GsDiag *d) {
  GsDtype from = g->dtype;
  int castint = !dtype_is_float(from); /* an integer model: its activations are `from` */
  for (int i = 0; i < g->ntensors; i++) {
    GsTensor *x = &g->tensors[i];
    if (dtype_is_float(x->dtype) || (castint && x->dtype == from)) x->dtype = t;
  }
  for (int o = 0; o < g->nops; o++) /* ids stay integers, whatever the model's dtype */
    if (g->ops[o].kind == OP_EMBEDDING && g->tensors[g->ops[o].in[0]].dtype == t && castint)
      g->tensors[g->ops[o].in[0]].dtype = from;
  if (from != t && g->cast_from < 0) g->cast_from = (int)from;
  g->dtype = t;
  return g->batch > 0 ? graph_infer(g, g->batch, d) : 0;
}
