/* prog_code.c — a queue's instructions in memory, encoded compactly (prog.h: prog_emit,
 * GsCursor).
 *
 * Why: a scheduled program has tens of millions of instructions, and a GsInst is 120 bytes,
 * so holding the program as an array of them was what bounded the batch a machine could
 * simulate (resnet50 at batch 64 on stcp920: 16 M instructions, 1.7 GB). Instruction streams
 * are highly regular: one queue repeats a few opcodes whose fields stay the same or move by a
 * fixed stride (the next tile id, the next row of a DDR area). So each field is predicted and
 * only the misses are stored.
 *
 * Contract:
 * - The fields of an instruction are 20 integer slots: sub, dtype, flags, r[0..2], t[0..2],
 *   n[0..9], and its wait, signal, signal_flag, wait2, signal2 and signal2_flag bytes as one
 *   slot.
 * - A queue interleaves a few streams (a DMA queue loads activations, weights and residuals
 *   in turn, each with its own source region and address walk), so a queue keeps
 *   GS_CODE_ROWS rows of history, each the last values of one stream and a stride per slot;
 *   the prediction of a slot is last + stride. The stride follows the "two-delta" rule: it
 *   becomes the new difference only when the same difference is seen twice in a row, so a
 *   field that steps once to a new constant costs one miss, not two.
 * - The encoder picks the row (hist_choose: one whose last instruction has the same opcode,
 *   regions and sub, and that signals as it does (key_sub), else a new one) and writes its
 *   index; the decoder just reads it. A row taken for another opcode than it held starts as a
 *   copy of that opcode's last row.
 * - A record is: a header byte, opcode | row << 4 (opcode 15 is an escape: the opcode follows
 *   in a byte of its own, so even out-of-range opcodes round-trip); a LEB128 mask of the slots
 *   whose value differs from the prediction (bit order: SLOT_AT, the slots that change most
 *   often first, so the mask is one byte in the common case); then per set bit the zigzag
 *   LEB128 of value − prediction in 64-bit wrap-around arithmetic, so every value round-trips.
 * - Records go into blocks that double from 1 KiB to 64 KiB (a machine with thousands of
 *   queues pays little for its short ones); a record never straddles two blocks. A queue read
 *   from a file (prog_code_import) holds the file's records as they are, in one block of their
 *   size, and its encoder's state is rebuilt from the decoder's.
 * - prog_emit hands out the queue's staged instruction; it is encoded when the next one is
 *   emitted, and a cursor returns the staged one last, so there is no "finish" step. On a
 *   queue of a program attached to a check's thread (prog_check_attach, prog_check_takes)
 *   it is handed to that thread instead, which encodes it (prog_code_append) in the same
 *   order, so into the same bytes, beside the emission (docs/speed.md, "Scheduling").
 * - The records are also what a .gtp file of version 5 holds (gtp.c, docs/isa.md; versions 3
 *   and 4, still read, had a narrower sync slot): a change to the record format or to the
 *   decoder's prediction rules needs a new file version. The encoder's choice of row is not
 *   part of the format (the decoder reads it).
 * Encoding and decoding cost a few tens of nanoseconds an instruction (bench: make bench).
 */
#include "prog.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_MIN = 1024, BLOCK_MAX = 64 * 1024, MAX_RECORD = 2 + 3 + GS_CODE_SLOTS * 10 };
enum { OP_ESCAPE = 15 };
_Static_assert(GS_CODE_SLOTS == 10 + GS_INST_NUM, "the slots are sub, dtype, flags, r[3], t[3], n[], sync");
_Static_assert(GS_CODE_ROWS <= 16, "a record's header byte holds the row in 4 bits");

struct GsCodeBlock {
  struct GsCodeBlock *next;
  uint32_t used, size;
  unsigned char b[];
};

/* The emitting thread's fields, then the encoder's, on cache lines of their own: when another
 * thread encodes (prog_check_attach), a line both write would move between the cores on every
 * instruction (with the encoder's clock beside the staged instruction, the emitter's stores
 * into that instruction took several times as long). */
struct GsQueueCode {
  GsInst stage;             /* the last instruction emitted, not encoded yet */
  int staged;
  _Alignas(64) GsCodeBlock *head, *tail;
  int64_t nencoded;         /* instructions encoded: all but the staged one, or fewer while
                             * another thread encodes (prog_queue_encoded) */
  GsCodeHist hist;          /* the encoder's predictions */
};

