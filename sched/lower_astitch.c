/* lower_astitch.c — AStitch (Zheng et al., ASPLOS'22) as the GraphTurbo paper ran it as a
 * baseline (§5: "stitches memory-intensive ops, keeps tensors in L1 but does not split into
 * instances"). Two planning decisions, one per step; the emitter only carries them out.
 *
 * Contract.
 *   Grouping (lower_group_kernels_astitch; the chain rule of lower_group_kernels: a tail op reads
 *   the previous op's output, its only reader, at the head output's shape and dtype):
 *   - A compute-intensive op (conv — depthwise too —, dense, matmul, interaction;
 *     lower_op_is_memory_intensive) is a kernel of its own, a library call: it takes no tail
 *     and writes its whole output.
 *   - A memory-intensive op (elementwise, batchnorm, layernorm, softmax, pooling) heads a
 *     stitched kernel that grows over the memory-intensive ops after it:
 *       local    an elementwise op (lower_op_is_tvm_tail) joins the tail: it works on the
 *                producer's tile on the same core, the intermediate stays in LB;
 *       regional a row reduction (layernorm, softmax over the last axis) joins when every tile
 *                can hold whole rows of it (ASTITCH_ROW_BUFFERS of its rows fit the core's tile
 *                budget) and the head's rows are the normalised axis (a row-wise vector head,
 *                not a batchnorm: NCHW rows are not channels-last rows); the intermediate stays
 *                in LB;
 *       global   anything else that needs more than the producer's tile — a pooling's window,
 *                a reduction whose rows do not fit a tile, a reduction over another axis, a
 *                broadcast operand, a layout change, a second reader — starts a new kernel:
 *                the intermediate crosses a chip barrier (AStitch's global barrier).
 *     Pooling heads take no tail (their output tile is not the input's window); copies,
 *     gathers and transposes are no memory-intensive ops here (lower_op_is_memory_intensive):
 *     kernels of their own too.
 *   Placement (lower_place_astitch, called by lower_fill_placement for this strategy):
 *   - Every tensor that crosses a kernel boundary — a compute-intensive op's output, or a
 *     stitched intermediate of the global scheme — lives in the GB of each cluster (its samples'
 *     share) when it fits a first-fit allocation in the GB below the weight area
 *     (gb_tensor_bytes; on a re-plan of a smaller last iteration also below the weights kept in
 *     the GB across iterations, lower_weights_kept_floor, lower_wkeep.c) among the tensors alive
 *     with it (taken at the end of the kernel before its producer, released at the start of the
 *     kernel after its last reader; tensors in program order), every reader slices it by the
 *     cluster's samples and it is not a model output. Otherwise it spills to DDR: a write and a
 *     read back (each reader's), which tvm, fusing the same elementwise ops into the conv's
 *     tile, does not pay.
 */
#include "lower.h"

#include "ivl.h"

/* The buffers a stitched row reduction's tile needs per row: input and output double-buffered,
 * and a double-buffered operand tile of the same rows (the residual of an add). */
enum { ASTITCH_ROW_BUFFERS = 6 };

/* Regional scheme: the rows `op` reduces over fit a tile on a core of the first kind (as
 * lower_group_kernels sizes a tail's small operands: kinds are chosen after grouping). */
static int rows_fit_tile(const GsLowered *l, int op) {
  const GsTensor *y = &l->graph->tensors[l->graph->ops[op].out[0]];
  int64_t row = y->dim[y->ndim - 1] * arch_dtype_bytes(y->dtype);
  return row * ASTITCH_ROW_BUFFERS <= arch_core_tile_budget(l->arch, 0);
}

static int astitch_fuse(const GsLowered *l, int head, int op) {
  const GsGraph *g = l->graph;
  GsOpKind k = g->ops[op].kind, hk = g->ops[head].kind;
  if (!lower_op_is_memory_intensive(hk) || lower_op_kind(g, head) != LK_VEC) return 0;
  if (hk == OP_MAXPOOL || hk == OP_AVGPOOL || hk == OP_GAVGPOOL || hk == OP_PAD) return 0;
  if (lower_op_is_tvm_tail(k)) return 1; /* local */
  if (k == OP_LAYERNORM || k == OP_SOFTMAX) { /* regional, else global */
    const GsOp *o = &g->ops[op];
    const GsTensor *y = &g->tensors[o->out[0]];
    int ax = o->at.axis < 0 ? y->ndim + o->at.axis : o->at.axis;
    if (k == OP_SOFTMAX && ax != y->ndim - 1) return 0;
    return hk != OP_BATCHNORM && rows_fit_tile(l, op);
  }
  return 0;
}

void lower_group_kernels_astitch(GsLowered *l) { lower_group_kernels(l, astitch_fuse); }

/* Tensor t may live in the GB: a kernel output read by later kernels, not a model output (nor
 * aliased by one), split by samples, and every reader slices it by the cluster's samples. */
static int gb_candidate(const GsLowered *l, const int *kof, int t) {
  const GsGraph *g = l->graph;
  const GsArch *a = l->arch;
  const GsTensorPlace *p = &l->place[t];
  const GsTensor *x = &g->tensors[t];
  if (p->level != LVL_DDR || p->kernel < 0 || p->last_kernel < 0 || graph_is_output(g, t))
    return 0;
  if (x->ndim == 0 || x->dim[0] % g->batch != 0) return 0;
  int ok = l->kernels[p->kernel].split_clusters || a->nclusters == 1;
  for (int o = 0; o < g->nops && ok; o++) {
    const GsOp *op = &g->ops[o];
    if (op->kind == OP_RESHAPE) {
      if (graph_root(g, op->in[0]) == t && graph_is_output(g, op->out[0])) ok = 0;
      continue;
    }
    for (int i = 0; i < op->nin; i++)
      if (graph_root(g, op->in[i]) == t) {
        if (a->nclusters > 1 && !l->kernels[kof[o]].split_clusters) ok = 0;
        if (lower_op_input_whole(g, o, i)) ok = 0;
        if (op->kind == OP_MATMUL && i == 1) ok = 0; /* b may broadcast across samples */
      }
  }
  return ok;
}

/* A block for kernels [k0, k1] is taken at the end of kernel k0-1 and released at the start
 * of kernel k1+1 (emit.c): alive over steps [k0-1, k1] of ivl's inclusive ranges. */
void lower_place_astitch(GsLowered *l, const int *kof) {
  const GsGraph *g = l->graph;
  GsIvl blocks;
  ivl_init(&blocks, 0, min64(l->gb_tensor_bytes, lower_weights_kept_floor(l)), 64, IVL_BOTTOM_UP);
  for (int t = 0; t < g->ntensors; t++) {
    GsTensorPlace *p = &l->place[t];
    if (!gb_candidate(l, kof, t)) continue;
    p->want = LVL_GB;
    int64_t off = ivl_alloc(&blocks, lower_gb_tensor_bytes(l, t), p->kernel - 1, p->last_kernel, t);
    if (off < 0) continue; /* spilled: stays in DDR */
    p->level = LVL_GB;
    p->gb_offset = off;
  }
  ivl_free(&blocks);
}
