/* graph.h — the graph IR: tensors and ops in arrays, referred to by integer ids.
 *
 * A graph is built from its declared form (what a .gtg file or an ONNX model says: input
 * shapes with a symbolic batch N, ops with attributes) and then bound to a batch size by
 * graph_infer(), which fills every tensor's concrete shape and checks every op. Weights are
 * not tensors: they are implied by op attributes (conv out_channels and kernel, dense units,
 * embedding table size, ...) and counted by graph_op_cost().
 *
 * Ids: tensor ids and op ids are indices into g->tensors / g->ops; ops are kept in a
 * topological order (every operand is a graph input or produced by an earlier op).
 * Layout of activations: NCHW for 4-D, NCL for 3-D conv1d, [.., features] otherwise.
 */
#ifndef GS_GRAPH_H
#define GS_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "arch.h"
#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GS_PAD_CONSTANT = 0, GS_PAD_REFLECT = 1, GS_PAD_EDGE = 2 }; /* pad's mode= */
enum { GS_MAX_DIMS = 6, GS_MAX_OPERANDS = 8, GS_DIM_N = -1 /* symbolic batch */ };

/* X(enum, "name", min inputs, max inputs, description) — the op vocabulary. */
#define GS_OPKINDS(X)                                                                   \
  X(OP_CONV2D, "conv2d", 1, 1, "2-D convolution, NCHW; groups, depthwise when groups=C")   \
  X(OP_CONV1D, "conv1d", 1, 1, "1-D convolution, NCL")                                    \
  X(OP_DENSE, "dense", 1, 1, "x[..., K] · W[K, units] (+ bias): weights implied")          \
  X(OP_MATMUL, "matmul", 2, 2, "a[..., M, K] · b[..., K, N] with broadcast of batch dims") \
  X(OP_BATCHNORM, "batchnorm", 1, 1, "inference batchnorm over channel axis 1")            \
  X(OP_LAYERNORM, "layernorm", 1, 1, "normalise over the last axis, with scale and bias")   \
  X(OP_RELU, "relu", 1, 1, "max(x, 0)")                                                    \
  X(OP_RELU6, "relu6", 1, 1, "min(max(x, 0), 6)")                                          \
  X(OP_GELU, "gelu", 1, 1, "x * Phi(x)")                                                   \
  X(OP_SIGMOID, "sigmoid", 1, 1, "1 / (1 + exp(-x))")                                      \
  X(OP_SWISH, "swish", 1, 1, "x * sigmoid(x) (SiLU)")                                      \
  X(OP_TANH, "tanh", 1, 1, "tanh(x)")                                                      \
  X(OP_HSIGMOID, "hard_sigmoid", 1, 1, "min(max(alpha x + beta, 0), 1): alpha, beta not kept")\
  X(OP_HSWISH, "hard_swish", 1, 1, "x * hard_sigmoid(x) (MobileNet-v3)")                   \
  X(OP_GLU, "glu", 1, 1, "split axis in halves a, b: a * sigmoid(b)")                      \
  X(OP_ADD, "add", 2, 2, "a + b, numpy broadcast")                                        \
  X(OP_SUB, "sub", 2, 2, "a - b, numpy broadcast")                                        \
  X(OP_MUL, "mul", 2, 2, "a * b, numpy broadcast")                                        \
  X(OP_DIV, "div", 2, 2, "a / b, numpy broadcast")                                        \
  X(OP_SOFTMAX, "softmax", 1, 1, "softmax over axis")                                      \
  X(OP_MAXPOOL, "maxpool", 1, 1, "2-D max pooling")                                        \
  X(OP_AVGPOOL, "avgpool", 1, 1, "2-D average pooling")                                    \
  X(OP_GAVGPOOL, "global_avgpool", 1, 1, "mean over H and W, keeps [N, C, 1, 1]")         \
  X(OP_CONCAT, "concat", 1, GS_MAX_OPERANDS, "concatenate along axis")                     \
  X(OP_SPLIT, "split", 1, 1, "split along axis into sizes (several outputs)")              \
  X(OP_RESHAPE, "reshape", 1, 1, "new shape, same element count")                          \
  X(OP_TRANSPOSE, "transpose", 1, 1, "permute axes")                                       \
  X(OP_EMBEDDING, "embedding", 1, 1, "rows of a [vocab, dim] table; bag>1 sums bag rows")  \
  X(OP_INTERACTION, "interaction", 1, 1, "DLRM pairwise dot products of F feature vectors")  \
  X(OP_RESIZE, "resize", 1, 1, "NCHW to spatial size (h,w): nearest, or bilinear (linear=1)")  \
  X(OP_PAD, "pad", 1, 1, "pad any axes: constant (mode=0), reflect (1) or edge (2)")
