/* gtg_parse.c — the .gtg reader (grammar in docs/gtg.md).
 *
 * Algorithm: the whole text is cut into tokens (name, integer, punctuation, end of line)
 * carrying their line and column, then parsed one statement (= one line) at a time by
 * recursive descent, appending inputs and ops to the graph as they are read. Because a name
 * must be defined before it is used, the op array is built in topological order and a cycle
 * cannot be written. Finally graph_infer() binds the file's batch so shape errors are found
 * at load time, with the source line and a caret.
 * Invariant: the first error stops the parse; gtg_parse() then returns NULL and has reported
 * exactly one `file:line:col: error:` through the GsDiag. Nothing here exits or aborts on bad
 * input (tests/fuzz/ checks that).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

typedef enum { T_NAME, T_INT, T_PUNCT, T_NL, T_EOF } TokKind;

typedef struct {
  TokKind kind;
  int line, col;
  const char *s; /* into the text */
  int len;
  int64_t v;     /* T_INT value; T_PUNCT character */
} Tok;

typedef struct {
  const char *path, *text;
  GsDiag *d;
  GsGraph *g;
  Tok *toks;
  int ntoks, pos;
  int failed;
} Parser;

__attribute__((format(printf, 3, 4))) static int error_at(Parser *p, const Tok *t,
                                                          const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!p->failed) diag_error(p->d, p->path, t->line, t->col, p->text, "%s", msg);
  p->failed = 1;
  return -1;
}

static int is_alpha(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* Cuts the text into tokens; returns -1 after reporting a bad character or number. */
static int lex(Parser *p) {
  GsVec v;
  vec_init(&v, sizeof(Tok));
  int line = 1;
  const char *ls = p->text; /* start of the current line */
  const char *s = p->text;
  int rc = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (*s == '#')
      while (*s && *s != '\n') s++;
    Tok t = {T_EOF, line, (int)(s - ls) + 1, s, 0, 0};
    if (!*s) {
      *(Tok *)vec_push(&v) = t;
      break;
    }
    if (*s == '\n') {
      t.kind = T_NL;
      t.len = 1;
      s++;
      line++;
      ls = s;
    } else if (is_alpha((unsigned char)*s)) {
      const char *b = s;
      while (is_alpha((unsigned char)*s) || is_digit((unsigned char)*s) || *s == '.' || *s == '-')
        s++;
      t.kind = T_NAME;
      t.len = (int)(s - b);
    } else if (is_digit((unsigned char)*s) || (*s == '-' && is_digit((unsigned char)s[1]))) {
      const char *b = s;
      int neg = *s == '-';
      if (neg) s++;
      int64_t x = 0;
      while (is_digit((unsigned char)*s)) {
        x = x * 10 + (*s++ - '0'); /* x <= 2^56 before this step: no overflow */
        if (x > ((int64_t)1 << 56)) {
          rc = error_at(p, &t, "integer too large (more than 2^56)");
          break;
        }
      }
      if (rc) break;
      if (is_alpha((unsigned char)*s)) {
        rc = error_at(p, &t, "bad number '%.*s'", (int)(s - b) + 1, b);
        break;
      }
      t.kind = T_INT;
      t.v = neg ? -x : x;
      t.len = (int)(s - b);
    } else if (strchr("=,():[]", *s)) {
      t.kind = T_PUNCT;
      t.v = *s;
      t.len = 1;
      s++;
    } else {
      unsigned char c = (unsigned char)*s;
      if (c >= 32 && c < 127) rc = error_at(p, &t, "unexpected character '%c'", c);
      else rc = error_at(p, &t, "unexpected byte 0x%02x", c);
      break;
    }
    *(Tok *)vec_push(&v) = t;
  }
  p->toks = arena_alloc(p->g->arena, v.len * sizeof(Tok));
  if (v.len) memcpy(p->toks, v.data, v.len * sizeof(Tok)); /* none when byte 1 is bad */
  p->ntoks = (int)v.len;
  vec_free(&v);
  return rc;
}

