/* onnx_fuse.c — pattern pre-pass: recognises the decomposed forms exporters emit for ops the
 * IR has as one op, before any node is mapped.
 *
 *   erf-GELU   x * 0.5 * (1 + erf(x / sqrt(2)))      (Div or Mul by 1/sqrt(2); the 0.5 may be
 *              applied first, last, or to x)          -> gelu(x)
 *   swish      Mul(x, Sigmoid(x))                      -> swish(x)
 *   layernorm  ReduceMean, Sub, Pow 2 (or Mul d*d), ReduceMean, Add eps, Sqrt, Div, then an
 *              optional Mul by a constant scale and Add of a constant bias -> layernorm(x)
 *
 * Each match marks its nodes FUSE_SKIP and its last node FUSE_EMIT (with the pattern's input
 * x); the node walk in onnx_import.c then emits one op there. A match requires every
 * intermediate value to be read only inside the pattern (not by another node, not a graph
 * output), so skipping the intermediates can never leave a reader without its value. A node
 * belongs to at most one pattern. The scan is linear per candidate (n is the node count of one
 * model, a few thousand at most).
 */
#include <math.h>
#include <string.h>

#include "onnx_imp.h"

typedef const Onnx__NodeProto Node;

static int is_op(Node *n, const char *op) { return n && strcmp(n->op_type, op) == 0; }

static Node *producer(OxCtx *c, const char *name) {
  int i = ox_map_get(&c->producer, name);
  return i < 0 ? NULL : c->gp->node[i];
}

/* The only reader of `name`, or NULL if it has several, none, or is a graph output. */
static Node *sole_consumer(OxCtx *c, const char *name) {
  Node *found = NULL;
  for (size_t i = 0; i < c->gp->n_output; i++)
    if (c->gp->output[i]->name && strcmp(c->gp->output[i]->name, name) == 0) return NULL;
  for (size_t i = 0; i < c->gp->n_node; i++) {
    Node *n = c->gp->node[i];
    for (size_t j = 0; j < n->n_input; j++) {
      if (strcmp(n->input[j], name) != 0) continue;
      if (found && found != n) return NULL;
      found = n;
    }
  }
  return found;
}

/* Readers of `name` (distinct nodes), at most max; -1 if it is a graph output. */
static int readers(OxCtx *c, const char *name, Node **out, int max) {
  int k = 0;
  for (size_t i = 0; i < c->gp->n_output; i++)
    if (c->gp->output[i]->name && strcmp(c->gp->output[i]->name, name) == 0) return -1;
  for (size_t i = 0; i < c->gp->n_node; i++) {
    Node *n = c->gp->node[i];
    for (size_t j = 0; j < n->n_input; j++)
      if (strcmp(n->input[j], name) == 0) {
        if (k < max) out[k] = n;
        k++;
        break;
      }
  }
  return k;
}

/* The value of a one-element constant: an initializer or a Constant node's output. */
static int scalar(OxCtx *c, const char *name, double *v) {
  OxVal *val = ox_val(c, name);
  if (val && val->kind == VAL_CONST) {
    if (!val->data || val->nelem != 1 || val->data[0].n) return 0;
    *v = val->data[0].v;
    return 1;
  }
  Node *p = producer(c, name);
  if (!is_op(p, "Constant")) return 0;
  const Onnx__AttributeProto *a = ox_attr(p, "value");
  if (a && a->t) {
    OxVal t;
    ox_decode_tensor(c, a->t, name, &t);
    if (!t.data || t.nelem != 1) return 0;
    *v = t.data[0].v;
    return 1;
  }
  if ((a = ox_attr(p, "value_float")) && a->has_f) {
    *v = a->f;
    return 1;
  }
  return 0;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-4 * fabs(b); }

/* A constant tensor (initializer, weight input or Constant output). */
static int is_const(OxCtx *c, const char *name) {
  return ox_is_weight_name(c, name) || is_op(producer(c, name), "Constant");
}

