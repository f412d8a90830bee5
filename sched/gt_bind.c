/* gt_bind.c — Algorithm 4: core binding tuples and buffer scopes, consumers first.
 *
 * bind[k] of an instance is the number of cores its output slice is spread over along
 * output dimension k (product <= c). plain_binding walks the dims outermost first, trying
 * the remaining core budget and its halvings (8, 4, 2, 1 for c = 8) until one divides the
 * slice extent, skipping a dimension the output's op normalises over (softmax, layernorm,
 * glu: the paper's "cannot be bound" annotation). infer_binding carries a consumer's
 * factors back to a producer instance's output through the consumer's ops (gt_dims.c): a
 * factor b on a consumer dim that reads a range of length L of a producer dim whose slice
 * has length Lp becomes b*Lp/L there; the inference is invalid when that is not a whole
 * divisor of Lp or lands on an annotated dim; dims that do not map carry 1. Instances are
 * visited in reverse schedule order: an unbound instance, or one whose output is in GB,
 * takes plain_binding and pushes inferred bindings to its producers (a producer already
 * bound differently moves its output to GB: line 12); an instance bound by its consumer
 * keeps that binding when it uses at least as many cores as plain_binding.
 * Invariant: every instance is bound, each factor divides its slice, product <= c.
 */
#include "gt.h"

#include <string.h>

static int out_ndim(const GtSchedule *s, const GtInstance *in) {
  return s->g->tensors[s->groups[in->group].out].ndim;
}

static int64_t slice_ext(const GtSchedule *s, const GtInstance *in, int k) {
  const GsTensor *t = &s->g->tensors[s->groups[in->group].out];
  return k == in->dim ? in->hi - in->lo : t->dim[k];
}

static int64_t cores_of(const int64_t *b, int nd) {
  int64_t p = 1;
  for (int k = 0; k < nd; k++) p *= b[k] > 0 ? b[k] : 1;
  return p;
}

/* The paper's annotation "cannot be bound to cores": the axis the op writing the output
 * normalises over (softmax, layernorm, glu) — splitting it over cores would need a
 * cross-core reduction inside the op. */
static int unbindable(const GtSchedule *s, const GtInstance *in, int k) {
  const GsTensor *t = &s->g->tensors[s->groups[in->group].out];
  const GsOp *o = &s->g->ops[t->producer];
  int ax = o->at.axis < 0 ? o->at.axis + t->ndim : o->at.axis;
  if (o->kind == OP_SOFTMAX || o->kind == OP_GLU) return k == ax;
  if (o->kind == OP_LAYERNORM) return k == t->ndim - 1;
  return 0;
}

static void plain_binding(const GtSchedule *s, const GtInstance *in, int64_t *b) {
  int nd = out_ndim(s, in);
  int64_t left = s->cores;
  for (int k = 0; k < GS_MAX_DIMS; k++) b[k] = 1;
  for (int k = 0; k < nd; k++) {
    if (unbindable(s, in, k)) continue;
    int64_t ext = slice_ext(s, in, k);
    for (int64_t f = left; f >= 1; f /= 2)
      if (ext % f == 0) {
        b[k] = f;
        left /= f;
        break;
      }
  }
}

/* gt_infer_binding's answer for producer p from the reads of its tensor that q's binding
 * makes (s->infer_r, per consumer dim); pb is all 1 on entry. */
static int infer_for(const GtSchedule *s, const GtInstance *q, const int64_t *qb,
                     const GtInstance *p, int64_t *pb) {
  int pnd = out_ndim(s, p), useful = 0;
  for (int d = 0; d < out_ndim(s, q); d++) {
    if (qb[d] <= 1) continue;
    GtReq r = s->infer_r[d];
    if (r.kind != GT_REQ_RANGE || r.dim >= pnd) continue;
    int64_t len = r.hi - r.lo, plen = slice_ext(s, p, r.dim);
    if ((qb[d] * plen) % len != 0) return 0;
    int64_t f = qb[d] * plen / len;
    if (f < 1 || plen % f != 0 || (f > 1 && unbindable(s, p, r.dim))) return 0;
    pb[r.dim] *= f;
    if (pb[r.dim] > 1) useful = 1;
  }
  if (cores_of(pb, pnd) > s->cores) return 0;
  return useful;
}