/* SLOT_AT[k]: where the field of slot k of the mask lies in a GsInst, and its width in bytes
 * (its bits: a checked record may not set more, or it would not read back as it was written).
 * The order: tiles and the first numbers change on almost every data instruction; regions,
 * sub, dtype, flags and the synchronisation seldom (get_slots reads them in this order). The
 * sync slot is wait, signal, signal_flag, wait2, signal2 and signal2_flag, six bytes in that
 * order: on a little-endian machine one 64-bit store of the slot's value writes all six, and
 * zero into the two reserved bytes after them. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the decoder writes the sync slot as one little-endian 64-bit store"
#endif
#define SLOT_N(i) {offsetof(GsInst, n) + (i) * sizeof(int64_t), 8}
static const struct { uint8_t off, width; } SLOT_AT[GS_CODE_SLOTS] = {
    {offsetof(GsInst, t), 4}, {offsetof(GsInst, t) + 4, 4}, {offsetof(GsInst, t) + 8, 4},
    SLOT_N(0), SLOT_N(1), SLOT_N(2), SLOT_N(3),
    {offsetof(GsInst, r), 4}, {offsetof(GsInst, r) + 4, 4}, {offsetof(GsInst, r) + 8, 4},
    SLOT_N(4), SLOT_N(5), SLOT_N(6), SLOT_N(7), SLOT_N(8), SLOT_N(9),
    {offsetof(GsInst, sub), 1}, {offsetof(GsInst, dtype), 1}, {offsetof(GsInst, flags), 1},
    {offsetof(GsInst, wait), 6}};
#undef SLOT_N
_Static_assert(offsetof(GsInst, wait2) == offsetof(GsInst, wait) + 3 &&
                   offsetof(GsInst, signal2_flag) == offsetof(GsInst, wait) + 5 &&
                   offsetof(GsInst, reserved) == offsetof(GsInst, wait) + 6,
               "the sync slot's bytes, then two reserved ones");

/* The slots of in, in SLOT_AT's order. */
static void get_slots(const GsInst *in, uint64_t v[GS_CODE_SLOTS]) {
  v[0] = in->t[0], v[1] = in->t[1], v[2] = in->t[2];
  for (int i = 0; i < 4; i++) v[3 + i] = (uint64_t)in->n[i];
  v[7] = in->r[0], v[8] = in->r[1], v[9] = in->r[2];
  for (int i = 4; i < GS_INST_NUM; i++) v[6 + i] = (uint64_t)in->n[i];
  v[16] = in->sub, v[17] = in->dtype, v[18] = in->flags;
  v[19] = isa_inst_sync(in);
}

/* Slot k of in set to v (its field's width of it). */
static inline void slot_store(GsInst *in, int k, uint64_t v) {
  unsigned char *p = (unsigned char *)in + SLOT_AT[k].off;
  if (SLOT_AT[k].width >= 6) { /* the sync slot's six: two zero bytes after them */
    memcpy(p, &v, 8);
  } else if (SLOT_AT[k].width == 4) {
    uint32_t x = (uint32_t)v;
    memcpy(p, &x, 4);
  } else {
    *p = (unsigned char)v;
  }
}

static void hist_init(GsCodeHist *h) {
  memset(h, 0, sizeof *h);
  for (int i = 0; i < GS_CODE_ROWS; i++) {
    h->row[i].op = -1;
    h->key.op[i] = UINT32_MAX;
  }
  memset(h->recent, -1, sizeof h->recent);
  memset(h->index, -1, sizeof h->index);
}

/* Row r is about to hold opcode op. A row that held another opcode starts as a copy of the
 * row op used last (a new stream of an opcode is most like its other streams), else zero. */
static GsCodeRow *hist_take(GsCodeHist *h, int r, uint8_t op) {
  GsCodeRow *w = &h->row[r];
  int8_t *recent = &h->recent[op < OP_ESCAPE ? op : OP_ESCAPE];
  if (w->op != op) {
    if (*recent >= 0) *w = h->row[*recent];
    else memset(w, 0, sizeof *w); /* inst all zero too, as last[] */
    w->op = op;
  }
  *recent = (int8_t)r;
  return w;
}

/* The key's sub: in's sub, and whether it carries a signal (bit 8) and a second one (bit 9).
 * A unit's instructions over the same regions that signal and that do not (the last step of
 * a tile tells its input's producer and its output's consumer, the others tell no one) are
 * then two streams, each predicted, where one row had the sync slot's residual both ways at
 * every tile, up to seven bytes with signal2's bits 32-47 (docs/speed.md, "Scheduling"). The
 * waits are left out: with them too, MobileNet-v2 and ViT-B/16 graphturbo held more bytes. */