/* The other operand of a binary node, given one operand's name; NULL if `name` is neither. */
static const char *other(Node *n, const char *name) {
  if (!n || n->n_input != 2) return NULL;
  if (strcmp(n->input[0], name) == 0) return n->input[1];
  if (strcmp(n->input[1], name) == 0) return n->input[0];
  return NULL;
}

static int node_index(OxCtx *c, Node *n) {
  for (size_t i = 0; i < c->gp->n_node; i++)
    if (c->gp->node[i] == n) return (int)i;
  return -1;
}

/* Marks the nodes of a match; the last one emits. Fails (returns 0) if any is taken. */
static int claim(OxCtx *c, Node **nodes, int k, GsOpKind kind, const char *x, int64_t axis) {
  int idx[16], last = -1;
  for (int i = 0; i < k; i++) {
    idx[i] = node_index(c, nodes[i]);
    if (idx[i] < 0 || c->fuse[idx[i]].state != FUSE_NONE) return 0;
    if (idx[i] > last) last = idx[i];
  }
  for (int i = 0; i < k; i++) c->fuse[idx[i]].state = FUSE_SKIP;
  c->fuse[last].state = FUSE_EMIT;
  c->fuse[last].kind = kind;
  c->fuse[last].x = x;
  c->fuse[last].axis = axis;
  return 1;
}

/* x * 0.5 * (1 + erf(x / sqrt(2))), matched from the Erf node. */
static void match_gelu(OxCtx *c, Node *erf) {
  Node *pre = producer(c, erf->input[0]);
  double v;
  if (!(is_op(pre, "Div") || is_op(pre, "Mul")) || pre->n_input != 2 ||
      !scalar(c, pre->input[1], &v) || sole_consumer(c, pre->output[0]) != erf)
    return;
  if (!near(v, is_op(pre, "Div") ? sqrt(2.0) : sqrt(0.5))) return;
  const char *x = pre->input[0];
  Node *add = sole_consumer(c, erf->output[0]);
  if (!is_op(add, "Add") || !scalar(c, other(add, erf->output[0]) ? other(add, erf->output[0])
                                                                  : "", &v) || !near(v, 1.0))
    return;
  Node *m1 = sole_consumer(c, add->output[0]);
  const char *o = is_op(m1, "Mul") ? other(m1, add->output[0]) : NULL;
  if (!o) return;
  Node *nodes[6] = {pre, erf, add, m1};
  if (strcmp(o, x) == 0 || (scalar(c, o, &v) && near(v, 0.5))) {
    /* (x * (1 + erf)) * 0.5  or  ((1 + erf) * 0.5) * x */
    int half_first = strcmp(o, x) != 0;
    Node *m2 = sole_consumer(c, m1->output[0]);
    const char *o2 = is_op(m2, "Mul") ? other(m2, m1->output[0]) : NULL;
    if (!o2) return;
    if (half_first ? strcmp(o2, x) != 0 : !(scalar(c, o2, &v) && near(v, 0.5))) return;
    nodes[4] = m2;
    claim(c, nodes, 5, OP_GELU, x, 0);
    return;
  }
  /* (x * 0.5) * (1 + erf) */
  Node *half = producer(c, o);
  if (!(is_op(half, "Mul") || is_op(half, "Div")) || half->n_input != 2 ||
      strcmp(half->input[0], x) != 0 || !scalar(c, half->input[1], &v) ||
      !near(v, is_op(half, "Mul") ? 0.5 : 2.0) || sole_consumer(c, half->output[0]) != m1)
    return;
  nodes[4] = half;
  claim(c, nodes, 5, OP_GELU, x, 0);
}

/* Mul(x, Sigmoid(x)) -> swish; Mul(x, HardSigmoid(x)) -> hard_swish (how exporters before
 * opset 14 write it). */
static void match_swish(OxCtx *c, Node *sig, GsOpKind k) {
  Node *m = sole_consumer(c, sig->output[0]);
  const char *o = is_op(m, "Mul") ? other(m, sig->output[0]) : NULL;
  if (!o || strcmp(o, sig->input[0]) != 0) return;
  Node *nodes[2] = {sig, m};
  claim(c, nodes, 2, k, sig->input[0], 0);
}

