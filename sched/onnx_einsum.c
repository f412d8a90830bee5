/* onnx_einsum.c — ONNX Einsum as the IR's matmul, dense and transpose (docs/onnx.md, "Einsum").
 *
 * Contract: the equation's letters name axes (explicit `lhs->rhs`, or implicit: the output is
 * the letters used once, in alphabetical order). One operand: a permutation of its axes is a
 * transpose. Two operands: every letter is a batch axis (both operands and the output), a row
 * axis (first operand and output), a column axis (second operand and output) or contracted
 * (both operands, not the output):
 *   - both activations, one row, one column and one contracted letter and any batch letters:
 *     each operand transposed (when needed) to [batch..., rows, k] and [batch..., k, cols], a
 *     matmul, and a transpose to the output's order ("bhid,bhjd->bhij" transposes the second
 *     operand, as the exported MatMul form does with its Transpose);
 *   - one constant of rank 2 (a contracted and a column letter) and an activation: the
 *     activation with its contracted axis last, a dense of the constant's column size, and a
 *     transpose to the output's order ("bid,jd->bij").
 * Anything else — ellipsis, a letter repeated in a term (diagonals), a letter summed over in one
 * operand only, several contracted/row/column letters, two constants — fails naming the node
 * and the equation. Adds ops only; every intermediate is named after the node's output.
 */
#include <ctype.h>
#include <string.h>

#include "onnx_imp.h"

typedef struct {
  int nin;
  char term[2][GS_MAX_DIMS + 1];
  char out[GS_MAX_DIMS + 1];
} Eq;

static void bad(OxCtx *c, const char *eq, const char *why) {
  ox_fail(c, "Einsum equation '%s' is not supported: %s (docs/onnx.md lists the matmul forms)",
          eq, why);
}

/* Copies the letters of s[0, len) into t (NUL-terminated), checking letters and repeats. */
static void term_of(OxCtx *c, const char *eq, const char *s, size_t len, char *t) {
  if (len > GS_MAX_DIMS) bad(c, eq, "a term has more axes than the IR's 6");
  for (size_t i = 0; i < len; i++) {
    if (!isalpha((unsigned char)s[i])) bad(c, eq, "only letters (no ellipsis) name axes");
    if (memchr(s, s[i], i)) bad(c, eq, "a letter repeats inside a term (a diagonal)");
    t[i] = s[i];
  }
  t[len] = 0;
}

static void parse_eq(OxCtx *c, const char *raw, int nin, Eq *e) {
  char eq[64];
  size_t n = 0;
  for (const char *p = raw; *p && n + 1 < sizeof eq; p++)
    if (*p != ' ') eq[n++] = *p;
  eq[n] = 0;
  const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + n;
  const char *comma = memchr(eq, ',', (size_t)(end - eq));
  e->nin = comma ? 2 : 1;
  if (e->nin != nin) bad(c, raw, "the terms do not match the inputs");
  term_of(c, raw, eq, (size_t)((comma ? comma : end) - eq), e->term[0]);
  if (comma) term_of(c, raw, comma + 1, (size_t)(end - comma - 1), e->term[1]);
  if (arrow) {
    term_of(c, raw, arrow + 2, strlen(arrow + 2), e->out);
  } else { /* implicit: the letters used once, alphabetically */
    size_t k = 0;
    for (int ch = 'A'; ch <= 'z'; ch++) {
      int uses = 0;
      for (int i = 0; i < e->nin; i++) uses += strchr(e->term[i], ch) != NULL;
      if (isalpha(ch) && uses == 1 && k < GS_MAX_DIMS) e->out[k++] = (char)ch;
    }
    e->out[k] = 0;
  }
  for (const char *p = e->out; *p; p++)
    if (!strchr(e->term[0], *p) && !(e->nin == 2 && strchr(e->term[1], *p)))
      bad(c, raw, "an output letter is in no input");
}

/* x (axes named by `from`) transposed to the order `to`; x itself when they agree. */
static int permute(OxCtx *c, const Onnx__NodeProto *n, int x, const char *from, const char *to,
                   const char *name) {
  if (!strcmp(from, to)) return x;
  GsAttrs at;
  graph_attrs_default(&at);
  at.nperm = (int)strlen(to);
  for (int i = 0; i < at.nperm; i++) at.perm[i] = (int)(strchr(from, to[i]) - from);
  return ox_emit_named(c, n, OP_TRANSPOSE, &x, 1, &at, name);
}

/* The letters of `t` whose presence in a, b and out is (ina, inb, inout), in t's order. */
static int pick(const char *t, const Eq *e, int ina, int inb, int inout, char *dst) {
  int k = 0;
  for (const char *p = t; *p; p++)
    if ((strchr(e->term[0], *p) != NULL) == ina && (strchr(e->term[1], *p) != NULL) == inb &&
        (strchr(e->out, *p) != NULL) == inout)
      dst[k++] = *p;
  dst[k] = 0;
  return k;
}

/* Weight w (a constant term wt) times activation x (term xt): dense over the contracted
 * letter kc, the column letter the constant's other one. */