static inline uint32_t key_sub(const GsInst *in) {
  return (uint32_t)in->sub | (uint32_t)(in->signal != 0) << 8 | (uint32_t)(in->signal2 != 0) << 9;
}

/* Whether row r's key holds in's opcode, regions and sub. (All five compared, without a branch
 * between them: which one differs follows the data, and the chain mispredicted.) */
static inline __attribute__((always_inline)) int key_matches(const GsCodeKeys *k, int r,
                                                             const GsInst *in) {
  return (k->op[r] == in->op) & (k->r1[r] == in->r[1]) & (k->r0[r] == in->r[0]) &
         (k->sub[r] == key_sub(in)) & (k->r2[r] == in->r[2]);
}

/* The slot of index[] for in's opcode, regions and sub. */
static unsigned key_hash(const GsInst *in) {
  uint32_t x = in->op ^ key_sub(in) << 8 ^ in->r[0] * 0x9e3779b1u ^ in->r[1] * 0x85ebca6bu ^
               in->r[2] * 0xc2b2ae35u;
  return (x ^ x >> 15 ^ x >> 26) & (GS_CODE_INDEX - 1);
}

/* Half the rows' keys of a field (8 rows) as one vector (GCC's vector extension: one AVX2
 * register, or two SSE2 ones); a comparison's lanes are all ones or zero. (Passed by address:
 * as an argument or a result it would take the ABI of AVX, which the baseline has not.) */
typedef uint32_t KeyVec __attribute__((vector_size(32)));
enum { KEY_LANES = 8 };
_Static_assert(GS_CODE_ROWS == 2 * KEY_LANES, "the scan takes the rows in two halves");
/* v with lane i taken from lane i ^ d (d = 4, 2, 1: every lane then holds all of them) */
#define key_fold(v, d) \
  __builtin_shufflevector(v, v, 0 ^ d, 1 ^ d, 2 ^ d, 3 ^ d, 4 ^ d, 5 ^ d, 6 ^ d, 7 ^ d)
/* The rows whose lane is set in m[0] (rows 0-7) or m[1] (rows 8-15), as a mask (bit i: row i). */
static inline uint32_t key_rows(const KeyVec m[2]) {
  const KeyVec bit = {1u << 0, 1u << 1, 1u << 2, 1u << 3, 1u << 4, 1u << 5, 1u << 6, 1u << 7};
  KeyVec v = (m[0] & bit) | (m[1] & (bit << 8));
  v |= key_fold(v, 4);
  v |= key_fold(v, 2);
  v |= key_fold(v, 1);
  return v[0];
}
/* Half h (rows 8h to 8h + 7) of a field of the rows' keys */
#define key_half(v, field, h) memcpy(&(v), (field) + (h) * KEY_LANES, sizeof(v))
/* The rows that have in's opcode, r1, r0 and sub, as a mask; into *same_r2 those of them that
 * have in's r2 too. */
static inline uint32_t key_same(const GsCodeKeys *k, const GsInst *in, uint32_t *same_r2) {
  KeyVec m[2], op, r0, r1, sub, r2;
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++) {
    key_half(op, k->op, h), key_half(r0, k->r0, h), key_half(r1, k->r1, h);
    key_half(sub, k->sub, h);
    m[h] = (KeyVec)(op == (uint32_t)in->op) & (KeyVec)(r1 == in->r[1]) &
           (KeyVec)(r0 == in->r[0]) & (KeyVec)(sub == key_sub(in));
  }
  uint32_t rows = key_rows(m);
  if (!rows) return *same_r2 = 0;
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++) {
    key_half(r2, k->r2, h);
    m[h] &= (KeyVec)(r2 == in->r[2]);
  }
  *same_r2 = key_rows(m);
  return rows;
}

/* The scan of hist_choose, for a key index[] did not find: the row of the opcode that shares
 * r1, r0 and sub, one sharing r2 too first, then the most recent (a row's `used` is unique
 * once it has an opcode); when there is none, -1 and *lru the least recently used row (the
 * first on a tie: rows never used have 0). Each field of eight rows is compared at once, and
 * only the rows that match (seldom more than one) are looked at one by one: the scan row by
 * row was a third of the encoder's work on MobileNet-v2 graphturbo, where 28% of the encodes
 * start a new stream. */
