/* gtasm.c — the .gtasm text assembly: assembler, disassembler, queue names, gtasm_inst_format.
 *
 * The assembler reads the text one line at a time (grammar in docs/isa.md, written by
 * gtasm_write_grammar_doc below): a `gtasm 1` header, directives (.region .tile .nregions
 * .ntiles .queue) and instructions `mnemonic name=value ...` whose operands come from the
 * isa.def table (isa_operand). Symbols are kept in two string-keyed hash tables (FNV-1a over
 * the bytes of the name, so the table never depends on addresses); ids are the program's.
 * The disassembler prints the same syntax: names where the program has unique ones, every
 * enum operand by name, other operands when non-zero. Invariant: for a program whose
 * region and tile names are unique (or absent), gtasm_parse(gtasm_write(p)) equals p field
 * by field, with the same queue order.
 */
#include "prog.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { GTASM_VERSION = 1 };
#define GTASM_MAX_ID ((uint32_t)GS_MAX_IDS)

/* s equals the n bytes at b (without strlen: this runs for every word of every line) */
static int same(const char *s, const char *b, size_t n) {
  return strncmp(s, b, n) == 0 && s[n] == 0;
}

/* ---------------------------------------------------------------- queue names ---- */

/* Output of the formatters: a FILE (the disassembler: nothing is ever cut) or a buffer
 * (gtasm_inst_format, gtasm_queue_name: cut to fit, always NUL-terminated). */
typedef struct {
  FILE *f;
  char *buf;
  size_t cap, len;
} Out;

static void out_n(Out *o, const char *s, size_t n) {
  if (o->f) {
    fwrite(s, 1, n, o->f);
    return;
  }
  size_t k = o->len + 1 < o->cap ? o->cap - 1 - o->len : 0;
  if (k > n) k = n;
  memcpy(o->buf + o->len, s, k);
  o->len += k;
  o->buf[o->len] = 0;
}
static void out_s(Out *o, const char *s) { out_n(o, s, strlen(s)); }

/* Numbers and other short formats (never longer than the local buffer). */
static void put(Out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Out *o, const char *fmt, ...) {
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  gs_assert(w >= 0 && (size_t)w < sizeof tmp);
  out_n(o, tmp, (size_t)w);
}

/* The unit of queue `index` of core `core`, or NULL (no arch, not a unit queue, no core). */
static const char *unit_name(const GsArch *a, int core, int index) {
  const GsCoreKind *k = prog_core_kind(a, core);
  if (!k || index < Q_UNIT0 || index - Q_UNIT0 >= k->nunits) return NULL;
  return a->units[k->unit[index - Q_UNIT0]].name;
}

/* Name of queue `index` within a core (what `.queue cX.kY.NAME` and `queue=NAME` say). A
 * unit is named by its config name (arch.c rejects a core kind listing a unit twice, so it is
 * unique in the core). */
static void out_core_queue(Out *o, const GsArch *a, int core, int index) {
  const char *u = unit_name(a, core, index);
  if (index == Q_DMA_IN) out_s(o, "dma_in");
  else if (index == Q_DMA_OUT) out_s(o, "dma_out");
  else if (u) out_s(o, u);
  else put(o, "q%d", index);
}

static void out_queue(Out *o, const GsArch *a, const GsQueue *q) {
  if (q->core < 0) {
    put(o, "c%d.dma%d", q->cluster, q->index);
  } else {
    put(o, "c%d.k%d.", q->cluster, q->core);
    out_core_queue(o, a, q->core, q->index);
  }
}

const char *gtasm_queue_name(const GsArch *a, const GsQueue *q, char *buf, size_t n) {
  Out o = {NULL, buf, n, 0};
  if (n) buf[0] = 0;
  out_queue(&o, a, q);
  return buf;
}

/* Parse a queue name within a core: dma_in, dma_out, qN, or a unit name (a unit named like
 * one of the first three is reachable as qN only). Returns the index or -1. */
static int parse_core_queue(const GsArch *a, int core, const char *s, size_t len) {
  if (len == 6 && memcmp(s, "dma_in", 6) == 0) return Q_DMA_IN;
  if (len == 7 && memcmp(s, "dma_out", 7) == 0) return Q_DMA_OUT;
  if (len >= 2 && s[0] == 'q' && isdigit((unsigned char)s[1])) {
    long v = 0;
    for (size_t i = 1; i < len; i++) {
      if (!isdigit((unsigned char)s[i]) || v > 1000) return -1;
      v = v * 10 + (s[i] - '0');
    }
    return (int)v;
  }
  const GsCoreKind *k = prog_core_kind(a, core);
  for (int u = 0; k && u < k->nunits; u++) {
    const char *nm = a->units[k->unit[u]].name;
    if (nm && same(nm, s, len)) return Q_UNIT0 + u;
  }
  return -1;
}

/* ------------------------------------------------------------- value printing ---- */

static int is_sym_start(int c) { return isalpha(c) || c == '_'; }
static int is_sym_char(int c) {
  return isalnum(c) || c == '_' || c == '.' || c == '$' || c == '[' || c == ']' || c == ':' ||
         c == '-';
}