/* Binding of producer instance p's output implied by consumer q's binding qb; returns 0 when
 * invalid or when it binds nothing (the paper's "[]"). The reads q's binding makes are kept
 * for the next call with the same (q, tensor, qb), and the answer for the next producer of
 * the same group, split dimension and slice length, on which alone it depends. */
int gt_infer_binding(GtSchedule *s, const GtInstance *q, const int64_t *qb, const GtInstance *p,
                         int tensor, int64_t *pb) {
  const GtGroup *gq = &s->groups[q->group];
  for (int k = 0; k < GS_MAX_DIMS; k++) pb[k] = 1;
  if (tensor != s->groups[p->group].out) return 0;
  int qi = (int)(q - s->insts);
  if (s->infer_q != qi || s->infer_t != tensor || memcmp(s->infer_qb, qb, sizeof s->infer_qb) != 0) {
    for (int d = 0; d < out_ndim(s, q); d++) {
      s->infer_r[d].kind = GT_REQ_NONE;
      if (qb[d] <= 1) continue;
      int64_t lo = d == q->dim ? q->lo : 0, hi = d == q->dim ? q->hi : slice_ext(s, q, d);
      int nt = gt_group_reqs(s, gq, d, lo, hi, s->req, s->touched);
      s->infer_r[d] = s->req[tensor];
      for (int i = 0; i < nt; i++) s->req[s->touched[i]].kind = GT_REQ_NONE;
    }
    s->infer_q = qi;
    s->infer_t = tensor;
    memcpy(s->infer_qb, qb, sizeof s->infer_qb);
    s->infer_pg = -1;
  }
  int64_t plen_dim = p->hi - p->lo;
  if (s->infer_pg == p->group && s->infer_pdim == p->dim && s->infer_plen == plen_dim) {
    memcpy(pb, s->infer_pb, sizeof s->infer_pb);
    return s->infer_ret;
  }
  s->infer_pg = p->group;
  s->infer_pdim = p->dim;
  s->infer_plen = plen_dim;
  s->infer_ret = infer_for(s, q, qb, p, pb);
  memcpy(s->infer_pb, pb, sizeof s->infer_pb);
  return s->infer_ret;
}

/* requires: gt_order_instances; maintains: bind[] of every instance, scope LB/GB. */
void gt_bind_instances(GtSchedule *s) {
  int n = s->ninsts;
  for (int v = n - 1; v >= 0; v--) {
    GtInstance *in = &s->insts[s->order[v]];
    int nd = out_ndim(s, in);
    int64_t plain[GS_MAX_DIMS];
    plain_binding(s, in, plain);
    if (in->bind[0] == 0 || in->scope != GT_SCOPE_LB) {
      memcpy(in->bind, plain, sizeof plain);
      for (int j = 0; j < in->nprod; j++) {
        const GtEdge *e = &s->edges[in->prod[j]];
        GtInstance *p = &s->insts[e->from];
        int64_t inf[GS_MAX_DIMS];
        if (!gt_infer_binding(s, in, in->bind, p, e->tensor, inf)) continue;
        if (p->bind[0] == 0) {
          memcpy(p->bind, inf, sizeof inf);
        } else if (memcmp(p->bind, inf, sizeof inf) != 0) {
          if (p->scope != GT_SCOPE_GB) s->nbind_mismatch++;
          p->scope = GT_SCOPE_GB;
        }
      }
    } else {
      int valid = 1; /* update_binding: the inferred tuple must still respect the annotations */
      for (int k = 0; k < nd; k++)
        valid &= in->bind[k] >= 1 && slice_ext(s, in, k) % in->bind[k] == 0 &&
                 (in->bind[k] == 1 || !unbindable(s, in, k));
      if (!valid || cores_of(in->bind, nd) < cores_of(plain, nd)) memcpy(in->bind, plain, sizeof plain);
    }
  }
}
