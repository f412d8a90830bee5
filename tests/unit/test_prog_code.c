/* test_prog_code.c — a queue's instructions held encoded (prog_code.c): what goes in through
 * prog_emit comes out of a cursor bit for bit (any field value, any opcode byte, any mix of
 * streams), the staged last instruction reads back and can still be edited, a regular
 * stream costs the two bytes the format promises (a header byte and an empty mask), and the
 * encoder picks the row its rule says (row_choice); an imported queue keeps the file's records
 * and goes on taking instructions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prog.h"

/* A deterministic pseudo-random value of (k, i) (splitmix64's finaliser), so instruction k
 * can be made again to compare. */
static uint64_t mix(int64_t k, int i) {
  uint64_t z = (uint64_t)k * 0x9e3779b97f4a7c15u + (uint64_t)i * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Instruction k of a stream-like test program: several interleaved "streams" with strides, and
 * every few instructions a field with an arbitrary 64-bit value or an out-of-range opcode. */
static GsInst make(int64_t k) {
  GsInst in;
  memset(&in, 0, sizeof in);
  int stream = (int)(k % 3);
  in.op = (uint8_t)(stream == 2 ? I_WAIT : I_MOV);
  in.r[0] = (uint32_t)(10 + stream + 2 * (k / 3 % 2)); /* a double buffer */
  in.r[1] = (uint32_t)(100 + stream);
  in.t[0] = (uint32_t)(1000 + k);
  in.n[0] = 4096;
  in.n[2] = k / 3 * 512;
  if (k % 17 == 0) in.n[(int)(mix(k, 0) % GS_INST_NUM)] = (int64_t)mix(k, 1);
  if (k % 23 == 0) in.op = (uint8_t)mix(k, 2);
  if (stream == 0) in.wait = 2, in.signal = 4, in.signal_flag = 1; /* a load's own wait and signal */
  if (k % 13 == 0) {
    in.wait = (uint8_t)mix(k, 8);
    in.signal = (uint8_t)mix(k, 9);
    in.signal_flag = (uint8_t)mix(k, 10);
    in.wait2 = (uint8_t)mix(k, 11);
    in.signal2 = (uint8_t)mix(k, 12);
    in.signal2_flag = (uint8_t)mix(k, 13);
  }
  if (k % 29 == 0) {
    in.sub = (uint8_t)mix(k, 3);
    in.dtype = (uint8_t)mix(k, 4);
    in.flags = (uint8_t)mix(k, 5);
    in.r[2] = (uint32_t)mix(k, 6);
    in.t[2] = (uint32_t)mix(k, 7);
  }
  return in;
}

static void test_round_trip(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  enum { N = 20000, NQ = 3 };
  for (int64_t k = 0; k < N; k++) /* queues filled in turn: each keeps its own state */
    *prog_emit(prog_queue(p, 0, 0, (int)(k % NQ))) = make(k);
  assert_int_equal(prog_ninsts(p), N);
  for (int q = 0; q < NQ; q++) {
    GsCursor c;
    prog_cursor_init(&c, &p->queues[q]);
    int64_t k = q, n = 0;
    for (const GsInst *in; (in = prog_cursor_next(&c)) != NULL; k += NQ, n++) {
      GsInst want = make(k);
      assert_memory_equal(in, &want, sizeof want);
    }
    assert_int_equal(n, (N - q + NQ - 1) / NQ);
    assert_null(prog_cursor_next(&c)); /* stays at the end */
  }
  prog_free(p);
}

/* prog_code_export's bytes, collected, however many (Bytes below holds a few records). */
typedef struct {
  unsigned char *b;
  size_t n, cap;
} Grown;
static void put_grown(void *ctx, const void *b, size_t n) {
  Grown *o = ctx;
  if (o->n + n > o->cap) {
    o->cap = 2 * (o->n + n);
    o->b = realloc(o->b, o->cap);
    assert_non_null(o->b);
  }
  memcpy(o->b + o->n, b, n);
  o->n += n;
}
static int accept_all(void *ctx, const GsInst *in, uint64_t i) {
  (void)ctx, (void)in, (void)i;
  return 1;
}

/* A queue imported from records keeps them byte for byte (it is not encoded again), reads
 * back as emitted, and takes more instructions after them: its encoder goes on from the
 * imported state (hist_as_encoder), for a queue of one instruction (no bytes before the staged
 * one) as for a long one. Exported again, it gives the records of the queue emitted in one go
 * up to the import, then valid records of the rest. */
static void test_import_keeps_records(void **state) {
  (void)state;
  static const int64_t sizes[] = {1, 2, 3, 50, 20000};
  for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
    int64_t n = sizes[t], more = 3000;
    GsProgram *p = prog_new();
    GsQueue *src = prog_queue(p, 0, 0, 0);
    for (int64_t k = 0; k < n; k++) *prog_emit(src) = make(k);
    Grown rec = {0};
    uint64_t len = prog_code_export(src, put_grown, &rec);
    assert_int_equal(len, rec.n);
    GsQueue *dst = prog_queue(p, 0, 0, 1);
    uint64_t bad = 0;
    assert_int_equal(prog_code_import(dst, rec.b, rec.n, (uint64_t)n, accept_all, NULL, &bad), 0);
    assert_int_equal(dst->ninsts, n);
    Grown again = {0};
    prog_code_export(dst, put_grown, &again);
    assert_int_equal(again.n, rec.n);
    assert_memory_equal(again.b, rec.b, rec.n); /* the same records */
    for (int64_t k = n; k < n + more; k++) *prog_emit(dst) = make(k);
    GsCursor c;
    prog_cursor_init(&c, dst);
    int64_t k = 0;
    for (const GsInst *in; (in = prog_cursor_next(&c)) != NULL; k++) {
      GsInst want = make(k);
      assert_memory_equal(in, &want, sizeof want);
    }
    assert_int_equal(k, n + more);
    Grown all = {0}; /* the whole queue's records import again, instruction for instruction */
    prog_code_export(dst, put_grown, &all);
    GsQueue *third = prog_queue(p, 0, 0, 2);
    assert_int_equal(prog_code_import(third, all.b, all.n, (uint64_t)(n + more), accept_all, NULL, &bad), 0);
    prog_cursor_init(&c, third);
    k = 0;
    for (const GsInst *in; (in = prog_cursor_next(&c)) != NULL; k++) {
      GsInst want = make(k);
      assert_memory_equal(in, &want, sizeof want);
    }
    assert_int_equal(k, n + more);
    free(rec.b), free(again.b), free(all.b);
    prog_free(p);
  }
}