static Tok *peek(Parser *p) { return &p->toks[p->pos]; }
static Tok *next(Parser *p) {
  Tok *t = &p->toks[p->pos];
  if (t->kind != T_EOF) p->pos++;
  return t;
}
static int is_punct(const Tok *t, char c) { return t->kind == T_PUNCT && t->v == c; }
static int is_word(const Tok *t, const char *w) {
  return t->kind == T_NAME && (int)strlen(w) == t->len && memcmp(t->s, w, (size_t)t->len) == 0;
}

static const char *describe(const Tok *t, char *buf, size_t n) {
  switch (t->kind) {
  case T_NL: return "end of line";
  case T_EOF: return "end of file";
  default: snprintf(buf, n, "'%.*s'", t->len > 40 ? 40 : t->len, t->s); return buf;
  }
}

static int expect_punct(Parser *p, char c, const char *what) {
  Tok *t = next(p);
  if (is_punct(t, c)) return 0;
  char b[64];
  return error_at(p, t, "expected '%c' %s, found %s", c, what, describe(t, b, sizeof b));
}

static int expect_eol(Parser *p) {
  Tok *t = peek(p);
  if (t->kind == T_NL || t->kind == T_EOF) return 0;
  char b[64];
  return error_at(p, t, "unexpected %s at end of statement", describe(t, b, sizeof b));
}

static void skip_newlines(Parser *p) {
  while (peek(p)->kind == T_NL) p->pos++;
}

static char *tok_str(Parser *p, const Tok *t) { return arena_strndup(p->g->arena, t->s, (size_t)t->len); }

/* Line where `name` is defined after the current statement, or 0. Only used to explain an
 * undefined name, so a linear scan is fine. */
static int later_definition(Parser *p, const Tok *name) {
  for (int i = p->pos; i < p->ntoks; i++) {
    if (i > 0 && p->toks[i - 1].kind != T_NL) continue; /* statement starts only */
    const Tok *t = &p->toks[i];
    if (is_word(t, "input") && t[1].kind == T_NAME) {
      if (t[1].len == name->len && memcmp(t[1].s, name->s, (size_t)name->len) == 0) return t->line;
      continue;
    }
    for (int j = i; p->toks[j].kind == T_NAME; j += 2) {
      const Tok *n = &p->toks[j];
      if (n->len == name->len && memcmp(n->s, name->s, (size_t)name->len) == 0 &&
          (is_punct(&n[1], ',') || is_punct(&n[1], '=')))
        return n->line;
      if (!is_punct(&n[1], ',')) break;
    }
  }
  return 0;
}

/* Checks that the name token may define a new tensor. */
static int check_new_name(Parser *p, const Tok *t) {
  if (t->kind != T_NAME) {
    char b[64];
    return error_at(p, t, "expected a name, found %s", describe(t, b, sizeof b));
  }
  char *s = tok_str(p, t);
  int id = graph_find_tensor(p->g, s);
  if (id >= 0)
    return error_at(p, t, "redefinition of '%s' (first defined at line %d)", s,
                    p->g->tensors[id].line);
  return 0;
}