GS_AVX2_CLONES
static int hist_scan(const GsCodeKeys *k, const GsInst *in, int *lru) {
  uint32_t rows2, rows = key_same(k, in, &rows2);
  if (rows2) rows = rows2;
  if (rows) {
    int best = __builtin_ctz(rows);
    for (rows &= rows - 1; rows; rows &= rows - 1) {
      int r = __builtin_ctz(rows);
      best = k->used[r] > k->used[best] ? r : best;
    }
    return best;
  }
  KeyVec used[2], at[2];
  key_half(used[0], k->used, 0), key_half(used[1], k->used, 1);
  KeyVec lt = (KeyVec)(used[1] < used[0]), least = (lt & used[1]) | (~lt & used[0]), s;
  s = key_fold(least, 4), lt = (KeyVec)(s < least), least = (lt & s) | (~lt & least);
  s = key_fold(least, 2), lt = (KeyVec)(s < least), least = (lt & s) | (~lt & least);
  s = key_fold(least, 1), lt = (KeyVec)(s < least), least = (lt & s) | (~lt & least);
  at[0] = (KeyVec)(used[0] == least), at[1] = (KeyVec)(used[1] == least);
  *lru = __builtin_ctz(key_rows(at));
  return -1;
}

/* The encoder's choice of row for in: the row of its opcode with the same source and
 * destination regions and sub (one sharing r2 too first, then the most recent); when there is
 * none, a new stream: an unused row, else the least recently used one. A DMA queue's loads
 * into a double buffer are two streams then, each with constant strides. */
static int hist_choose(GsCodeHist *h, const GsInst *in) {
  /* What the scan would pick when some row holds the same opcode, regions and sub: that row
   * scores highest and is the only one (a row is given a key only when no row holds it).
   * Tried in turn: the row chosen last, the row the opcode used last, the row index[] gave
   * the key last (a slot a colliding key took since only costs the scan). Since the waits and
   * signals ride on the movs, a DMA queue's loads of A, W and R take turns on one opcode, and
   * the index finds 99% of the rows the scan did (ResNet-50 and ViT-B/16 on stcp920). */
  GsCodeKeys *k = &h->key;
  int hit = h->mru;
  if (!key_matches(k, hit, in)) hit = h->recent[in->op < OP_ESCAPE ? in->op : OP_ESCAPE];
  if (hit < 0 || !key_matches(k, hit, in)) hit = h->index[key_hash(in)];
  if (hit >= 0 && key_matches(k, hit, in)) {
    k->used[hit] = ++h->clock;
    h->mru = (int8_t)hit;
    return hit;
  }
  int lru = 0, best = hist_scan(k, in, &lru);
  if (best < 0) best = lru;
  k->used[best] = ++h->clock; /* the row's values once in is encoded */
  k->op[best] = in->op;
  k->r0[best] = in->r[0], k->r1[best] = in->r[1], k->r2[best] = in->r[2];
  k->sub[best] = key_sub(in);
  h->index[key_hash(in)] = (int8_t)best;
  h->mru = (int8_t)best;
  return best;
}

/* Learning the value slot k had; returns `moving` (the row's, which the caller keeps in a
 * register until its loop ends) with slot k's bit updated. A slot whose stride and last
 * difference are zero and whose value is predicted stays as it is, so the decoder only visits
 * the slots in `moving` and the ones with a residual. Without branches: whether a slot's stride
 * changes follows the data. */
static inline uint32_t row_learn(GsCodeRow *w, int k, uint64_t v, uint32_t moving) {
  uint64_t d = v - w->last[k];
  uint64_t st = d == w->lastd[k] ? d : w->stride[k];
  w->stride[k] = st;
  w->lastd[k] = d;
  w->last[k] = v;
  return (moving & ~(1u << k)) | (uint32_t)((d | st) != 0) << k;
}

static unsigned char *put_leb(unsigned char *o, uint64_t v) {
  while (v >= 0x80) {
    *o++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *o++ = (unsigned char)v;
  return o;
}

/* A LEB128 number at s; with `end` (a file's bytes, which may be anything), NULL when it runs
 * past end or past 64 bits. Without it (records this program encoded), no test at all. */
static inline __attribute__((always_inline)) const unsigned char *
get_leb(const unsigned char *s, const unsigned char *end, uint64_t *v) {
  uint64_t x = 0;
  for (int sh = 0;; sh += 7) {
    if (end && (s == end || sh > 63 || (sh == 63 && (*s & 0x7e)))) return NULL;
    unsigned char c = *s++;
    x |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) break;
  }
  *v = x;
  return s;
}