/* A name as a bare symbol when it is one, else as a quoted string with escapes. */
static void put_name(Out *o, const char *name) {
  int bare = is_sym_start((unsigned char)name[0]);
  for (const char *s = name; bare && *s; s++) bare = is_sym_char((unsigned char)*s);
  if (bare) {
    out_s(o, name);
    return;
  }
  out_s(o, "\"");
  for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
    if (*s == '"' || *s == '\\') {
      char e[2] = {'\\', (char)*s};
      out_n(o, e, 2);
    } else if (*s < 0x20 || *s >= 0x7f) {
      put(o, "\\x%02x", *s);
    } else {
      out_n(o, (const char *)s, 1);
    }
  }
  out_s(o, "\"");
}

/* Per-id "print by name" flags: a name is used when present and unique. */
typedef struct {
  const unsigned char *tile_ok, *region_ok; /* NULL: use any non-NULL name */
} NameUse;

/* Operand od of in as " name=value"; nothing for an integer, region or tile operand that is
 * 0, or a wait or signal the instruction does not carry. core >= 0 resolves a queue against
 * that core's kind; otherwise a unit target prints by name only when every core kind has the
 * same unit there. */
static void format_operand(Out *o, const GsArch *a, const GsProgram *p, const GsInst *in,
                           int core, const NameUse *nu, const GsOperand *od) {
  int64_t v = isa_inst_get(in, od);
  int is_enum = od->kind != OPK_INT && od->kind != OPK_REGION && od->kind != OPK_TILE &&
                od->kind != OPK_SYNC_FLAG && od->kind != OPK_SYNC_QUEUE;
  if (v == 0 && !is_enum) return;
  out_s(o, " ");
  out_s(o, od->name);
  out_s(o, "=");
  const char *word = NULL; /* an enum value's name, when in range */
  switch (od->kind) {
  case OPK_INT: break;
  case OPK_SYNC_FLAG: v--; break;
  case OPK_REGION:
  case OPK_TILE: {
    int tile = od->kind == OPK_TILE;
    uint32_t id = (uint32_t)v;
    uint32_t count = tile ? p->ntiles : p->nregions;
    const unsigned char *ok = nu ? (tile ? nu->tile_ok : nu->region_ok) : NULL;
    const char *nm = id < count ? prog_name(p, tile, id) : NULL;
    if (nm && (!nu || ok[id])) {
      put_name(o, nm);
      return;
    }
    break;
  }
  case OPK_LEVEL: word = v < GS_LEVEL_COUNT ? isa_level_name((GsLevel)v) : NULL; break;
  case OPK_SCOPE: word = v < GS_SCOPE_COUNT ? isa_scope_name((GsScope)v) : NULL; break;
  case OPK_VOP: word = v < V_COUNT ? isa_vop_name((GsVop)v) : NULL; break;
  case OPK_DTYPE: word = v < DT_COUNT ? arch_dtype_name((GsDtype)v) : NULL; break;
  case OPK_SYNC_QUEUE: v--; /* fall through */
  case OPK_QUEUE:
    if (core >= 0 || v < Q_UNIT0) {
      out_core_queue(o, a, core, (int)v);
      return;
    }
    /* no core at hand (gtasm_inst_format): by name if every core kind agrees */
    for (int ck = 0, base = 0; a && ck < a->ncore_kinds; base += a->core_kinds[ck].count, ck++) {
      const char *u = unit_name(a, base, (int)v);
      if (ck == 0) word = u;
      else if (!u || !word || strcmp(u, word) != 0) word = NULL;
    }
    if (!word) {
      put(o, "q%lld", (long long)v);
      return;
    }
    break;
  }
  if (word) out_s(o, word);
  else put(o, "%lld", (long long)v);
}

/* Format one instruction: its mnemonic, its own operands, then its wait and signal. */
static void format_inst(Out *o, const GsArch *a, const GsProgram *p, const GsInst *in, int core,
                        const NameUse *nu) {
  GsOpcode op = (GsOpcode)in->op;
  if (op >= I_COUNT) {
    put(o, "opcode(%u)", in->op);
    return;
  }
  out_s(o, isa_mnemonic(op));
  for (int k = 0; k < isa_operand_count(op); k++) format_operand(o, a, p, in, core, nu, isa_operand(op, k));
  for (int k = 0; k < GS_SYNC_OPERANDS; k++) format_operand(o, a, p, in, core, nu, isa_sync_operand(k));
}

void gtasm_inst_format(const GsArch *a, const GsProgram *p, const GsInst *in, char *buf, size_t n) {
  Out o = {NULL, buf, n, 0};
  if (n) buf[0] = 0;
  format_inst(&o, a, p, in, -1, NULL);
}

/* ---------------------------------------------------------------- disassembler ---- */

/* Hash table name -> id (open addressing, power-of-two size, FNV-1a). */
typedef struct {
  const char **keys;
  uint32_t *ids;
  size_t cap, len;
} SymTab;

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static void sym_free(SymTab *t) {
  free(t->keys);
  free(t->ids);
  memset(t, 0, sizeof *t);
}

/* Returns the slot of name (keys[slot] == NULL when absent). */
static size_t sym_slot(const SymTab *t, const char *name, size_t n) {
  size_t i = (size_t)fnv1a(name, n) & (t->cap - 1);
  while (t->keys[i] && !same(t->keys[i], name, n))
    i = (i + 1) & (t->cap - 1);
  return i;
}

static int sym_get(const SymTab *t, const char *name, size_t n, uint32_t *id) {
  if (!t->cap) return 0;
  size_t i = sym_slot(t, name, n);
  if (!t->keys[i]) return 0;
  *id = t->ids[i];
  return 1;
}