static int parse_header(Parser *p) {
  skip_newlines(p);
  Tok *t = next(p);
  char b[64];
  if (!is_word(t, "gtg"))
    return error_at(p, t, "expected the header 'gtg 1' as the first statement, found %s",
                    describe(t, b, sizeof b));
  Tok *v = next(p);
  if (v->kind != T_INT)
    return error_at(p, v, "expected a format version after 'gtg', found %s",
                    describe(v, b, sizeof b));
  if (v->v != 1)
    return error_at(p, v, "unsupported .gtg format version %lld (this gtsim reads version 1)",
                    (long long)v->v);
  p->g->version = 1;
  if (expect_eol(p)) return -1;
  skip_newlines(p);
  t = next(p);
  if (!is_word(t, "model"))
    return error_at(p, t, "expected 'model NAME batch=B dtype=T' after the header, found %s",
                    describe(t, b, sizeof b));
  Tok *n = next(p);
  if (n->kind != T_NAME)
    return error_at(p, n, "expected the model name, found %s", describe(n, b, sizeof b));
  p->g->name = tok_str(p, n);
  int seen_batch = 0, seen_dtype = 0;
  while (peek(p)->kind == T_NAME) {
    Tok *k = next(p);
    if (expect_punct(p, '=', "after the attribute name")) return -1;
    Tok *val = next(p);
    if (is_word(k, "batch")) {
      if (seen_batch++) return error_at(p, k, "attribute 'batch' given twice");
      if (val->kind != T_INT || val->v < 1 || val->v > GTG_BIG)
        return error_at(p, val, "batch must be an integer >= 1");
      p->g->default_batch = val->v;
    } else if (is_word(k, "dtype")) {
      if (seen_dtype++) return error_at(p, k, "attribute 'dtype' given twice");
      const char *s = val->kind == T_NAME ? tok_str(p, val) : "";
      if (arch_dtype_parse(s, &p->g->dtype))
        return error_at(p, val, "unknown dtype %s (int8, int16, int32, fp16, bf16, fp32)",
                        describe(val, b, sizeof b));
    } else {
      return error_at(p, k, "unknown model attribute '%.*s' (batch, dtype)", k->len, k->s);
    }
  }
  return expect_eol(p);
}

static int parse_input(Parser *p) {
  char b[64];
  Tok *n = next(p);
  if (check_new_name(p, n) || expect_punct(p, ':', "after the input name")) return -1;
  Tok *dt = next(p);
  GsDtype t;
  if (dt->kind != T_NAME || arch_dtype_parse(tok_str(p, dt), &t))
    return error_at(p, dt, "expected a dtype (int8, int16, int32, fp16, bf16, fp32), found %s",
                    describe(dt, b, sizeof b));
  if (expect_punct(p, '[', "to open the shape")) return -1;
  int64_t dims[GS_MAX_DIMS];
  int nd = 0;
  for (;;) {
    Tok *d = next(p);
    if (nd == GS_MAX_DIMS) return error_at(p, d, "at most %d dims", GS_MAX_DIMS);
    if (is_word(d, "N")) dims[nd++] = GS_DIM_N;
    else if (d->kind == T_INT && d->v >= 1 && d->v <= GTG_BIG) dims[nd++] = d->v;
    else return error_at(p, d, "expected a dim (an integer >= 1 or N), found %s", describe(d, b, sizeof b));
    Tok *s = next(p);
    if (is_punct(s, ']')) break;
    if (!is_punct(s, ','))
      return error_at(p, s, "expected ',' or ']' in the shape, found %s", describe(s, b, sizeof b));
  }
  int id = graph_add_input(p->g, tok_str(p, n), nd, dims, t);
  gs_assert(id >= 0);
  p->g->tensors[id].line = n->line;
  p->g->tensors[id].col = n->col;
  return expect_eol(p);
}

static int find_attr(const Tok *k) {
  for (int a = 0; a < GA_COUNT; a++)
    if (is_word(k, gtg_attr_spec[a].name)) return a;
  return -1;
}

static void list_attrs(GsOpKind kind, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (int a = 0; a < GA_COUNT; a++)
    if ((gtg_attr_spec[a].kinds & GTG_K(kind)) && used < n)
      used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", gtg_attr_spec[a].name);
  if (!used) snprintf(buf, n, "none");
}

