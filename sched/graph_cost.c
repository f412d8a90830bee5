/* graph_cost.c — per-op accounting (MACs, FLOPs, parameters, activation bytes) and the
 * largest live activation. The rules are the table "Accounting" in docs/gtg.md; each case
 * below cites the formula it implements. All products saturate at INT64_MAX so a hostile
 * graph cannot overflow; graph_infer() rejects any op whose counts reach 2^60.
 * Invariant: flops = 2 * macs + the op's non-MAC FLOPs; costs read only concrete dims.
 */
#include <stdint.h>

#include "graph_priv.h"

static int64_t smul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0) return 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sadd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t graph_tensor_elems(const GsTensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n = smul(n, t->dim[i]);
  return n;
}

int64_t graph_tensor_bytes(const GsTensor *t) {
  return smul(graph_tensor_elems(t), arch_dtype_bytes(t->dtype));
}

/* Bytes per sample of a batch-major tensor, 0 if it is not batch-major. */
int64_t graph_per_sample(const GsGraph *g, int t) {
  const GsTensor *x = &g->tensors[t];
  if (x->ndim == 0 || x->dim[0] % g->batch != 0) return 0;
  return graph_tensor_bytes(x) / g->batch;
}

/* Non-MAC FLOPs per output element of the elementwise-like ops (docs/gtg.md, "Accounting"):
 * a transcendental function (exp, erf, tanh) counts as one FLOP. */
static int64_t flops_per_elem(GsOpKind k) {
  switch (k) {
  case OP_RELU: return 1;      /* max(x, 0) */
  case OP_RELU6: return 2;     /* max, min */
  case OP_GELU: return 5;      /* x/sqrt2, erf, +1, *x, *0.5 */
  case OP_SIGMOID: return 3;   /* exp(-x), +1, reciprocal */
  case OP_SWISH: return 4;     /* sigmoid (3), *x */
  case OP_TANH: return 1;
  case OP_HSIGMOID: return 4;  /* *alpha, +beta, max, min */
  case OP_HSWISH: return 5;    /* hard_sigmoid (4), *x */
  case OP_GLU: return 4;       /* sigmoid(b) (3), a* */
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV: return 1;
  case OP_BATCHNORM: return 2; /* x*scale + shift, mean/var folded into scale and shift */
  case OP_LAYERNORM: return 7; /* sum, -mean, square, sum, *rstd, *gamma, +beta */
  case OP_SOFTMAX: return 5;   /* max, -max, exp, sum, divide */
  default: return 0;
  }
}