/* The encoder's row w learns every slot's value v[k] at once, as row_learn learns one, four
 * slots to a vector of GCC's vector extension and without a branch; into res[k] each slot's
 * residual v[k] − (last + stride). Returns the mask of the non-zero residuals, and sets
 * w->moving. A still slot (its last is v[k], its stride and last difference zero) learns
 * nothing new, so learning all 20 leaves the row as visiting only the moving and the changed
 * ones did, each visit a branch on the data and about 25 instructions, after 20 compares to
 * find the changed slots (MobileNet-v2 graphturbo on stcp920: 2.4% of lower_run). The decoder
 * keeps its visits (row_learn): it knows which slots to visit from the record, and learning all
 * 20 there cost more than it saved (docs/speed.md, "Scheduling"). On x86-64 a second version for
 * AVX2 is picked at load time where the CPU has it (the baseline, SSE2, has no 64-bit compare). */
typedef uint64_t SlotVec __attribute__((vector_size(32)));
_Static_assert(GS_CODE_SLOTS % 4 == 0, "the slots learn four at a time");
GS_AVX2_CLONES
static uint32_t row_encode(GsCodeRow *w, const uint64_t *v, uint64_t *res) {
  SlotVec rbits = {0, 0, 0, 0}, mbits = {0, 0, 0, 0};
#pragma GCC unroll 5
  for (int j = 0; j < GS_CODE_SLOTS / 4; j++) {
    SlotVec a, r, last, stride, lastd, bit = {1u << 4 * j, 2u << 4 * j, 4u << 4 * j, 8u << 4 * j};
    memcpy(&last, w->last + 4 * j, sizeof last);
    memcpy(&stride, w->stride + 4 * j, sizeof stride);
    memcpy(&lastd, w->lastd + 4 * j, sizeof lastd);
    memcpy(&a, v + 4 * j, sizeof a);
    r = a - (last + stride);
    memcpy(res + 4 * j, &r, sizeof r);
    SlotVec d = a - last, same = (SlotVec)(d == lastd), st = (same & d) | (~same & stride);
    memcpy(w->stride + 4 * j, &st, sizeof st);
    memcpy(w->lastd + 4 * j, &d, sizeof d);
    memcpy(w->last + 4 * j, &a, sizeof a);
    rbits |= (SlotVec)(r != 0) & bit;
    mbits |= (SlotVec)((d | st) != 0) & bit;
  }
  w->moving = (uint32_t)(mbits[0] | mbits[1] | mbits[2] | mbits[3]);
  return (uint32_t)(rbits[0] | rbits[1] | rbits[2] | rbits[3]);
}

/* One record for in, at o (room for MAX_RECORD bytes); returns its end. */
static unsigned char *encode(GsCodeHist *h, const GsInst *in, unsigned char *o) {
  int r = hist_choose(h, in);
  GsCodeRow *w = hist_take(h, r, in->op);
  uint64_t v[GS_CODE_SLOTS], res[GS_CODE_SLOTS];
  get_slots(in, v);
  uint32_t mask = row_encode(w, v, res);
  int esc = in->op >= OP_ESCAPE;
  *o++ = (unsigned char)((esc ? OP_ESCAPE : in->op) | r << 4);
  if (esc) *o++ = in->op;
  o = put_leb(o, mask);
  for (; mask; mask &= mask - 1) {
    int64_t x = (int64_t)res[__builtin_ctz(mask)];
    o = put_leb(o, ((uint64_t)x << 1) ^ (uint64_t)(x >> 63));  /* zigzag */
  }
  return o;
}

/* Decodes the record at s into its row's instruction, which *in then points to (no copy: the
 * fields were just written one by one, and copying them in 16-byte pieces stalled on every
 * piece, half of the decoder's time). Returns the record's end. With `end` (a file's records,
 * prog_code_import) every byte is checked first: NULL when the record runs past end, a number
 * is longer than 64 bits, the mask names a slot that does not exist or a value does not fit
 * its field. Without it (the decoder of records this program encoded) the tests compile away. */
