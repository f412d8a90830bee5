/* lower_tvm.c — the TVM-style grouping (GraphTurbo paper §5 baseline): one kernel
 * per layer. An anchor (conv, dense, matmul) takes its elementwise tail — batchnorm, bias,
 * activation, residual add/sub/mul/div — into its kernel; every other op is a kernel of its own.
 * Every kernel output goes to DDR (fill_placement). The chain rule shared with astitch is in
 * group_kernels() (lower_common.c): a tail op consumes the previous op's output, which nobody
 * else reads, and has the anchor output's shape.
 */
#include "lower.h"

static int tvm_fuse(const GtLowered *l, int head, int op) {
  const GtGraph *g = l->graph;
  return op_lower_kind(g, head) == LK_GEMM && op_is_tvm_tail(g->ops[op].kind);
}

void group_kernels_tvm(GtLowered *l) { group_kernels(l, tvm_fuse); }