/* The single reduced axis of a ReduceMean with keepdims (attribute, or input from opset 18). */
static int reduce_axis(OxCtx *c, Node *r, int64_t *axis) {
  if (!is_op(r, "ReduceMean") || !ox_attr_i(r, "keepdims", 1)) return 0;
  int64_t axes[GS_MAX_DIMS];
  int na = ox_attr_ints(c, r, "axes", axes, GS_MAX_DIMS);
  if (na < 0 && r->n_input > 1) {
    OxVal *v = ox_val(c, r->input[1]);
    double d;
    if (!v && !scalar(c, r->input[1], &d)) return 0;
    if (v && (!v->data || v->nelem != 1)) return 0;
    axes[0] = ox_clamp_i64(v ? v->data[0].v : d);
    na = 1;
  }
  if (na != 1) return 0;
  *axis = axes[0];
  return 1;
}

static void match_layernorm(OxCtx *c, Node *r1) {
  int64_t axis, axis2;
  if (!reduce_axis(c, r1, &axis)) return;
  const char *x = r1->input[0];
  Node *sub = sole_consumer(c, r1->output[0]);
  if (!is_op(sub, "Sub") || sub->n_input != 2 || strcmp(sub->input[0], x) != 0 ||
      strcmp(sub->input[1], r1->output[0]) != 0)
    return;
  const char *d = sub->output[0];
  Node *rd[3];
  if (readers(c, d, rd, 3) != 2) return;
  Node *sq = is_op(rd[0], "Div") ? rd[1] : rd[0], *div = is_op(rd[0], "Div") ? rd[0] : rd[1];
  double v;
  if (!is_op(div, "Div") || div->n_input != 2 || sq->n_input != 2 ||
      strcmp(div->input[0], d) != 0)
    return;
  if (is_op(sq, "Pow")) {
    if (strcmp(sq->input[0], d) != 0 || !scalar(c, sq->input[1], &v) || v != 2.0) return;
  } else if (!is_op(sq, "Mul") || strcmp(sq->input[0], d) != 0 || strcmp(sq->input[1], d) != 0) {
    return;
  }
  Node *r2 = sole_consumer(c, sq->output[0]);
  if (!reduce_axis(c, r2, &axis2) || axis2 != axis) return;
  Node *eps = sole_consumer(c, r2->output[0]);
  const char *e = is_op(eps, "Add") ? other(eps, r2->output[0]) : NULL;
  if (!e || !scalar(c, e, &v) || v < 0 || v > 1e-2) return;
  Node *rt = sole_consumer(c, eps->output[0]);
  if (!is_op(rt, "Sqrt") || sole_consumer(c, rt->output[0]) != div ||
      strcmp(div->input[1], rt->output[0]) != 0)
    return;
  Node *nodes[10] = {r1, sub, sq, r2, eps, rt, div};
  int k = 7;
  Node *scale = sole_consumer(c, div->output[0]);
  const char *g = is_op(scale, "Mul") ? other(scale, div->output[0]) : NULL;
  if (g && is_const(c, g)) {
    nodes[k++] = scale;
    Node *shift = sole_consumer(c, scale->output[0]);
    const char *b = is_op(shift, "Add") ? other(shift, scale->output[0]) : NULL;
    if (b && is_const(c, b)) nodes[k++] = shift;
  }
  claim(c, nodes, k, OP_LAYERNORM, x, axis);
}

void ox_fill_fusions(OxCtx *c) {
  for (size_t i = 0; i < c->gp->n_node; i++) {
    Node *n = c->gp->node[i];
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0) continue;
    if (n->n_input < 1 || n->n_output < 1 || c->fuse[i].state != FUSE_NONE) continue;
    c->node = (int)i;
    if (is_op(n, "Erf")) match_gelu(c, n);
    else if (is_op(n, "Sigmoid")) match_swish(c, n, OP_SWISH);
    else if (is_op(n, "HardSigmoid")) match_swish(c, n, OP_HSWISH);
    else if (is_op(n, "ReduceMean")) match_layernorm(c, n);
  }
  c->node = -1;
}
