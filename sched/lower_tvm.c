/* lower_tvm.c — the TVM-style grouping (GraphTurbo paper §5 baseline): one kernel
 * per layer. An anchor (conv, dense, matmul) takes its elementwise tail — batchnorm, bias,
 * activation, residual add/sub/mul/div — into its kernel; every other op is a kernel of its own.
 * Every kernel output goes to DDR (lower_fill_placement). The chain rule shared with astitch is in
 * lower_group_kernels() (lower_common.c): a tail op consumes the previous op's output, which nobody
 * else reads, and has the anchor output's shape.
 */
#include "lower.h"

static int tvm_fuse(const GsLowered *l, int head, int op) {
  const GsGraph *g = l->graph;
  return lower_op_kind(g, head) == LK_GEMM && lower_op_is_tvm_tail(g->ops[op].kind);
}

void lower_group_kernels_tvm(GsLowered *l) { lower_group_kernels(l, tvm_fuse); }
