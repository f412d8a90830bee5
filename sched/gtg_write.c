/* gtg_write.c — prints a graph in .gtg syntax (docs/gtg.md), the inverse of gtg_parse.c.
 *
 * One line per input and per op in id order, attributes in the order of the GTG_ATTRS table,
 * printing an attribute only when the op requires it or its value differs from
 * graph_attrs_default() — in the shortest spelling that parses back to the same GsAttrs
 * (gtg_attr_get). Invariant: gtg_parse(gtg_write(g)) has the same tensors, ops, attributes,
 * dtypes and declared shapes as g (tests/unit/test_gtg_roundtrip.c).
 * Names that are not valid .gtg names (e.g. ONNX's "/layer1/Conv_output_0") are written as
 * the name with every invalid character replaced by '_' plus "_<tensor id>"; the id suffix
 * makes such names unique among themselves, and a leading '_' is added while the result
 * collides with a valid name of the graph.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

int gtg_name_valid(const char *s) {
  if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (s++; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '.' || *s == '-'))
      return 0;
  return 1;
}

static char *sanitize(const GsGraph *g, int id) {
  const char *s = g->tensors[id].name;
  size_t n = strlen(s);
  char *r = malloc(n + 40);
  if (!r) die("out of memory");
  size_t k = 0;
  if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) r[k++] = '_';
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.' || c == '-';
    r[k++] = ok ? c : '_';
  }
  snprintf(r + k, 32, "_%d", id);
  while (graph_find_tensor(g, r) >= 0) {
    size_t len = strlen(r);
    char *m = malloc(len + 2);
    if (!m) die("out of memory");
    m[0] = '_';
    memcpy(m + 1, r, len + 1);
    free(r);
    r = m;
  }
  return r;
}

static void print_attr(FILE *out, GsGraph const *g, const GsOp *op, GtgAttr a) {
  (void)g;
  int64_t v[GTG_MAX_VALUES];
  int64_t dv[GTG_MAX_VALUES];
  const GtgAttrSpec *sp = &gtg_attr_spec[a];
  if (!(sp->kinds & GTG_K(op->kind))) return;
  int n = gtg_attr_get(&op->at, op->kind, a, v);
  if (n <= 0) return;
  GsAttrs def;
  graph_attrs_default(&def);
  int dn = gtg_attr_get(&def, op->kind, a, dv);
  int same = dn == n;
  for (int i = 0; same && i < n; i++) same = v[i] == dv[i];
  if (same && !(sp->required & GTG_K(op->kind))) return;
  fprintf(out, " %s=", sp->name);
  for (int i = 0; i < n; i++) {
    if (i) fputc(',', out);
    if (a == GA_SHAPE && v[i] == GS_DIM_N) fputs("N", out);
    else if (a == GA_SHAPE && v[i] == -2) fputs("-1", out);
    else fprintf(out, "%lld", (long long)v[i]);
  }
}

static void write_input(FILE *out, const GsGraph *g, int id, const char *name) {
  const GsTensor *x = &g->tensors[id];
  fprintf(out, "input %s: %s[", name, arch_dtype_name(x->dtype));
  for (int k = 0; k < x->ndim; k++) {
    if (k) fputs(", ", out);
    if (x->decl[k] == GS_DIM_N) fputc('N', out);
    else fprintf(out, "%lld", (long long)x->decl[k]);
  }
  fputs("]\n", out);
}

void gtg_write(FILE *out, const GsGraph *g) {
  char **names = calloc((size_t)g->ntensors + 1, sizeof *names);
  if (!names) die("out of memory");
  for (int t = 0; t < g->ntensors; t++)
    if (!gtg_name_valid(g->tensors[t].name)) names[t] = sanitize(g, t);
#define NAME(t) (names[t] ? names[t] : g->tensors[t].name)
  fprintf(out, "gtg 1\n");
  fputs("model ", out);
  const char *mn = g->name && *g->name ? g->name : "model";
  if (!((*mn >= 'A' && *mn <= 'Z') || (*mn >= 'a' && *mn <= 'z') || *mn == '_')) fputc('_', out);
  for (const char *c = mn; *c; c++) {
    int ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
             *c == '_' || *c == '.' || *c == '-';
    fputc(ok ? *c : '_', out);
  }
  fprintf(out, " batch=%lld dtype=%s\n", (long long)g->default_batch, arch_dtype_name(g->dtype));
  /* Inputs are interleaved with the ops in tensor-id order, so ids survive the round trip. */
  int next_in = 0;
  for (int o = 0; o <= g->nops; o++) {
    int limit = o < g->nops ? g->ops[o].out[0] : g->ntensors;
    for (; next_in < g->ninputs && g->inputs[next_in] < limit; next_in++)
      write_input(out, g, g->inputs[next_in], NAME(g->inputs[next_in]));
    if (o == g->nops) break;
    const GsOp *op = &g->ops[o];
    for (int i = 0; i < op->nout; i++) fprintf(out, "%s%s", i ? ", " : "", NAME(op->out[i]));
    fprintf(out, " = %s(", graph_opkind_name(op->kind));
    for (int i = 0; i < op->nin; i++) fprintf(out, "%s%s", i ? ", " : "", NAME(op->in[i]));
    fputc(')', out);
    for (int a = 0; a < GA_COUNT; a++) print_attr(out, g, op, (GtgAttr)a);
    fputc('\n', out);
  }
#undef NAME
  for (int t = 0; t < g->ntensors; t++) free(names[t]);
  free(names);
}