/* A malformed record leaves the importing queue empty, however far the import got. */
static void test_import_bad_record(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  GsQueue *src = prog_queue(p, 0, 0, 0);
  for (int64_t k = 0; k < 100; k++) *prog_emit(src) = make(k);
  Grown rec = {0};
  prog_code_export(src, put_grown, &rec);
  GsQueue *dst = prog_queue(p, 0, 0, 1);
  uint64_t bad = 0;
  assert_int_equal(prog_code_import(dst, rec.b, rec.n - 1, 100, accept_all, NULL, &bad), -1);
  assert_int_equal(bad, 99); /* the last record runs past the end */
  assert_int_equal(dst->ninsts, 0);
  assert_null(dst->code);
  assert_int_equal(prog_code_import(dst, rec.b, rec.n, 99, accept_all, NULL, &bad), -1);
  assert_int_equal(bad, 99); /* bytes are left over */
  free(rec.b);
  prog_free(p);
}

static void test_staged_and_empty(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  GsQueue *q = prog_queue(p, 0, 0, 0);
  GsCursor c;
  prog_cursor_init(&c, q);
  assert_null(prog_cursor_next(&c)); /* an empty queue */
  GsInst *in = prog_emit(q);
  in->op = I_GEMM;
  inst_gemm_set_m(in, 7);
  prog_cursor_init(&c, q);
  const GsInst *got = prog_cursor_next(&c);
  assert_non_null(got);
  assert_int_equal(inst_gemm_m(got), 7);
  inst_gemm_set_m(in, 9); /* the last instruction is still editable */
  GsInst *a = prog_queue_array(q);
  assert_int_equal(inst_gemm_m(&a[0]), 9);
  free(a);
  prog_queue_code_free(q);
  assert_int_equal(q->ninsts, 0);
  prog_free(p);
}