typedef enum {
#define X(e, n, lo, hi, d) e,
  GS_OPKINDS(X)
#undef X
  OP_COUNT
} GsOpKind;
const char *graph_opkind_name(GsOpKind k);
int graph_opkind_parse(const char *s, GsOpKind *out);

typedef struct {
  int64_t units;            /* conv out channels; dense output features */
  int kernel[2];            /* kh, kw (conv1d/pool: kernel[1] used for 1-D) */
  int stride[2];
  int pad[4];               /* top, left, bottom, right */
  int dilation[2];
  int groups;
  int bias;                 /* conv/dense: has a bias vector */
  int axis;                 /* softmax, concat, split, glu (negative counts from the end) */
  int nsizes;               /* split: number of outputs and their sizes along axis */
  int64_t sizes[GS_MAX_OPERANDS];
  int nperm;                /* transpose */
  int perm[GS_MAX_DIMS];
  int nshape;               /* reshape target; may contain GS_DIM_N and one -2 ("infer") */
  int64_t shape[GS_MAX_DIMS];
  int64_t vocab, dim, bag;  /* embedding: table rows, row width, rows summed per lookup */
  int self_interaction;     /* interaction: include i==j pairs */
  int pad_interaction;      /* interaction: output also carries the dense feature */
  int ceil_mode;            /* maxpool/avgpool: output size rounds up (ONNX ceil_mode) */
  int size[2];              /* resize: output height and width */
  int linear;               /* resize: bilinear (4 neighbours) instead of nearest */
  int npads;                /* pad: 2·rank values, ONNX order: the begins of every axis, then */
  int pads[2 * GS_MAX_DIMS]; /* the ends */
  int pad_mode;             /* pad: GS_PAD_CONSTANT, GS_PAD_REFLECT, GS_PAD_EDGE */
} GsAttrs;

typedef struct {
  const char *name;
  int ndim;
  int64_t decl[GS_MAX_DIMS]; /* declared dims of graph inputs (may be GS_DIM_N) */
  int64_t dim[GS_MAX_DIMS];  /* concrete dims after graph_infer() */
  GsDtype dtype;
  int producer;              /* op id, or -1 for a graph input */
  int line, col;             /* where it was defined */
} GsTensor;

typedef struct {
  GsOpKind kind;
  const char *name;          /* optional, for messages (defaults to the first output's name) */
  int nin, nout;
  int in[GS_MAX_OPERANDS];
  int out[GS_MAX_OPERANDS];
  GsAttrs at;
  int line, col;             /* source position (file in GsGraph.file) */
} GsOp;

typedef struct {
  GsArena *arena;            /* owns names and the graph itself */
  const char *name;
  const char *file;          /* source file for messages */
  int version;               /* .gtg format version */
  int64_t default_batch;     /* from the header; --batch overrides */
  int64_t batch;             /* bound by graph_infer() */
  GsDtype dtype;             /* default activation dtype */
  int cast_from;             /* graph_cast(): the activation dtype before the cast, else -1 */
  int ntensors, cap_tensors;
  GsTensor *tensors;
  int nops, cap_ops;
  GsOp *ops;
  int ninputs, noutputs;
  int *inputs, *outputs;     /* tensor ids; outputs = tensors nobody consumes, in order */
  int cap_inputs, cap_outputs;
  const char *src;           /* source text (arena copy) for carets in messages, or NULL */
  int *name_index;           /* open-addressing hash of tensor names -> id (-1 empty) */
  int cap_name_index;        /* power of two, or 0 */
} GsGraph;

/* Building (parsers, importers, tests). Both adders return -1 (and add nothing) for a name
 * that is empty or already used, a bad dim (< 1 and not GS_DIM_N) or rank (1..GS_MAX_DIMS),
 * a wrong operand count for the kind, an operand id that does not exist yet, or more than
 * one output for any kind but split. Call graph_fill_outputs() when done, then graph_infer(). */
GsGraph *graph_new(const char *name);
void graph_free(GsGraph *g);
int graph_add_input(GsGraph *g, const char *name, int ndim, const int64_t *decl, GsDtype t);
/* Adds an op whose outputs are new tensors named out_names[i]; returns the op id. */
int graph_add_op(GsGraph *g, GsOpKind k, const int *in, int nin, const char *const *out_names,
                 int nout, const GsAttrs *at);
int graph_find_tensor(const GsGraph *g, const char *name); /* -1 if none */
void graph_attrs_default(GsAttrs *at);  /* stride 1, dilation 1, groups 1, axis -1, ... */