/* Parses `key=v[,v...]` pairs after the operand list into *at. */
static int parse_attrs(Parser *p, GsOpKind kind, const Tok *kind_tok, GsAttrs *at) {
  char b[64], list[256];
  uint32_t seen = 0;
  while (peek(p)->kind != T_NL && peek(p)->kind != T_EOF) {
    Tok *k = next(p);
    if (k->kind != T_NAME)
      return error_at(p, k, "expected an attribute name, found %s", describe(k, b, sizeof b));
    int a = find_attr(k);
    if (a < 0 || !(gtg_attr_spec[a].kinds & GTG_K(kind))) {
      list_attrs(kind, list, sizeof list);
      return error_at(p, k, "unknown attribute '%.*s' for %s (accepted: %s)", k->len, k->s,
                      graph_opkind_name(kind), list);
    }
    const GtgAttrSpec *sp = &gtg_attr_spec[a];
    if (seen & (1u << a)) return error_at(p, k, "attribute '%s' given twice", sp->name);
    seen |= 1u << a;
    if (expect_punct(p, '=', "after the attribute name")) return -1;
    int64_t v[GTG_MAX_VALUES];
    int n = 0, ninfer = 0;
    Tok *first = peek(p);
    for (;;) {
      Tok *t = next(p);
      if (n == sp->cmax)
        return error_at(p, t, "'%s' takes at most %d value%s", sp->name, sp->cmax,
                        sp->cmax > 1 ? "s" : "");
      if (a == GA_SHAPE && is_word(t, "N")) {
        v[n++] = GS_DIM_N;
      } else if (a == GA_SHAPE && t->kind == T_INT && (t->v == -1 || t->v >= 1) && t->v <= sp->hi) {
        if (t->v == -1 && ninfer++) return error_at(p, t, "'shape' may contain only one -1");
        v[n++] = t->v == -1 ? -2 : t->v;
      } else if (a != GA_SHAPE && t->kind == T_INT && t->v >= sp->lo && t->v <= sp->hi) {
        v[n++] = t->v;
      } else if (a == GA_SHAPE) {
        return error_at(p, t, "bad value %s for 'shape': expected an integer >= 1, N or -1",
                        describe(t, b, sizeof b));
      } else {
        return error_at(p, t, "bad value %s for '%s': expected an integer in %lld..%lld",
                        describe(t, b, sizeof b), sp->name, (long long)sp->lo, (long long)sp->hi);
      }
      if (!is_punct(peek(p), ',')) break;
      next(p);
    }
    const char *why = NULL;
    if (gtg_attr_set(at, kind, (GtgAttr)a, v, n, &why))
      return error_at(p, first, "'%s' of %s: %s", sp->name, graph_opkind_name(kind), why);
  }
  for (int a = 0; a < GA_COUNT; a++)
    if ((gtg_attr_spec[a].required & GTG_K(kind)) && !(seen & (1u << a)))
      return error_at(p, kind_tok, "%s needs the attribute '%s'", graph_opkind_name(kind),
                      gtg_attr_spec[a].name);
  return 0;
}