/* key must outlive the table. */
static void sym_put(SymTab *t, const char *key, uint32_t id) {
  if (2 * (t->len + 1) > t->cap) {
    SymTab nt = {0};
    nt.cap = t->cap ? t->cap * 2 : 64;
    nt.keys = calloc(nt.cap, sizeof *nt.keys);
    nt.ids = calloc(nt.cap, sizeof *nt.ids);
    if (!nt.keys || !nt.ids) die("out of memory");
    for (size_t i = 0; i < t->cap; i++)
      if (t->keys[i]) {
        size_t s = sym_slot(&nt, t->keys[i], strlen(t->keys[i]));
        nt.keys[s] = t->keys[i];
        nt.ids[s] = t->ids[i];
      }
    nt.len = t->len;
    sym_free(t);
    *t = nt;
  }
  size_t s = sym_slot(t, key, strlen(key));
  if (!t->keys[s]) t->len++;
  t->keys[s] = key;
  t->ids[s] = id;
}

/* ok[id] = 1 when names[id] is set and no lower id has the same name. */
static unsigned char *unique_names(const GsProgram *p, int is_tile, uint32_t count) {
  unsigned char *ok = calloc(count ? count : 1, 1);
  if (!ok) die("out of memory");
  SymTab t = {0};
  for (uint32_t i = 1; i < count; i++) {
    uint32_t prev;
    const char *nm = prog_name(p, is_tile, i);
    if (!nm || sym_get(&t, nm, strlen(nm), &prev)) continue;
    sym_put(&t, nm, i);
    ok[i] = 1;
  }
  sym_free(&t);
  return ok;
}

static void write_decls(FILE *out, const GsProgram *p, int is_tile, uint32_t count,
                        const unsigned char *ok) {
  Out o = {out, NULL, 0, 0};
  const char *kind = is_tile ? "tile" : "region";
  for (uint32_t i = 1; i < count; i++) {
    const char *nm = prog_name(p, is_tile, i);
    if (!nm) continue;
    if (ok[i]) {
      fprintf(out, ".%s ", kind);
      put_name(&o, nm);
      fprintf(out, " %u\n", i);
    } else {
      fprintf(out, "# %s %u is also named ", kind, i);
      put_name(&o, nm);
      fputs(" (printed by number)\n", out);
    }
  }
}