/* Bind the batch and infer/check every shape. Errors go to d with the op's position and
 * both shapes where a mismatch is the cause; returns 0 or -1. A graph with a fixed batch
 * (graph_batch_fixed) binds only its own, g->default_batch: any other is an error, since its
 * shapes would not follow (an ONNX export with batch 1 run as batch 8 would report batch 8
 * and compute batch 1). */
int graph_infer(GsGraph *g, int64_t batch, GsDiag *d);
/* --dtype: casts the model's activations and weights to t before scheduling. Every float
 * tensor (fp16, bf16, fp32) becomes t, and so do tensors of the graph's activation dtype when
 * that is an integer type; other integer tensors (token ids, indices) keep theirs. Sets
 * g->dtype = t and g->cast_from, and re-infers at g->batch when bound. Returns 0 or -1. */
int graph_cast(GsGraph *g, GsDtype t, GsDiag *d);
/* 1 when no graph input has a symbolic batch dimension (GS_DIM_N): the shapes are fixed. */
int graph_batch_fixed(const GsGraph *g);
/* Recompute g->outputs (tensors with no consumer, in id order). */
void graph_fill_outputs(GsGraph *g);
/* The tensor whose storage t shares: t, or the input of the chain of reshapes making t. */
int graph_root(const GsGraph *g, int t);
/* 1 when t is the root (graph_root) of a graph output. */
int graph_is_output(const GsGraph *g, int t);

/* Per-op accounting (after graph_infer). MACs for conv/dense/matmul/interaction, FLOPs for the
 * rest (elementwise = 1 per output element unless documented otherwise in docs/gtg.md). */
typedef struct {
  int64_t macs;
  int64_t flops;             /* 2*macs + non-MAC FLOPs */
  int64_t params;            /* weight + bias elements */
  int64_t param_bytes;
  int64_t in_bytes, out_bytes; /* activation bytes read and written */
} GsOpCost;
GsOpCost graph_op_cost(const GsGraph *g, int op);
int64_t graph_tensor_elems(const GsTensor *t);
int64_t graph_tensor_bytes(const GsTensor *t);
/* Bytes per sample of a batch-major tensor (dim 0 a multiple of the batch), else 0. */
int64_t graph_per_sample(const GsGraph *g, int t);

/* .gtg text (docs/gtg.md). The loaded graph is already inferred at the file's batch
 * (g->batch == g->default_batch); on a bad file, one error goes to d and NULL is returned. */
GsGraph *gtg_parse(const char *path, const char *text, GsDiag *d);
GsGraph *gtg_load(const char *path, GsDiag *d);
void gtg_write(FILE *out, const GsGraph *g);
/* ONNX (onnx_import.c) */
GsGraph *onnx_load(const char *path, GsDiag *d);
/* Any model file by extension: .gtg or .onnx */
GsGraph *model_load(const char *path, GsDiag *d);

/* --stats */
void graph_print_stats(FILE *out, const GsGraph *g, int json);

/* 1 if s is a valid .gtg name ([A-Za-z_][A-Za-z0-9_.-]*); importers must produce such names
 * for a graph to be written by gtg_write(). */
int gtg_name_valid(const char *s);
/* Largest live activation: tensors live from their producer (graph inputs: from op 0) to their
 * last consumer (or their producer when unused). Returns the peak sum of live activation bytes
 * and stores the op id where it first peaks in *at_op (-1 for a graph without ops). */
int64_t graph_peak_live_bytes(const GsGraph *g, int *at_op);
/* Operand count limits of an op kind (the X-macro's min/max inputs). */
int graph_opkind_min_inputs(GsOpKind k);
int graph_opkind_max_inputs(GsOpKind k);
/* Formats dims as "[2, 64, 56, 56]" into buf; returns buf. */
char *graph_shape_str(char *buf, size_t size, const int64_t *dim, int ndim);
/* Invariant checker for passes that edit the graph: ops in topological order,
 * one producer per tensor and producer ids that agree, inputs listed once, valid operand and
 * output counts, unique names found by graph_find_tensor, and (when g->batch is set) every
 * dim >= 1. Returns NULL, or a description of the first violation. Typical use:
 *   const char *bad = graph_check(g); if (bad) die("after %s: %s", pass, bad); */
const char *graph_check(const GsGraph *g);
/* --stats --csv: the per-kind table (kind,count,macs,flops,params) and a "total" row. */
void graph_print_stats_csv(FILE *out, const GsGraph *g);

#ifdef __cplusplus
}
#endif
#endif