static int parse_op(Parser *p) {
  char b[64];
  Tok *outs[GS_MAX_OPERANDS];
  int nout = 0;
  for (;;) {
    Tok *n = next(p);
    if (nout == GS_MAX_OPERANDS) return error_at(p, n, "at most %d outputs", GS_MAX_OPERANDS);
    if (check_new_name(p, n)) return -1;
    for (int i = 0; i < nout; i++)
      if (outs[i]->len == n->len && memcmp(outs[i]->s, n->s, (size_t)n->len) == 0)
        return error_at(p, n, "output '%.*s' named twice", n->len, n->s);
    outs[nout++] = n;
    Tok *s = next(p);
    if (is_punct(s, '=')) break;
    if (!is_punct(s, ','))
      return error_at(p, s, "expected ',' or '=' after an output name, found %s",
                      describe(s, b, sizeof b));
  }
  Tok *kt = next(p);
  GsOpKind kind;
  if (kt->kind != T_NAME)
    return error_at(p, kt, "expected an op name, found %s", describe(kt, b, sizeof b));
  if (graph_opkind_parse(tok_str(p, kt), &kind))
    return error_at(p, kt, "unknown op '%.*s'", kt->len, kt->s);
  if (expect_punct(p, '(', "after the op name")) return -1;
  int in[GS_MAX_OPERANDS], nin = 0;
  Tok *close;
  for (;;) {
    Tok *n = next(p);
    if (nin == 0 && is_punct(n, ')')) {
      close = n;
      break;
    }
    if (n->kind != T_NAME)
      return error_at(p, n, "expected an operand name, found %s", describe(n, b, sizeof b));
    if (nin == GS_MAX_OPERANDS) return error_at(p, n, "at most %d operands", GS_MAX_OPERANDS);
    int id = graph_find_tensor(p->g, tok_str(p, n));
    for (int i = 0; id < 0 && i < nout; i++)
      if (outs[i]->len == n->len && memcmp(outs[i]->s, n->s, (size_t)n->len) == 0)
        return error_at(p, n, "'%.*s' is used in its own definition (a cycle)", n->len, n->s);
    if (id < 0) {
      int later = later_definition(p, n);
      if (later)
        return error_at(p, n,
                        "'%.*s' is used before its definition at line %d (names must be defined "
                        "before use, so a graph cannot contain a cycle)",
                        n->len, n->s, later);
      return error_at(p, n, "undefined name '%.*s'", n->len, n->s);
    }
    in[nin++] = id;
    Tok *s = next(p);
    if (is_punct(s, ')')) {
      close = s;
      break;
    }
    if (!is_punct(s, ','))
      return error_at(p, s, "expected ',' or ')' after an operand, found %s", describe(s, b, sizeof b));
  }
  int lo = graph_opkind_min_inputs(kind), hi = graph_opkind_max_inputs(kind);
  if (nin < lo || nin > hi) {
    if (lo == hi)
      return error_at(p, close, "%s takes %d operand%s, got %d", graph_opkind_name(kind), lo,
                      lo > 1 ? "s" : "", nin);
    return error_at(p, close, "%s takes %d to %d operands, got %d", graph_opkind_name(kind), lo, hi,
                    nin);
  }
  if (nout > 1 && kind != OP_SPLIT)
    return error_at(p, outs[1], "%s has one output, got %d", graph_opkind_name(kind), nout);
  GsAttrs at;
  graph_attrs_default(&at);
  if (parse_attrs(p, kind, kt, &at)) return -1;
  if (kind == OP_SPLIT && at.nsizes && at.nsizes != nout)
    return error_at(p, kt, "split has %d outputs but %d sizes", nout, at.nsizes);
  const char *names[GS_MAX_OPERANDS];
  for (int i = 0; i < nout; i++) names[i] = tok_str(p, outs[i]);
  int o = graph_add_op(p->g, kind, in, nin, names, nout, &at);
  gs_assert(o >= 0);
  GsOp *op = &p->g->ops[o];
  op->line = kt->line;
  op->col = kt->col;
  for (int i = 0; i < nout; i++) {
    p->g->tensors[op->out[i]].line = outs[i]->line;
    p->g->tensors[op->out[i]].col = outs[i]->col;
  }
  return 0;
}

GsGraph *gtg_parse(const char *path, const char *text, GsDiag *d) {
  Parser p = {0};
  p.path = path ? path : "<input>";
  p.d = d;
  p.g = graph_new(NULL);
  p.text = arena_strdup(p.g->arena, text);
  p.g->file = arena_strdup(p.g->arena, p.path);
  p.g->src = p.text;
  if (lex(&p) || parse_header(&p)) goto fail;
  for (;;) {
    skip_newlines(&p);
    Tok *t = peek(&p);
    if (t->kind == T_EOF) break;
    /* `input` starts a declaration unless it is itself the name being defined. */
    int r = is_word(t, "input") && p.toks[p.pos + 1].kind == T_NAME
                ? (next(&p), parse_input(&p))
                : parse_op(&p);
    if (r || expect_eol(&p)) goto fail;
  }
  graph_fill_outputs(p.g);
  if (graph_infer(p.g, p.g->default_batch, d)) goto fail;
  const char *bad = graph_check(p.g);
  if (bad) die("gtg_parse built an invalid graph: %s", bad);
  return p.g;
fail:
  graph_free(p.g);
  return NULL;
}

GsGraph *gtg_load(const char *path, GsDiag *d) {
  size_t len;
  char *text = util_read_file(path, &len);
  if (!text) {
    diag_error(d, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
    return NULL;
  }
  if (strlen(text) != len) {
    free(text);
    diag_error(d, path, 0, 0, NULL, "not a .gtg text file (contains a NUL byte)");
    return NULL;
  }
  GsGraph *g = gtg_parse(path, text, d);
  free(text);
  return g;
}