/* What n records of `streams` streams with constant strides may hold: after each stream's
 * first two records (which teach the strides, at most 64 bytes each) every one is a header byte
 * and a one-byte empty mask, 2 bytes. Allocated: blocks of 1, 2, ..., 64 KiB, then 64 KiB each,
 * so at most one 64 KiB block beyond the bytes used, each block leaving at most one record's
 * room (< 256 bytes) unused, plus headers and the encoder's state. */
static size_t two_bytes_bound(size_t n, size_t streams) {
  size_t used = 2 * n + 2 * streams * 64;
  size_t blocks = used / (64 * 1024 - 256) + 8; /* the 7 small ones and the rest */
  return used + 64 * 1024 + blocks * (256 + 32) + sizeof(GsCodeHist) + sizeof(GsInst) + 64;
}

/* 200000 loads with constant strides: 2 bytes each after the first two (two_bytes_bound). */
static void test_regular_stream_costs_two_bytes(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  GsQueue *q = prog_queue(p, 0, 0, 0);
  enum { N = 200000 };
  for (int64_t k = 0; k < N; k++) {
    GsInst *in = prog_emit(q);
    in->op = I_MOV;
    in->r[0] = 3;
    in->r[1] = 4;
    in->t[0] = (uint32_t)(50 + 2 * k);
    in->t[1] = 7;
    inst_mov_set_bytes(in, 2048);
    inst_mov_set_src_off(in, 2048 * k);
  }
  assert_true(prog_code_bytes(p) <= two_bytes_bound(N, 1));
  assert_true(prog_code_bytes(p) >= 2 * N); /* and it is not counting nothing */
  prog_free(p);
}

/* Twelve streams of one opcode in turn (loads of A, W and R into a double buffer, under two
 * subs), each with constant strides: neither the row chosen last nor the opcode's last row is
 * the stream's, so the encoder finds it through its index of keys or its scan (the same row:
 * prog_code.c hist_choose). After each stream's first two records every one is 2 bytes. */
static void test_interleaved_streams_cost_two_bytes(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  GsQueue *q = prog_queue(p, 0, 0, 0);
  enum { S = 12, N = 240000 };
  for (int64_t k = 0; k < N; k++) {
    int s = (int)(k % S);
    int64_t j = k / S;
    GsInst *in = prog_emit(q);
    in->op = I_MOV;
    in->sub = (uint8_t)(s / 6);
    in->r[0] = (uint32_t)(20 + s % 6);  /* A, W, R in slots 0 and 1 */
    in->r[1] = (uint32_t)(3 + s % 3);   /* their DDR tensors */
    in->t[0] = (uint32_t)(1000000 * s + j);
    in->t[1] = (uint32_t)(7 + s);
    inst_mov_set_bytes(in, 512 * (s + 1));
    inst_mov_set_src_off(in, 512 * (s + 1) * j);
  }
  size_t bound = two_bytes_bound(N, S);
  assert_true(prog_code_bytes(p) <= bound);
  assert_true(bound < 3 * (size_t)N); /* records of 3 bytes would not fit in it */
  prog_free(p);
}

/* A unit's steps over the same regions, every other one signalling its input's producer and
 * its output's consumer (signal and signal2), the others no one: two streams by the encoder's
 * key (prog_code.c key_sub), each with constant strides (t0, the output tile, +1 a pair; t1,
 * the input tile, +2 a stream), so after each stream's first two records every one is 2 bytes.
 * In one row the sync slot would take a residual both ways at every step (6 bytes and more:
 * signal2 is bits 32-39) and t0's stride would alternate 0 and 1. */
static void test_signalling_steps_cost_two_bytes(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  GsQueue *q = prog_queue(p, 0, 0, 2);
  enum { S = 2, N = 200000 };
  for (int64_t k = 0; k < N; k++) {
    GsInst *in = prog_emit(q);
    in->op = I_GEMM;
    in->r[0] = 5, in->r[1] = 6, in->r[2] = 7;
    in->t[0] = (uint32_t)(100 + k / 2);
    in->t[1] = (uint32_t)(1000 + k);
    in->t[2] = 9;
    if (k % 2) in->signal = 1 + Q_DMA_IN, in->signal2 = 1 + Q_DMA_OUT, in->signal2_flag = 2;
  }
  size_t bound = two_bytes_bound(N, S);
  assert_true(prog_code_bytes(p) <= bound);
  assert_true(bound < 3 * (size_t)N); /* records of 3 bytes would not fit in it */
  prog_free(p);
}