GsOpCost graph_op_cost(const GsGraph *g, int o) {
  GsOpCost c = {0};
  const GsOp *op = &g->ops[o];
  const GsAttrs *at = &op->at;
  const GsTensor *x = &g->tensors[op->in[0]];
  const GsTensor *y = &g->tensors[op->out[0]];
  int pbytes = arch_dtype_bytes(g->dtype);
  int64_t out_elems = graph_tensor_elems(y);
  int64_t nonmac = 0;
  for (int i = 0; i < op->nin; i++) c.in_bytes = sadd(c.in_bytes, graph_tensor_bytes(&g->tensors[op->in[i]]));
  for (int i = 0; i < op->nout; i++)
    c.out_bytes = sadd(c.out_bytes, graph_tensor_bytes(&g->tensors[op->out[i]]));
  if (x->ndim == 0 || y->ndim == 0) return c; /* not inferred yet */
  switch (op->kind) {
  case OP_CONV2D:
  case OP_CONV1D: {
    /* MACs = N·Cout·Hout·Wout · (Cin/groups)·kh·kw; weights Cout·(Cin/groups)·kh·kw (+Cout). */
    int64_t window = smul(x->dim[1] / (at->groups > 0 ? at->groups : 1),
                          op->kind == OP_CONV2D ? smul(at->kernel[0], at->kernel[1])
                                                : at->kernel[1]);
    c.macs = smul(out_elems, window);
    c.params = sadd(smul(at->units, window), at->bias ? at->units : 0);
    if (at->bias) nonmac = out_elems;
    break;
  }
  case OP_DENSE: {
    /* MACs = rows·K·units; weights K·units (+units). */
    int64_t k = x->dim[x->ndim - 1];
    c.macs = smul(out_elems, k);
    c.params = sadd(smul(k, at->units), at->bias ? at->units : 0);
    if (at->bias) nonmac = out_elems;
    break;
  }
  case OP_MATMUL: /* MACs = batch·M·N·K = out elements · K */
    c.macs = smul(out_elems, x->dim[x->ndim - 1]);
    break;
  case OP_BATCHNORM: /* parameters gamma and beta: 2·C (running mean/var are buffers) */
    c.params = smul(2, x->dim[1]);
    nonmac = smul(out_elems, flops_per_elem(op->kind));
    break;
  case OP_LAYERNORM: /* gamma and beta over the last axis: 2·D */
    c.params = smul(2, x->dim[x->ndim - 1]);
    nonmac = smul(out_elems, flops_per_elem(op->kind));
    break;
  case OP_MAXPOOL:
  case OP_AVGPOOL: /* one compare/add per window element */
    nonmac = smul(out_elems, smul(at->kernel[0], at->kernel[1]));
    break;
  case OP_RESIZE: /* bilinear: 4 neighbours weighted and summed; nearest: a copy */
    nonmac = at->linear ? smul(out_elems, 7) : 0;
    break;
  case OP_PAD: break; /* data movement only: a vector copy of the output (docs/gtg.md) */
  case OP_GAVGPOOL: /* one add per input element */
    nonmac = graph_tensor_elems(x);
    break;
  case OP_EMBEDDING: /* table vocab·dim; a bag of B rows costs B-1 adds per output element */
    c.params = smul(at->vocab, at->dim);
    nonmac = smul(out_elems, at->bag - 1);
    break;
  case OP_INTERACTION: { /* pairs·D MACs per sample, pairs = F(F-1)/2 or F(F+1)/2 */
    int64_t f = x->dim[1];
    int64_t pairs = smul(f, at->self_interaction ? f + 1 : f - 1) / 2;
    c.macs = smul(smul(x->dim[0], pairs), x->dim[2]);
    break;
  }
  case OP_CONCAT:
  case OP_SPLIT:
  case OP_RESHAPE:
  case OP_TRANSPOSE: break; /* data movement only */
  default: nonmac = smul(out_elems, flops_per_elem(op->kind)); break;
  }
  c.flops = sadd(smul(2, c.macs), nonmac);
  c.param_bytes = smul(c.params, pbytes);
  return c;
}

int64_t graph_peak_live_bytes(const GsGraph *g, int *at_op) {
  *at_op = -1;
  if (g->nops == 0) return 0;
  /* last[t]: index of the last op that touches t (its producer when nothing consumes it). */
  int *last = arena_alloc(g->arena, (size_t)g->ntensors * sizeof(int));
  int64_t *delta = arena_alloc(g->arena, ((size_t)g->nops + 1) * sizeof(int64_t));
  for (int t = 0; t < g->ntensors; t++) last[t] = g->tensors[t].producer < 0 ? 0 : g->tensors[t].producer;
  for (int o = 0; o < g->nops; o++)
    for (int i = 0; i < g->ops[o].nin; i++) last[g->ops[o].in[i]] = o;
  /* A tensor contributes its bytes to every op index in [first, last]. */
  for (int t = 0; t < g->ntensors; t++) {
    int first = g->tensors[t].producer < 0 ? 0 : g->tensors[t].producer;
    int64_t b = graph_tensor_bytes(&g->tensors[t]);
    delta[first] = sadd(delta[first], b);
    delta[last[t] + 1] -= b;
  }
  int64_t live = 0, peak = -1;
  for (int o = 0; o < g->nops; o++) {
    live = sadd(live, delta[o]);
    if (live > peak) {
      peak = live;
      *at_op = o;
    }
  }
  return peak;
}