static inline __attribute__((always_inline)) const unsigned char *
decode_record(GsCodeHist *h, const unsigned char *s, const unsigned char *end, const GsInst **in) {
  if (end && (s == end || ((*s & 15) == OP_ESCAPE && end - s < 2))) return NULL;
  uint8_t op = *s & 15;
  int r = *s++ >> 4;
  if (op == OP_ESCAPE) op = *s++;
  uint64_t mask;
  s = get_leb(s, end, &mask);
  if (end && (!s || mask >> GS_CODE_SLOTS)) return NULL;
  GsCodeRow *w = hist_take(h, r, op);
  w->inst.op = op;
  uint32_t moving = w->moving;
  for (uint32_t visit = (uint32_t)mask | moving; visit; visit &= visit - 1) {
    int k = __builtin_ctz(visit);
    uint64_t v = w->last[k] + w->stride[k];
    if (mask >> k & 1) {
      uint64_t z;
      s = get_leb(s, end, &z);
      if (end && !s) return NULL;
      v += (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
    }
    if (end && SLOT_AT[k].width < 8 && v >> (8 * SLOT_AT[k].width)) return NULL;
    moving = row_learn(w, k, v, moving);
    slot_store(&w->inst, k, v);
  }
  w->moving = moving;
  *in = &w->inst;
  return s;
}

static const unsigned char *decode(GsCodeHist *h, const unsigned char *s, const GsInst **in) {
  return decode_record(h, s, NULL, in);
}

/* ---- the writer side ---- */

void prog_code_append(GsQueueCode *c, const GsInst *in) {
  GsCodeBlock *b = c->tail;
  if (!b || b->size - b->used < MAX_RECORD) {
    /* (an imported queue's one block has the file's size: prog_code_import) */
    uint32_t size = !b || b->size < BLOCK_MIN ? BLOCK_MIN : b->size < BLOCK_MAX ? 2 * b->size : BLOCK_MAX;
    GsCodeBlock *nb = malloc(sizeof *nb + size);
    if (!nb) die("out of memory");
    nb->next = NULL;
    nb->used = 0;
    nb->size = size;
    if (b) b->next = nb;
    else c->head = nb;
    c->tail = b = nb;
  }
  unsigned char *end = encode(&c->hist, in, b->b + b->used);
  /* a checker may read it meanwhile (prog_cursor_next_encoded) */
  __atomic_store_n(&b->used, (uint32_t)(end - b->b), __ATOMIC_RELAXED);
  __atomic_store_n(&c->nencoded, c->nencoded + 1, __ATOMIC_RELAXED);
}

int64_t prog_queue_encoded(const GsQueue *q) {
  return q->code ? __atomic_load_n(&q->code->nencoded, __ATOMIC_RELAXED) : 0;
}

/* A zeroed GsQueueCode, on its alignment (calloc gives 16 bytes). */
static GsQueueCode *code_new(void) {
  GsQueueCode *c = aligned_alloc(_Alignof(GsQueueCode), sizeof *c);
  if (!c) die("out of memory");
  memset(c, 0, sizeof *c);
  return c;
}

void prog_queue_code_begin(GsQueue *q) {
  if (q->code) return;
  q->code = code_new();
  hist_init(&q->code->hist);
}

GsInst *prog_emit(GsQueue *q) {
  if (!q->code) prog_queue_code_begin(q);
  GsQueueCode *c = q->code;
  if (c->staged) {
    if (q->run) prog_check_put(q->run, q, &c->stage); /* that thread encodes it */
    else prog_code_append(c, &c->stage);
  }
  static const GsInst zero; /* copied, not memset: the compiler's `rep stos` for 120 bytes
                             * took longer to start than the whole copy */
  c->stage = zero;
  c->staged = 1;
  q->ninsts++;
  return &c->stage;
}

void prog_queue_code_free(GsQueue *q) {
  GsQueueCode *c = q->code;
  if (!c) return;
  for (GsCodeBlock *b = c->head; b;) {
    GsCodeBlock *nx = b->next;
    free(b);
    b = nx;
  }
  free(c);
  q->code = NULL;
  q->ninsts = 0;
}

size_t prog_code_bytes(const GsProgram *p) {
  size_t n = prog_copy_bytes(p);
  for (int i = 0; i < p->nqueues; i++) {
    const GsQueueCode *c = p->queues[i].code;
    if (!c) continue;
    n += sizeof *c;
    for (const GsCodeBlock *b = c->head; b; b = b->next) n += sizeof *b + b->size;
  }
  return n;
}

/* ---- the reader side ---- */

void prog_cursor_init(GsCursor *c, const GsQueue *q) {
  memset(c, 0, sizeof *c);
  hist_init(&c->hist);
  c->q = q;
  c->blk = q->code ? q->code->head : NULL;
}

void prog_cursor_init_own(GsCursor *c, const GsQueue *q) {
  prog_cursor_init(c, q);
  c->own_only = 1;
}

void prog_cursor_release(GsCursor *c) {
  free(c->src);
  c->src = NULL;
}

/* The block holding record pos may still be appended to, so its `used` is read atomically: it
 * is at least what it was when the caller was told of the record, and a block another was
 * linked after is full. */
const GsInst *prog_cursor_next_encoded(GsCursor *c) {
  while (c->pos >= __atomic_load_n(&c->blk->used, __ATOMIC_RELAXED)) {
    c->blk = c->blk->next;
    c->pos = 0;
  }
  const unsigned char *s = decode(&c->hist, c->blk->b + c->pos, &c->at);
  c->pos = (uint32_t)(s - c->blk->b);
  c->i++;
  c->own++;
  return c->at;
}

const GsInst *prog_cursor_own_next(GsCursor *c) {
  const GsQueue *q = c->q;
  int64_t own = q->ninsts - q->ncopied;
  if (c->own >= own) return NULL;
  if (c->own == own - 1) { /* the staged instruction, not encoded yet */
    c->in = q->code->stage;
    c->at = &c->in;
    c->i++;
    c->own++;
    return c->at;
  }
  return prog_cursor_next_encoded(c);
}

/* The next instruction of a queue with copied runs (prog_copy.c): its own, or its run's
 * source's under the run's map, the source read by the cursor's own reader (c->src). */
static const GsInst *copy_next(GsCursor *c) {
  const GsQueue *q = c->q;
  if (c->i >= q->ninsts) return NULL;
  const GsQueueCopies *cp = q->copies;
  const GsCopyRun *r = c->run < cp->n ? &cp->run[c->run] : NULL;
  if (r && c->i >= r->at + r->n) r = ++c->run < cp->n ? &cp->run[c->run] : NULL; /* (n > 0) */
  if (!r || c->i < r->at) return prog_cursor_own_next(c);
  GsCursor *s = c->src;
  if (!s) {
    s = c->src = malloc(sizeof *s);
    if (!s) die("out of memory");
    prog_code_read_begin(s, r->src);
  }
  int64_t idx = r->from + (c->i - r->at);
  while (s->own < idx) (void)prog_cursor_next_encoded(s); /* another cluster's own ones */
  const GsInst *in;
  if (idx < r->src->nencoded) {
    in = prog_cursor_next_encoded(s);
  } else { /* the source's last, staged */
    in = &r->src->stage;
    s->own++, s->i++;
  }
  c->in = *in;
  prog_map_apply(r->map, &c->in);
  c->at = &c->in;
  c->i++;
  return c->at;
}

const GsInst *prog_cursor_next(GsCursor *c) {
  if (__builtin_expect(c->q->ncopied != 0, 0) && !c->own_only) return copy_next(c);
  return prog_cursor_own_next(c);
}

void prog_code_read_begin(GsCursor *s, const GsQueueCode *code) {
  memset(s, 0, sizeof *s);
  hist_init(&s->hist);
  s->blk = code->head;
}

/* After the emission: the code holds nencoded records and its staged instruction. */
const GsInst *prog_code_read(GsCursor *s, const GsQueueCode *code, int64_t idx) {
  int64_t last = code->nencoded; /* the staged one's index */
  gs_assert(code->staged && idx >= s->own && idx <= last);
  while (s->own < idx) (void)prog_cursor_next_encoded(s);
  if (idx < last) return prog_cursor_next_encoded(s);
  s->own++;
  s->i++;
  return &code->stage;
}

const GsInst *prog_queue_staged(const GsQueue *q) {
  return q->code && q->code->staged ? &q->code->stage : NULL;
}

GsInst *prog_queue_array(const GsQueue *q) {
  GsInst *a = malloc(((size_t)q->ninsts + 1) * sizeof *a);
  if (!a) die("out of memory");
  GsCursor c;
  prog_cursor_init(&c, q);
  const GsInst *in;
  for (size_t i = 0; (in = prog_cursor_next(&c)) != NULL; i++) a[i] = *in;
  prog_cursor_release(&c);
  return a;
}

/* ---- the file side (gtp.c, format versions 3-5: a queue's records as they are held here) ---- */

/* A queue with copied runs is written as the instructions they stand for: encoded again, on
 * a queue of its own, in order. */
static uint64_t export_expanded(const GsQueue *q, void (*put)(void *ctx, const void *b, size_t n),
                                void *ctx) {
  GsQueue whole;
  memset(&whole, 0, sizeof whole);
  GsCursor *cur = malloc(sizeof *cur);
  if (!cur) die("out of memory");
  prog_cursor_init(cur, q);
  for (const GsInst *in; (in = prog_cursor_next(cur)) != NULL;) *prog_emit(&whole) = *in;
  prog_cursor_release(cur);
  free(cur);
  uint64_t n = prog_code_export(&whole, put, ctx);
  prog_queue_code_free(&whole);
  return n;
}

uint64_t prog_code_export(const GsQueue *q, void (*put)(void *ctx, const void *b, size_t n),
                          void *ctx) {
  if (q->ncopied) return export_expanded(q, put, ctx);
  const GsQueueCode *c = q->code;
  if (!c || !c->staged) return 0;
  uint64_t n = 0;
  for (const GsCodeBlock *b = c->head; b; b = b->next) {
    if (put && b->used) put(ctx, b->b, b->used);
    n += b->used;
  }
  GsCodeHist *h = malloc(sizeof *h); /* the staged instruction, encoded on a copy */
  if (!h) die("out of memory");
  *h = c->hist;
  unsigned char rec[MAX_RECORD];
  size_t k = (size_t)(encode(h, &c->stage, rec) - rec);
  free(h);
  if (put) put(ctx, rec, k);
  return n + k;
}

/* The encoder's own fields of h, a decoder's state after the records it read (its rows hold
 * what the encoder's rows would, learned the same way): each row's key from the instruction it
 * holds, used[k] the clock of its last record, the index and the row chosen last from them. A
 * row choice is the encoder's alone (the decoder reads it), so any valid one keeps the records
 * appended after it decodable. */
static void hist_as_encoder(GsCodeHist *h, const uint32_t used[GS_CODE_ROWS], uint32_t clock) {
  memset(h->index, -1, sizeof h->index);
  h->mru = 0;
  h->clock = clock;
  for (int k = 0; k < GS_CODE_ROWS; k++) {
    const GsCodeRow *w = &h->row[k];
    h->key.op[k] = (uint32_t)w->op; /* (-1: UINT32_MAX, none) */
    h->key.r0[k] = w->inst.r[0], h->key.r1[k] = w->inst.r[1], h->key.r2[k] = w->inst.r[2];
    h->key.sub[k] = key_sub(&w->inst);
    h->key.used[k] = used[k];
    if (used[k] > h->key.used[h->mru]) h->mru = (int8_t)k;
  }
  int order[GS_CODE_ROWS]; /* the index as the rows were given their keys: least recent first */
  for (int k = 0; k < GS_CODE_ROWS; k++) {
    int j = k;
    for (; j > 0 && used[order[j - 1]] > used[k]; j--) order[j] = order[j - 1];
    order[j] = k;
  }
  for (int j = 0; j < GS_CODE_ROWS; j++)
    if (used[order[j]]) h->index[key_hash(&h->row[order[j]].inst)] = (int8_t)order[j];
}

/* The empty queue q takes the records [s, s + len) as they are, in one block of their size, and
 * h, the decoder's state after them (used[k]: the clock of row k's last record, clock: their
 * count), as its encoder's. */
static void code_keep(GsQueue *q, const unsigned char *s, size_t len, const GsCodeHist *h,
                      const uint32_t used[GS_CODE_ROWS], uint32_t clock) {
  GsQueueCode *c = code_new();
  GsCodeBlock *b = malloc(sizeof *b + len + 1);
  if (!b) die("out of memory");
  memcpy(b->b, s, len);
  b->next = NULL;
  b->used = b->size = (uint32_t)len;
  c->head = c->tail = b;
  c->hist = *h;
  hist_as_encoder(&c->hist, used, clock);
  c->nencoded = clock;
  q->code = c;
}

/* Importing into an empty queue keeps the file's records as they are: each is decoded to check
 * it, and then the bytes are copied, not encoded again (that was half of loading a program).
 * The last instruction is staged, as prog_emit leaves it. */
int prog_code_import(GsQueue *q, const unsigned char *s, size_t len, uint64_t n,
                     int (*accept)(void *ctx, const GsInst *in, uint64_t i), void *ctx,
                     uint64_t *bad) {
  GsCodeHist *h = malloc(sizeof *h);
  if (!h) die("out of memory");
  hist_init(h);
  const unsigned char *start = s, *end = s + len;
  int keep = q->ninsts == 0 && n > 0 && len <= UINT32_MAX; /* else encoded again, appended */
  gs_assert(q->ninsts > 0 || !q->code); /* an empty queue has no code */
  uint32_t used[GS_CODE_ROWS] = {0};
  int rc = 0;
  uint64_t i = 0;
  for (; i < n && rc == 0; i++) {
    if (keep && i == n - 1) /* the records before the staged one */
      code_keep(q, start, (size_t)(s - start), h, used, (uint32_t)i);
    const GsInst *in;
    if (s < end) used[*s >> 4] = (uint32_t)i + 1;
    s = decode_record(h, s, end, &in);
    if (!s) rc = -1;
    else if (!accept(ctx, in, i)) rc = -2;
    else if (!keep) *prog_emit(q) = *in;
    else if (i == n - 1) {
      q->code->stage = *in;
      q->code->staged = 1;
      q->ninsts = (int64_t)n;
    }
  }
  free(h);
  if (rc) {
    if (keep) prog_queue_code_free(q);
    *bad = i - 1;
    return rc;
  }
  *bad = n;
  return s == end ? 0 : -1;
}