/* The records' bytes, gathered by prog_code_export. */
typedef struct {
  unsigned char b[4096];
  size_t n;
} Bytes;
static void put_bytes(void *ctx, const void *b, size_t n) {
  Bytes *o = ctx;
  assert_true(o->n + n <= sizeof o->b);
  memcpy(o->b + o->n, b, n);
  o->n += n;
}

/* The row each record names (its header byte's high nibble), skipping its escape byte, mask and
 * residuals (a LEB128 each: the format of prog_code.c's header comment). */
static int rows_of(const Bytes *o, int *rows, int max) {
  size_t i = 0;
  int n = 0;
  while (i < o->n) {
    assert_true(n < max);
    unsigned char h = o->b[i++];
    rows[n++] = h >> 4;
    if ((h & 15) == 15) i++;
    uint64_t mask = 0;
    for (int sh = 0;; sh += 7) {
      unsigned char c = o->b[i++];
      mask |= (uint64_t)(c & 0x7f) << sh;
      if (!(c & 0x80)) break;
    }
    for (int k = __builtin_popcountll(mask); k > 0; k--)
      while (o->b[i++] & 0x80) {}
  }
  return n;
}

/* The encoder's choice of row (prog_code.c hist_choose), from the rule and not from a run:
 * a record goes to the row holding its opcode, r0, r1 and sub (r2 may differ); with none, to
 * the least recently chosen row, the first of them on a tie (rows never chosen count as
 * oldest). Sixteen new streams take rows 0..15; a seventeenth evicts row 0; r0 = 101 with
 * another r2 stays in row 1, r0 = 102 as it was in row 2; a new stream then evicts row 3 (the
 * oldest left: rows 0-2 were just chosen); a wait naming row 5's r0 is not row 5's stream (its
 * opcode differs) and takes the oldest, row 4. */
static void test_row_choice(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  GsQueue *q = prog_queue(p, 0, 0, 0);
  struct { uint8_t op; uint32_t r0, r2; } seq[21];
  int n = 0;
  for (int k = 0; k < 16; k++) seq[n].op = I_MOV, seq[n].r0 = (uint32_t)(100 + k), seq[n++].r2 = 0;
  seq[n].op = I_MOV, seq[n].r0 = 200, seq[n++].r2 = 0;
  seq[n].op = I_MOV, seq[n].r0 = 101, seq[n++].r2 = 9;
  seq[n].op = I_MOV, seq[n].r0 = 102, seq[n++].r2 = 0;
  seq[n].op = I_MOV, seq[n].r0 = 300, seq[n++].r2 = 0;
  seq[n].op = I_WAIT, seq[n].r0 = 105, seq[n++].r2 = 0;
  for (int i = 0; i < n; i++) {
    GsInst *in = prog_emit(q);
    in->op = seq[i].op;
    in->r[0] = seq[i].r0;
    in->r[1] = 1;
    in->r[2] = seq[i].r2;
    in->t[0] = (uint32_t)(1 + i);
  }
  Bytes o = {.n = 0};
  prog_code_export(q, put_bytes, &o);
  int rows[32], want[21];
  for (int k = 0; k < 16; k++) want[k] = k;
  want[16] = 0, want[17] = 1, want[18] = 2, want[19] = 3, want[20] = 4;
  assert_int_equal(rows_of(&o, rows, 32), n);
  for (int i = 0; i < n; i++) assert_int_equal(rows[i], want[i]);
  prog_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_staged_and_empty),
      cmocka_unit_test(test_import_keeps_records),
      cmocka_unit_test(test_import_bad_record),
      cmocka_unit_test(test_regular_stream_costs_two_bytes),
      cmocka_unit_test(test_interleaved_streams_cost_two_bytes),
      cmocka_unit_test(test_signalling_steps_cost_two_bytes),
      cmocka_unit_test(test_row_choice),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