int gtasm_write(FILE *out, const GsArch *a, const GsProgram *p) {
  NameUse nu;
  unsigned char *tok = unique_names(p, 1, p->ntiles);
  unsigned char *rok = unique_names(p, 0, p->nregions);
  nu.tile_ok = tok;
  nu.region_ok = rok;
  fprintf(out, "gtasm %d\n# %d queues, %lld instructions\n", GTASM_VERSION, p->nqueues,
          (long long)prog_ninsts(p));
  fprintf(out, ".nregions %u\n.ntiles %u\n", p->nregions, p->ntiles);
  write_decls(out, p, 0, p->nregions, rok);
  write_decls(out, p, 1, p->ntiles, tok);
  Out o = {out, NULL, 0, 0};
  for (int qi = 0; qi < p->nqueues; qi++) {
    const GsQueue *q = &p->queues[qi];
    fputs("\n.queue ", out);
    out_queue(&o, a, q);
    fputc('\n', out);
    GsCursor cur;
    prog_cursor_init(&cur, q);
    for (const GsInst *in; (in = prog_cursor_next(&cur)) != NULL;) {
      fputs("  ", out);
      format_inst(&o, a, p, in, q->core, &nu);
      fputc('\n', out);
    }
    prog_cursor_release(&cur);
  }
  free(tok);
  free(rok);
  return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------------- assembler ---- */

typedef struct {
  const char *path, *src;
  const GsArch *a;
  GsDiag *d;
  GsProgram *p;
  int line;
  const char *lstart;    /* start of the current line */
  int cur;               /* current queue index in p->queues, -1 before any .queue */
  SymTab syms[2];        /* [0] regions, [1] tiles */
  uint32_t maxid[2];     /* largest id used or declared */
  int64_t declared[2];   /* .nregions / .ntiles, -1 if not given */
} Asm;

static const char *const kind_word[2] = {"region", "tile"};

static void aerr(Asm *s, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void aerr(Asm *s, const char *at, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(s->d, s->path, s->line, (int)(at - s->lstart) + 1, s->src, "%s", msg);
}

/* A word: bare characters up to blank/#/end of line, or "quoted" parts (with escapes). */
typedef struct {
  const char *start, *end;
} Word;

static int at_eol(const char *c) { return *c == 0 || *c == '\n' || *c == '#'; }

static const char *skip_blank(const char *c) {
  while (*c == ' ' || *c == '\t' || *c == '\r') c++;
  return c;
}

/* Reads the next word at *pc; 0 at end of line. Unterminated quotes are reported. */
static int next_word(Asm *s, const char **pc, Word *w) {
  const char *c = skip_blank(*pc);
  if (at_eol(c)) {
    *pc = c;
    return 0;
  }
  w->start = c;
  while (*c && *c != '\n' && *c != ' ' && *c != '\t' && *c != '\r' && *c != '#') {
    if (*c == '"') {
      const char *q = c++;
      while (*c && *c != '\n' && *c != '"') c += (*c == '\\' && c[1] && c[1] != '\n') ? 2 : 1;
      if (*c != '"') {
        aerr(s, q, "unterminated string");
        w->end = c;
        *pc = c;
        return -1;
      }
    }
    c++;
  }
  w->end = c;
  *pc = c;
  return 1;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A symbol (bare or quoted) into a fresh heap string; NULL after reporting an error. */
static char *read_symbol(Asm *s, const char *b, const char *e) {
  size_t n = (size_t)(e - b);
  char *out = malloc(n + 1), *o = out;
  if (!out) die("out of memory");
  if (*b != '"') {
    if (!is_sym_start((unsigned char)*b)) goto bad;
    for (const char *c = b; c < e; c++)
      if (!is_sym_char((unsigned char)*c)) goto bad;
    memcpy(out, b, n);
    out[n] = 0;
    return out;
  bad:
    aerr(s, b, "bad name '%.*s': a name is [A-Za-z_][A-Za-z0-9_.$:[]-]* or a \"quoted string\"",
         (int)n, b);
    free(out);
    return NULL;
  }
  if (n < 2 || e[-1] != '"') {
    aerr(s, b, "a quoted name must end with '\"'");
    free(out);
    return NULL;
  }
  for (const char *c = b + 1; c < e - 1; c++) {
    if (*c != '\\') {
      if (*c == '"') {
        aerr(s, c, "unexpected '\"' inside a quoted name (write \\\")");
        free(out);
        return NULL;
      }
      *o++ = *c;
      continue;
    }
    c++;
    if (*c == '"' || *c == '\\') *o++ = *c;
    else if (*c == 'n') *o++ = '\n';
    else if (*c == 't') *o++ = '\t';
    else if (*c == 'x' && c + 2 < e - 1 && hexval(c[1]) >= 0 && hexval(c[2]) >= 0 &&
             hexval(c[1]) * 16 + hexval(c[2]) != 0) {
      *o++ = (char)(hexval(c[1]) * 16 + hexval(c[2]));
      c += 2;
    } else {
      aerr(s, c - 1, "bad escape in string (use \\\" \\\\ \\n \\t or \\xHH, HH not 00)");
      free(out);
      return NULL;
    }
  }
  *o = 0;
  return out;
}

/* Integer: [-]decimal or [-]0xhex, within int64. */
static int parse_int(const char *b, const char *e, int64_t *out) {
  int neg = 0;
  if (b < e && *b == '-') neg = 1, b++;
  if (b >= e) return -1;
  uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  int base = 10;
  if (e - b > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) base = 16, b += 2;
  for (; b < e; b++) {
    int dv = base == 16 ? hexval(*b) : (isdigit((unsigned char)*b) ? *b - '0' : -1);
    if (dv < 0) return -1;
    if (v > (lim - (uint64_t)dv) / (uint64_t)base) return -2;
    v = v * (uint64_t)base + (uint64_t)dv;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

static int word_is(const Word *w, const char *s) { return same(s, w->start, (size_t)(w->end - w->start)); }

/* Note an id (declared or used); it must fit the .nregions/.ntiles given. */
static int use_id(Asm *s, int kind, const char *at, int64_t id) {
  if (id < 0 || id >= (int64_t)GTASM_MAX_ID) {
    aerr(s, at, "%s id %lld out of range (0..%u)", kind_word[kind], (long long)id,
         GTASM_MAX_ID - 1);
    return -1;
  }
  if (s->declared[kind] >= 0 && id >= s->declared[kind]) {
    aerr(s, at, "%s id %lld is not below .n%ss %lld", kind_word[kind], (long long)id,
         kind_word[kind], (long long)s->declared[kind]);
    return -1;
  }
  if ((uint32_t)id > s->maxid[kind]) s->maxid[kind] = (uint32_t)id;
  return 0;
}

/* .region NAME [ID] / .tile NAME [ID] */
static void dir_symbol(Asm *s, int kind, const char **pc, const Word *dw) {
  Word nw, iw;
  if (next_word(s, pc, &nw) <= 0) {
    aerr(s, dw->end, ".%s needs a name", kind_word[kind]);
    return;
  }
  char *name = read_symbol(s, nw.start, nw.end);
  if (!name) return;
  if (strlen(name) > GS_MAX_NAME) {
    aerr(s, nw.start, "a name is at most %d bytes", GS_MAX_NAME);
    free(name);
    return;
  }
  int64_t id = (int64_t)s->maxid[kind] + 1;
  int r = next_word(s, pc, &iw);
  if (r > 0) {
    if (parse_int(iw.start, iw.end, &id) != 0 || id < 1) {
      aerr(s, iw.start, "bad %s id '%.*s' (a positive integer)", kind_word[kind],
           (int)(iw.end - iw.start), iw.start);
      free(name);
      return;
    }
    Word extra;
    if (next_word(s, pc, &extra) > 0) {
      aerr(s, extra.start, "unexpected '%.*s' after .%s", (int)(extra.end - extra.start),
           extra.start, kind_word[kind]);
      free(name);
      return;
    }
  }
  if (r < 0) {
    free(name);
    return;
  }
  uint32_t old;
  if (sym_get(&s->syms[kind], name, strlen(name), &old)) {
    aerr(s, nw.start, "duplicate %s name '%s' (already %s %u)", kind_word[kind], name,
         kind_word[kind], old);
    free(name);
    return;
  }
  const char *at = r > 0 ? iw.start : nw.start;
  if (use_id(s, kind, at, id) != 0) {
    free(name);
    return;
  }
  if (kind) prog_reserve_ids(s->p, 0, (uint32_t)id + 1);
  else prog_reserve_ids(s->p, (uint32_t)id + 1, 0);
  const char *had = prog_name(s->p, kind, (uint32_t)id);
  if (had) {
    aerr(s, at, "%s %lld already has the name '%s'", kind_word[kind], (long long)id, had);
    free(name);
    return;
  }
  prog_set_name(s->p, kind, (uint32_t)id, name);
  free(name);
  sym_put(&s->syms[kind], prog_name(s->p, kind, (uint32_t)id), (uint32_t)id); /* the program's copy */
}

/* .nregions N / .ntiles N */
static void dir_count(Asm *s, int kind, const char **pc, const Word *dw) {
  Word w;
  int64_t n;
  if (next_word(s, pc, &w) <= 0) {
    aerr(s, dw->end, "%.*s needs a count", (int)(dw->end - dw->start), dw->start);
    return;
  }
  if (parse_int(w.start, w.end, &n) != 0 || n < 1 || n > (int64_t)GTASM_MAX_ID) {
    aerr(s, w.start, "bad count '%.*s' (1..%u; ids are below it, 0 means none)",
         (int)(w.end - w.start), w.start, GTASM_MAX_ID);
    return;
  }
  if (s->declared[kind] >= 0) {
    aerr(s, dw->start, "%.*s given twice", (int)(dw->end - dw->start), dw->start);
    return;
  }
  if (s->maxid[kind] >= n) {
    aerr(s, w.start, "%s id %u is already in use; .n%ss must be above it", kind_word[kind],
         s->maxid[kind], kind_word[kind]);
    return;
  }
  s->declared[kind] = n;
}

/* cC.kK.NAME or cC.dmaE */
static void dir_queue(Asm *s, const char **pc, const Word *dw) {
  Word w;
  char why[256];
  if (next_word(s, pc, &w) <= 0) {
    aerr(s, dw->end, ".queue needs a queue name (cC.kK.NAME or cC.dmaE)");
    return;
  }
  const char *c = w.start, *e = w.end;
  long cl = -1, core = -1, idx = -1;
  char *endp;
  if (c < e && *c == 'c' && isdigit((unsigned char)c[1])) {
    cl = strtol(c + 1, &endp, 10);
    c = endp;
    if (c < e && *c == '.') c++;
    else cl = -1;
  }
  if (cl >= 0 && e - c > 3 && memcmp(c, "dma", 3) == 0 && isdigit((unsigned char)c[3])) {
    idx = strtol(c + 3, &endp, 10);
    if (endp != e || idx > 1000000) idx = -1;
    core = -1;
  } else if (cl >= 0 && c < e && *c == 'k' && isdigit((unsigned char)c[1])) {
    core = strtol(c + 1, &endp, 10);
    if (endp < e && *endp == '.' && core <= 1000000) {
      const char *qs = endp + 1;
      int numeric = qs < e && (*qs == 'q' || (e - qs >= 4 && memcmp(qs, "dma_", 4) == 0));
      if (!s->a && !numeric) {
        aerr(s, qs, "unit queue name '%.*s' needs an arch (give --arch, or write qN)",
             (int)(e - qs), qs);
        return;
      }
      idx = parse_core_queue(s->a, (int)core, qs, (size_t)(e - qs));
      if (idx < 0) {
        if (!prog_queue_exists(s->a, (int)cl, (int)core, 0, why, sizeof why))
          aerr(s, w.start, "queue '%.*s': %s", (int)(w.end - w.start), w.start, why);
        else
          aerr(s, qs, "core %ld has no queue '%.*s'", core, (int)(e - qs), qs);
        return;
      }
    }
  }
  if (cl < 0 || cl > 1000000 || idx < 0) {
    aerr(s, w.start, "bad queue name '%.*s' (cC.kK.dma_in|dma_out|UNIT|qN or cC.dmaE)",
         (int)(w.end - w.start), w.start);
    return;
  }
  if (!prog_queue_exists(s->a, (int)cl, (int)core, (int)idx, why, sizeof why)) {
    aerr(s, w.start, "queue '%.*s': %s", (int)(w.end - w.start), w.start, why);
    return;
  }
  Word extra;
  if (next_word(s, pc, &extra) > 0) {
    aerr(s, extra.start, "unexpected '%.*s' after .queue", (int)(extra.end - extra.start),
         extra.start);
    return;
  }
  prog_queue(s->p, (int)cl, (int)core, (int)idx);
  s->cur = prog_find_queue(s->p, (int)cl, (int)core, (int)idx);
}

/* A queue operand's value: a queue of the current queue's core (a signal's target). */
static int queue_value(Asm *s, const GsOperand *o, const char *vb, int len, int64_t *out) {
  const GsQueue *q = &s->p->queues[s->cur];
  char why[256];
  if (q->core < 0) {
    aerr(s, vb, "%s", prog_no_flags_msg);
    return -1;
  }
  if (!s->a && !(len >= 1 && *vb == 'q') && !(len >= 4 && memcmp(vb, "dma_", 4) == 0)) {
    aerr(s, vb, "unit queue name '%.*s' needs an arch (give --arch, or write qN)", len, vb);
    return -1;
  }
  int idx = parse_core_queue(s->a, q->core, vb, (size_t)len);
  if (idx < 0) {
    aerr(s, vb, "core %d has no queue '%.*s'", q->core, len, vb);
    return -1;
  }
  if (!prog_queue_exists(s->a, q->cluster, q->core, idx, why, sizeof why)) {
    aerr(s, vb, "%s", why);
    return -1;
  }
  *out = idx + (o->kind == OPK_SYNC_QUEUE); /* stored + 1: 0 is no signal */
  return 0;
}

/* Resolves one operand value; 0 ok. */
static int operand_value(Asm *s, const GsOperand *o, const char *vb, const char *ve,
                         int64_t *out) {
  int len = (int)(ve - vb);
  switch (o->kind) {
  case OPK_INT: {
    int r = parse_int(vb, ve, out);
    if (r == 0 && o->field == OPF_FLAGS && (*out < 0 || *out > 255)) r = -2;
    if (r == 0 && (o->field == OPF_SIGNAL_FLAG || o->field == OPF_SIGNAL2_FLAG) &&
        (*out < 0 || *out > GS_SYNC_FLAG_MAX))
      r = -2;
    if (r == -2) aerr(s, vb, "%s=%.*s out of range", o->name, len, vb);
    else if (r != 0) aerr(s, vb, "%s: '%.*s' is not an integer", o->name, len, vb);
    return r;
  }
  case OPK_REGION:
  case OPK_TILE: {
    int kind = o->kind == OPK_TILE;
    if (vb < ve && (isdigit((unsigned char)*vb) || *vb == '-')) {
      if (parse_int(vb, ve, out) != 0) {
        aerr(s, vb, "%s: '%.*s' is neither a %s name nor an id", o->name, len, vb,
             kind_word[kind]);
        return -1;
      }
      return use_id(s, kind, vb, *out);
    }
    uint32_t id = 0;
    int found, bare = is_sym_start((unsigned char)*vb);
    for (const char *c = vb; bare && c < ve; c++) bare = is_sym_char((unsigned char)*c);
    if (bare) { /* the common case: look the text up as it is, no copy */
      found = sym_get(&s->syms[kind], vb, (size_t)len, &id);
      if (!found)
        aerr(s, vb, "unknown %s '%.*s' (declare it with .%s)", kind_word[kind], len, vb,
             kind_word[kind]);
    } else {
      char *name = read_symbol(s, vb, ve);
      if (!name) return -1;
      found = sym_get(&s->syms[kind], name, strlen(name), &id);
      if (!found)
        aerr(s, vb, "unknown %s '%s' (declare it with .%s)", kind_word[kind], name, kind_word[kind]);
      free(name);
    }
    *out = id;
    return found ? 0 : -1;
  }
  case OPK_LEVEL:
    for (int l = 0; l < GS_LEVEL_COUNT; l++)
      if (same(isa_level_name((GsLevel)l), vb, (size_t)len))
        return (int)(*out = l, 0);
    aerr(s, vb, "bad level '%.*s' (ddr, gb or lb)", len, vb);
    return -1;
  case OPK_SCOPE:
    for (int l = 0; l < GS_SCOPE_COUNT; l++)
      if (same(isa_scope_name((GsScope)l), vb, (size_t)len))
        return (int)(*out = l, 0);
    aerr(s, vb, "bad scope '%.*s' (cluster or chip)", len, vb);
    return -1;
  case OPK_VOP:
    for (int v = 0; v < V_COUNT; v++)
      if (same(isa_vop_name((GsVop)v), vb, (size_t)len))
        return (int)(*out = v, 0);
    aerr(s, vb, "unknown vector op '%.*s' (see the VOP table in docs/isa.md)", len, vb);
    return -1;
  case OPK_DTYPE:
    for (int t = 0; t < DT_COUNT; t++)
      if (same(arch_dtype_name((GsDtype)t), vb, (size_t)len))
        return (int)(*out = t, 0);
    aerr(s, vb, "unknown dtype '%.*s'", len, vb);
    return -1;
  case OPK_SYNC_FLAG: {
    int r = parse_int(vb, ve, out);
    if (r == 0 && (*out < 0 || *out > GS_SYNC_FLAG_MAX)) r = -2;
    if (r == -2) aerr(s, vb, "%s=%.*s out of range (a flag 0..%d)", o->name, len, vb, GS_SYNC_FLAG_MAX);
    else if (r != 0) aerr(s, vb, "%s: '%.*s' is not an integer", o->name, len, vb);
    else *out += 1; /* stored + 1: 0 is no wait */
    return r;
  }
  case OPK_SYNC_QUEUE:
  case OPK_QUEUE: return queue_value(s, o, vb, len, out);
  }
  return -1;
}

/* Operand k of op in assembly: its own operands, then the ones every opcode takes. */
static const GsOperand *any_operand(GsOpcode op, int k) {
  int own = isa_operand_count(op);
  return k < own ? isa_operand(op, k) : isa_sync_operand(k - own);
}

static void instruction(Asm *s, const char **pc, const Word *mw) {
  int op = -1;
  for (int i = 0; i < I_COUNT; i++)
    if (word_is(mw, isa_mnemonic((GsOpcode)i))) op = i;
  if (op < 0) {
    aerr(s, mw->start, "unknown mnemonic '%.*s'", (int)(mw->end - mw->start), mw->start);
    return;
  }
  if (s->cur < 0) {
    aerr(s, mw->start, "instruction before any .queue directive");
    return;
  }
  const GsQueue *q = &s->p->queues[s->cur];
  char why[256];
  if (!prog_queue_accepts(s->a, q->core, q->index, (GsOpcode)op, why, sizeof why)) {
    char qn[64];
    aerr(s, mw->start, "%s (queue %s)", why, gtasm_queue_name(s->a, q, qn, sizeof qn));
    return;
  }
  GsInst in;
  memset(&in, 0, sizeof in);
  in.op = (uint8_t)op;
  unsigned seen = 0;
  int bad = 0, nops = isa_operand_count((GsOpcode)op) + GS_SYNC_OPERANDS;
  Word w;
  int r;
  while ((r = next_word(s, pc, &w)) > 0) {
    const char *eq = memchr(w.start, '=', (size_t)(w.end - w.start));
    if (!eq || eq == w.start) {
      aerr(s, w.start, "expected name=value, found '%.*s'", (int)(w.end - w.start), w.start);
      bad = 1;
      continue;
    }
    int k = -1;
    for (int j = 0; j < nops && k < 0; j++)
      if (same(any_operand((GsOpcode)op, j)->name, w.start, (size_t)(eq - w.start))) k = j;
    if (k < 0) {
      char names[256];
      Out o = {NULL, names, sizeof names, 0};
      names[0] = 0;
      for (int j = 0; j < nops; j++) {
        if (j) out_s(&o, " ");
        out_s(&o, any_operand((GsOpcode)op, j)->name);
      }
      aerr(s, w.start, "%s has no operand '%.*s' (operands: %s)", isa_mnemonic((GsOpcode)op),
           (int)(eq - w.start), w.start, names);
      bad = 1;
      continue;
    }
    if (seen & 1u << k) {
      aerr(s, w.start, "operand '%.*s' given twice", (int)(eq - w.start), w.start);
      bad = 1;
      continue;
    }
    seen |= 1u << k;
    int64_t v;
    const GsOperand *o = any_operand((GsOpcode)op, k);
    if (eq + 1 >= w.end) {
      aerr(s, eq + 1, "operand '%s' has no value", o->name);
      bad = 1;
      continue;
    }
    if (operand_value(s, o, eq + 1, w.end, &v) != 0) {
      bad = 1;
      continue;
    }
    isa_inst_set(&in, o, v);
  }
  if (r < 0 || bad) return;
  if ((in.wait || in.wait2) && q->core < 0) {
    aerr(s, mw->start, "%s", prog_no_flags_msg);
    return;
  }
  if (in.signal_flag && !in.signal) {
    aerr(s, mw->start, "signal_flag=%d without signal= (the queue to signal)", in.signal_flag);
    return;
  }
  if (in.wait2 && !in.wait) {
    aerr(s, mw->start, "wait2=%d without wait= (the flag waited on first)", in.wait2 - 1);
    return;
  }
  if (in.signal2_flag && !in.signal2) {
    aerr(s, mw->start, "signal2_flag=%d without signal2= (the queue to signal)", in.signal2_flag);
    return;
  }
  if (in.signal2 && !in.signal) {
    aerr(s, mw->start, "signal2= without signal= (the queue signalled first)");
    return;
  }
  *prog_emit(&s->p->queues[s->cur]) = in;
}

static void parse_line(Asm *s, const char *c) {
  Word w;
  const char *pc = c;
  int r = next_word(s, &pc, &w);
  if (r <= 0) return;
  if (s->line > 0 && w.start[0] == '.') {
    if (word_is(&w, ".queue")) dir_queue(s, &pc, &w);
    else if (word_is(&w, ".region")) dir_symbol(s, 0, &pc, &w);
    else if (word_is(&w, ".tile")) dir_symbol(s, 1, &pc, &w);
    else if (word_is(&w, ".nregions")) dir_count(s, 0, &pc, &w);
    else if (word_is(&w, ".ntiles")) dir_count(s, 1, &pc, &w);
    else {
      aerr(s, w.start, "unknown directive '%.*s' (.queue .region .tile .nregions .ntiles)",
           (int)(w.end - w.start), w.start);
      return;
    }
    Word extra;
    if (word_is(&w, ".queue") || word_is(&w, ".region") || word_is(&w, ".tile")) return;
    if (next_word(s, &pc, &extra) > 0)
      aerr(s, extra.start, "unexpected '%.*s' after %.*s", (int)(extra.end - extra.start),
           extra.start, (int)(w.end - w.start), w.start);
    return;
  }
  instruction(s, &pc, &w);
}

GsProgram *gtasm_parse(const char *path, const char *text, const GsArch *a, GsDiag *d) {
  Asm s;
  memset(&s, 0, sizeof s);
  s.path = path;
  s.src = text;
  s.a = a;
  s.d = d;
  s.p = prog_new();
  s.cur = -1;
  s.declared[0] = s.declared[1] = -1;
  int before = d->nerrors, header = 0;
  const char *c = text;
  for (s.line = 1; *c; s.line++) {
    s.lstart = c;
    const char *eol = strchr(c, '\n');
    if (!header) {
      Word w, v;
      const char *pc = c;
      int r = next_word(&s, &pc, &w);
      if (r > 0) {
        int64_t ver = 0;
        if (!word_is(&w, "gtasm")) {
          aerr(&s, w.start, "expected the header 'gtasm %d' before anything else", GTASM_VERSION);
          break;
        }
        if (next_word(&s, &pc, &v) <= 0 || parse_int(v.start, v.end, &ver) != 0) {
          aerr(&s, w.end, "the header needs a format version: 'gtasm %d'", GTASM_VERSION);
          break;
        }
        if (ver != GTASM_VERSION) {
          aerr(&s, v.start, "unsupported gtasm version %lld (this gtsim reads %d)",
               (long long)ver, GTASM_VERSION);
          break;
        }
        header = 1;
      }
    } else {
      parse_line(&s, c);
    }
    if (d->nerrors - before >= (d->max_errors > 0 ? d->max_errors : 1)) break;
    if (!eol) break;
    c = eol + 1;
  }
  if (!header && d->nerrors == before) {
    s.lstart = text;
    diag_error(d, path, 1, 1, text, "empty program: expected the header 'gtasm %d'", GTASM_VERSION);
  }
  if (d->nerrors == before) {
    uint32_t nr = s.declared[0] >= 0 ? (uint32_t)s.declared[0] : s.maxid[0] + 1;
    uint32_t nt = s.declared[1] >= 0 ? (uint32_t)s.declared[1] : s.maxid[1] + 1;
    prog_reserve_ids(s.p, nr, nt);
  }
  sym_free(&s.syms[0]);
  sym_free(&s.syms[1]);
  if (d->nerrors != before) {
    prog_free(s.p);
    return NULL;
  }
  return s.p;
}

/* ------------------------------------------------------------------ the doc ---- */

void gtasm_write_grammar_doc(FILE *out) {
  fprintf(out,
"A `.gtasm` file is line-oriented text. `#` starts a comment (outside a quoted name); blank\n"
"lines are ignored; words are separated by blanks. Grammar (EBNF; `{x}` zero or more, `[x]`\n"
"optional):\n"
"\n"
"```\n"
"file        = header { line } ;\n"
"header      = \"gtasm\" version ;                 (* version %d; must come first *)\n"
"line        = directive | instruction ;\n"
"directive   = \".queue\" queue\n"
"            | \".region\" name [ id ]             (* id defaults to largest id so far + 1 *)\n"
"            | \".tile\" name [ id ]\n"
"            | \".nregions\" count                 (* region ids are below count *)\n"
"            | \".ntiles\" count ;\n"
"instruction = mnemonic { operand } ;            (* after a .queue; goes to that queue *)\n"
"operand     = opname \"=\" value ;                (* any order; each at most once *)\n"
"queue       = \"c\" int \".k\" int \".\" corequeue    (* queue of core k of cluster c *)\n"
"            | \"c\" int \".dma\" int ;              (* cluster DMA engine *)\n"
"corequeue   = \"dma_in\" | \"dma_out\" | \"q\" int | unitname ;\n"
"value       = int | name | enumname ;\n"
"int         = [ \"-\" ] ( digits | \"0x\" hexdigits ) ;\n"
"name        = ( letter | \"_\" ) { letter | digit | \"_\" | \".\" | \"$\" | \":\" | \"[\" | \"]\" | \"-\" }\n"
"            | '\"' { char | '\\\"' | '\\\\' | '\\n' | '\\t' | '\\x' hex hex } '\"' ;\n"
"```\n"
"\n"
"Operand values by kind (the operand tables below give each operand's kind):\n"
"\n"
"- integer operands: decimal or `0x` hex, 64-bit signed; `acc` (flags) is 0..255;\n"
"- region and tile operands: a name declared earlier with `.region`/`.tile`, or an id\n"
"  (0 = none); ids need no declaration, the program's count grows to cover them;\n"
"- `level=ddr|gb|lb`, `scope=cluster|chip`, `op=` a VOP name, `dtype=` a dtype name;\n"
"- `queue=` a queue of the same core: `dma_in`, `dma_out`, a unit name or `qN`.\n"
"\n"
"An operand left out is 0; for the enum operands that is the first name of each list\n"
"(`level=ddr`, `op=add`, `scope=cluster`, `dtype=int8`), so write them out.\n"
"\n"
"Queue names: `cC.kK.dma_in`, `cC.kK.dma_out`, `cC.kK.UNIT` (the unit's name from the arch's\n"
"`units =` list), `cC.kK.qN` (queue index N: 0 dma_in, 1 dma_out, 2+i the i-th unit) and\n"
"`cC.dmaE`. `dma_in`, `dma_out` and `qN` are read first: a unit with such a name is reachable\n"
"as `qN` only. Unit names need the arch (`--arch`); without one, write `qN`.\n"
"\n"
"The assembler reports `file:line:col: error: message`, the line and a caret, and exits 1\n"
"for: a missing or other header version, an unknown directive, mnemonic or operand, an\n"
"operand given twice, a bad value (not an integer, unknown name or enum word, out of range),\n"
"an unknown or undeclared symbol, a duplicate symbol, a queue the arch does not have, an\n"
"instruction before any `.queue`, an instruction on the wrong engine (e.g. `gemm` on a DMA\n"
"queue, `vec` on a unit without vector capability), and flags on a cluster DMA queue.\n"
"Assembled programs then go through the static checks (below) like any other program.\n"
"\n"
"The disassembler (`gtsim --disasm PROG.gtp`, or `--emit OUT.gtasm`) prints this syntax:\n"
"`.nregions`/`.ntiles` and every named region and tile with its id, then each queue with\n"
"its instructions; region/tile operands by name where the program has a unique name, enum\n"
"operands (level, op, queue, scope, dtype) always by name, other operands only when non-zero.\n"
"Assembling the output gives back the same program, field by field (tested). Names that\n"
"occur twice in a program are printed for their first id only and the others by number.\n",
          GTASM_VERSION);
}
