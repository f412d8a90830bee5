/* lower_astitch.c — the AStitch-style grouping (GraphTurbo paper §5 baseline): memory-intensive
 * ops (elementwise, normalisation, softmax) are stitched onto the kernel before them — an
 * anchor's kernel or a chain of memory-intensive ops — and their intermediates stay in LB.
 * Compute-intensive ops (conv, dense, matmul, interaction) start kernels of their own; there is
 * no splitting into instances. Kernel outputs stay on-chip in the cluster's GB when they fit
 * (lower_fill_placement). Row reductions (layernorm, softmax over the last axis) are stitched only
 * where a tile holds whole rows: after dense/matmul or a row-wise vector op, not after a conv
 * (NCHW rows are not the normalised axis).
 */
#include "lower.h"

static int astitch_fuse(const GsLowered *l, int head, int op) {
  const GsGraph *g = l->graph;
  GsOpKind k = g->ops[op].kind, hk = g->ops[head].kind;
  GsLowerKind hl = lower_op_kind(g, head);
  if (hl != LK_GEMM && hl != LK_VEC) return 0;
  if (hk == OP_MAXPOOL || hk == OP_AVGPOOL || hk == OP_GAVGPOOL || hk == OP_TRANSPOSE ||
      hk == OP_PAD)
    return 0;
  if (lower_op_is_tvm_tail(k)) return 1;
  if (k == OP_LAYERNORM || k == OP_SOFTMAX) {
    const GsOp *o = &g->ops[op];
    const GsTensor *y = &g->tensors[o->out[0]];
    int ax = o->at.axis < 0 ? y->ndim + o->at.axis : o->at.axis;
    if (k == OP_SOFTMAX && ax != y->ndim - 1) return 0;
    /* only after a row-wise vector head: after a gemm the reduction would force a tile to
     * hold whole output rows, i.e. all the gemm's columns and their weights at once */
    return hl == LK_VEC && hk != OP_BATCHNORM && hk != OP_CONV2D && hk != OP_CONV1D;
  }
  return 0;
}

void lower_group_kernels_astitch(GsLowered *l) { lower_group_kernels(l, astitch_fuse); }