static void einsum_dense(OxCtx *c, const Onnx__NodeProto *n, const char *eq, const Eq *e,
                         const OxVal *w, const char *wt, int x, const char *xt) {
  const char *out = n->output[0];
  if (w->ndim != 2 || strlen(wt) != 2) bad(c, eq, "a constant operand must be a matrix");
  int kw = strchr(xt, wt[0]) ? 0 : 1; /* the constant's contracted axis */
  char kc = wt[kw], col = wt[!kw];
  if (!strchr(xt, kc) || strchr(xt, col) || strchr(e->out, kc) || !strchr(e->out, col))
    bad(c, eq, "the constant must share one contracted letter with the activation");
  char xo[GS_MAX_DIMS + 2], res[GS_MAX_DIMS + 2];
  size_t r = 0;
  for (const char *p = xt; *p; p++)
    if (*p != kc) xo[r++] = *p;
  memcpy(res, xo, r);
  xo[r] = kc, xo[r + 1] = 0;
  res[r] = col, res[r + 1] = 0;
  if (strlen(res) != strlen(e->out)) bad(c, eq, "a letter of the activation is summed over");
  x = permute(c, n, x, xt, xo, arena_printf(c->scratch, "%s.lhs", out));
  if (ox_act_dim(c, x, -1) != w->dims[kw]) ox_fail(c, "Einsum operands disagree on '%c'", kc);
  GsAttrs at;
  graph_attrs_default(&at);
  at.units = w->dims[!kw];
  at.bias = 0;
  int fin = !strcmp(res, e->out);
  int y = ox_emit_named(c, n, OP_DENSE, &x, 1, &at, fin ? out : arena_printf(c->scratch, "%s.mm", out));
  ox_bind_act(c, out, permute(c, n, y, res, e->out, out));
}

static void einsum_matmul(OxCtx *c, const Onnx__NodeProto *n, const char *eq, const Eq *e) {
  const char *out = n->output[0];
  char bt[GS_MAX_DIMS + 1], m[GS_MAX_DIMS + 1], nn[GS_MAX_DIMS + 1], k[GS_MAX_DIMS + 1];
  char only[GS_MAX_DIMS + 1];
  pick(e->out, e, 1, 1, 1, bt);
  if (pick(e->term[0], e, 1, 0, 0, only) || pick(e->term[1], e, 0, 1, 0, only))
    bad(c, eq, "a letter is summed over in one operand only");
  if (pick(e->term[0], e, 1, 0, 1, m) != 1 || pick(e->term[1], e, 0, 1, 1, nn) != 1 ||
      pick(e->term[0], e, 1, 1, 0, k) != 1)
    bad(c, eq, "a matmul needs one row, one column and one contracted letter");
  char at_[3 * GS_MAX_DIMS + 1], bt_[3 * GS_MAX_DIMS + 1], res[3 * GS_MAX_DIMS + 1];
  snprintf(at_, sizeof at_, "%s%s%s", bt, m, k);
  snprintf(bt_, sizeof bt_, "%s%s%s", bt, k, nn);
  snprintf(res, sizeof res, "%s%s%s", bt, m, nn);
  int in[2] = {permute(c, n, ox_input_act(c, n, 0), e->term[0], at_, arena_printf(c->scratch, "%s.lhs", out)),
               permute(c, n, ox_input_act(c, n, 1), e->term[1], bt_, arena_printf(c->scratch, "%s.rhs", out))};
  GsAttrs at;
  graph_attrs_default(&at);
  int fin = !strcmp(res, e->out);
  int y = ox_emit_named(c, n, OP_MATMUL, in, 2, &at, fin ? out : arena_printf(c->scratch, "%s.mm", out));
  ox_bind_act(c, out, permute(c, n, y, res, e->out, out));
}

void ox_map_einsum(OxCtx *c, const Onnx__NodeProto *n) {
  char eqbuf[64];
  const char *eq = ox_attr_s(n, "equation", "", eqbuf, sizeof eqbuf);
  Eq e;
  parse_eq(c, eq, (int)n->n_input, &e);
  for (int i = 0; i < e.nin; i++) {
    OxVal *v = ox_need_input(c, n, (size_t)i, "operand");
    int rank = v->kind == VAL_ACT ? ox_act_rank(c, v->tensor) : v->ndim;
    if ((int)strlen(e.term[i]) != rank) bad(c, eq, "a term's letters do not match its operand's rank");
  }
  if (e.nin == 1) {
    if (strlen(e.out) != strlen(e.term[0])) bad(c, eq, "a one-operand Einsum must permute, not sum");
    int x = ox_input_act(c, n, 0);
    ox_bind_act(c, n->output[0], permute(c, n, x, e.term[0], e.out, n->output[0]));
    return;
  }
  OxVal *a = ox_need_input(c, n, 0, "A"), *b = ox_need_input(c, n, 1, "B");
  if (a->kind == VAL_CONST && b->kind == VAL_CONST) bad(c, eq, "both operands are constants");
  if (b->kind == VAL_CONST) einsum_dense(c, n, eq, &e, b, e.term[1], ox_input_act(c, n, 0), e.term[0]);
  else if (a->kind == VAL_CONST) einsum_dense(c, n, eq, &e, a, e.term[0], ox_input_act(c, n, 1), e.term[1]);
  else einsum_matmul(c, n, eq, &e);
}
