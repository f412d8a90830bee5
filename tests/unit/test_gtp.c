/* test_gtp.c — the binary .gtp format: write/read round trip (field by field), the documented
 * byte layout (the header, a queue entry and one instruction's record checked on the raw bytes
 * against the record built here by the rules docs/isa.md states), files of versions 1 to 4
 * (built here from their documented layout: gtsim writes version 5 only), every rejection with
 * its `file: error:` message, and a deterministic fuzz of random mutations, both of the raw
 * file and of the inflated body (re-deflated, so the mutations get past zlib's checksum).
 * A fuzzed file must be read or rejected with a message: never a crash, never a hang. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "diag_testlib.h"
#include "isa_testlib.h"

static GsArch tiny;
static char dir[64], path[128];

static int setup(void **state) {
  (void)state;
  tiny_arch(&tiny, 0);
  snprintf(dir, sizeof dir, "/tmp/gtsim-test-gtp.XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(path, sizeof path, "%s/p.gtp", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(path);
  rmdir(dir);
  return 0;
}

static unsigned char *file_bytes(size_t *len) {
  unsigned char *b = (unsigned char *)util_read_file(path, len);
  assert_non_null(b);
  return b;
}

static void put_bytes(const void *b, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, len, f), len);
  fclose(f);
}

/* Read path; on failure *msg holds the diagnostics (caller frees). */
static GsProgram *read_gtp(char **msg) {
  DiagText dt;
  GsProgram *p = gtp_read(path, diag_text_begin(&dt));
  char *buf = diag_text_end(&dt);
  if (p) assert_int_equal(dt.d.nerrors, 0);
  else assert_true(dt.d.nerrors > 0 && dt.len > 0); /* a failure always says why */
  if (msg) *msg = buf;
  else free(buf);
  return p;
}

static void expect_reject(const char *what) {
  char *msg;
  GsProgram *p = read_gtp(&msg);
  char want[256];
  snprintf(want, sizeof want, "%s: error: %s", path, what);
  if (p || !strstr(msg, want)) fail_msg("expected \"%s\", got \"%s\"", want, msg);
  free(msg);
}

static uint64_t le(const unsigned char *b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
  return v;
}
static void set_le(unsigned char *b, int n, uint64_t v) {
  for (int i = 0; i < n; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static void test_roundtrip(void **state) {
  (void)state;
  GsProgram *p = every_opcode_program();
  assert_int_equal(gtp_write(path, p), 0);
  GsProgram *q = read_gtp(NULL);
  assert_non_null(q);
  assert_same_program(p, q);
  prog_free(q);
  /* the empty program, too */
  GsProgram *e = prog_new();
  assert_int_equal(gtp_write(path, e), 0);
  q = read_gtp(NULL);
  assert_non_null(q);
  assert_same_program(e, q);
  prog_free(q);
  prog_free(e);
  /* prog_save/prog_load pick the format by extension */
  char p2[160];
  snprintf(p2, sizeof p2, "%s/q.gtasm", dir);
  assert_int_equal(prog_save(p2, &tiny, p), 0);
  GsDiag d;
  diag_init(&d);
  q = prog_load(p2, &tiny, &d);
  assert_non_null(q);
  assert_same_program(p, q);
  prog_free(q);
  unlink(p2);
  prog_free(p);
}

/* A large program (100k instructions) goes through the streaming codec intact. */
static void test_large(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  for (int i = 0; i < 100000; i++) {
    GsInst *in = prog_emit(prog_queue(p, i % 2, i % 3, 2 + i % 3));
    in->op = (uint8_t)(i % I_COUNT);
    isa_inst_set_field(in, OPF_NUM, i % GS_INST_NUM, (int64_t)i * 7919);
    in->r[i % 3] = (uint32_t)i;
  }
  prog_reserve_ids(p, 100000, 3);
  assert_int_equal(gtp_write(path, p), 0);
  GsProgram *q = read_gtp(NULL);
  assert_non_null(q);
  assert_same_program(p, q);
  prog_free(q);
  prog_free(p);
}

/* Records by the rules of docs/isa.md (".gtp", versions 3-5), written here without the encoder. */
static size_t put_leb(unsigned char *o, uint64_t v) {
  size_t n = 0;
  for (; v >= 0x80; v >>= 7) o[n++] = (unsigned char)(v | 0x80);
  o[n++] = (unsigned char)v;
  return n;
}
static uint64_t zigzag(int64_t x) { return (uint64_t)x << 1 ^ (uint64_t)(x >> 63); }

/* The record of test_layout's instruction, the first of its queue: row 0 (every row is unused
 * and equally old), every prediction 0, so every slot is in the mask and its residual is its
 * value. Slot order: t0 t1 t2, n0..n3, r0 r1 r2, n4..n9, sub, dtype, flags, sync. */
static size_t layout_record(unsigned char *o) {
  size_t n = 0;
  o[n++] = I_MOV; /* opcode | row 0 << 4 */
  n += put_leb(o + n, 0xfffff);
  for (int i = 0; i < 3; i++) n += put_leb(o + n, zigzag(0x01020304 + i));
  for (int i = 0; i < 4; i++) n += put_leb(o + n, zigzag(-1 - i));
  for (int i = 0; i < 3; i++) n += put_leb(o + n, zigzag(0x11111111ll * (i + 1)));
  for (int i = 4; i < GS_INST_NUM; i++) n += put_leb(o + n, zigzag(-1 - i));
  n += put_leb(o + n, zigzag(0xa1));
  n += put_leb(o + n, zigzag(0xa2));
  n += put_leb(o + n, zigzag(0xa3));
  /* wait, signal, signal_flag, wait2, signal2, signal2_flag */
  n += put_leb(o + n,
               zigzag(0xb1 | 0xb2 << 8 | 0xb3 << 16 | 0xb4ll << 24 | 0xc1ll << 32 | 0xc2ll << 40));
  return n;
}

/* The header, the queue entry and the record at the offsets docs/isa.md draws. */
static void test_layout(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  prog_reserve_ids(p, 5, 9);
  GsQueue *q = prog_queue(p, 1, -1, 1);
  GsInst *in = prog_emit(q);
  in->op = I_MOV;
  in->sub = 0xa1;
  in->dtype = 0xa2;
  in->flags = 0xa3;
  for (int i = 0; i < 3; i++) in->r[i] = 0x11111111u * (uint32_t)(i + 1);
  for (int i = 0; i < 3; i++) in->t[i] = 0x01020304u + (uint32_t)i;
  for (int i = 0; i < GS_INST_NUM; i++) isa_inst_set_field(in, OPF_NUM, i, -1 - i);
  in->wait = 0xb1;
  in->signal = 0xb2;
  in->signal_flag = 0xb3;
  in->wait2 = 0xb4;
  in->signal2 = 0xc1;
  in->signal2_flag = 0xc2;
  assert_int_equal(gtp_write(path, p), 0);
  size_t len;
  unsigned char *f = file_bytes(&len);
  assert_memory_equal(f, "GTP1", 4);
  assert_int_equal(le(f + 4, 2), 5);   /* version */
  assert_int_equal(le(f + 6, 2), 48);  /* header bytes */
  assert_int_equal(le(f + 8, 4), 1);   /* nqueues */
  assert_int_equal(le(f + 12, 4), 5);  /* nregions */
  assert_int_equal(le(f + 16, 4), 9);  /* ntiles */
  assert_int_equal(le(f + 24, 8), 1);  /* ninsts */
  unsigned char rec[64];
  size_t rlen = layout_record(rec);
  /* body: 24 (queue) + the record + 4 per region and tile name slot (no names) */
  uint64_t body = 24 + rlen + 4 * 5 + 4 * 9;
  assert_int_equal(le(f + 32, 8), body);
  assert_int_equal(le(f + 40, 8), len - 48);
  unsigned char *b = malloc(body);
  uLongf blen = (uLongf)body;
  assert_int_equal(uncompress(b, &blen, f + 48, (uLong)(len - 48)), Z_OK);
  assert_int_equal(blen, body);
  /* queue entry: cluster 1, core -1, index 1, 1 instruction, rlen bytes of records */
  assert_int_equal(le(b, 4), 1);
  assert_int_equal(le(b + 4, 4), 0xffffffffu);
  assert_int_equal(le(b + 8, 4), 1);
  assert_int_equal(le(b + 12, 4), 1);
  assert_int_equal(le(b + 16, 8), rlen);
  assert_memory_equal(b + 24, rec, rlen);
  free(b);
  free(f);
  prog_free(p);
}

/* ---- rejections of the raw file ---- */

/* A file of p in the layout of version 1 or 2 (docs/isa.md): queue entries of 16 bytes,
 * instructions as 112-byte words. */
static void write_old(const GsProgram *p, int version) {
  size_t n = (size_t)prog_ninsts(p), cap = 16 * (size_t)p->nqueues + 112 * n + 4;
  for (int t = 0; t < 2; t++)
    for (uint32_t i = 0; i < (t ? p->ntiles : p->nregions); i++)
      cap += 4 + (prog_name(p, t, i) ? strlen(prog_name(p, t, i)) : 0);
  unsigned char *b = calloc(1, cap), *o = b;
  for (int i = 0; i < p->nqueues; i++, o += 16) {
    const GsQueue *q = &p->queues[i];
    set_le(o, 4, (uint32_t)q->cluster);
    set_le(o + 4, 4, (uint32_t)q->core);
    set_le(o + 8, 4, (uint32_t)q->index);
    set_le(o + 12, 4, (uint64_t)q->ninsts);
  }
  for (int i = 0; i < p->nqueues; i++) {
    GsCursor c;
    prog_cursor_init(&c, &p->queues[i]);
    for (const GsInst *in; (in = prog_cursor_next(&c)) != NULL; o += 112) {
      o[0] = in->op, o[1] = in->sub, o[2] = in->dtype, o[3] = in->flags;
      assert_true(version == 2 || (!in->wait && !in->signal && !in->signal_flag));
      o[4] = in->wait, o[5] = in->signal, o[6] = in->signal_flag;
      for (int k = 0; k < 3; k++) set_le(o + 8 + 4 * k, 4, in->r[k]);
      for (int k = 0; k < 3; k++) set_le(o + 20 + 4 * k, 4, in->t[k]);
      for (int k = 0; k < GS_INST_NUM; k++) set_le(o + 32 + 8 * k, 8, (uint64_t)in->n[k]);
    }
  }
  for (int t = 0; t < 2; t++)
    for (uint32_t i = 0; i < (t ? p->ntiles : p->nregions); i++) {
      const char *nm = prog_name(p, t, i);
      set_le(o, 4, nm ? strlen(nm) + 1 : 0);
      o += 4;
      if (nm) memcpy(o, nm, strlen(nm)), o += strlen(nm);
    }
  size_t blen = (size_t)(o - b);
  uLongf zl = compressBound((uLong)blen);
  unsigned char *f = calloc(1, 48 + zl);
  assert_int_equal(compress2(f + 48, &zl, b, (uLong)blen, 6), Z_OK);
  memcpy(f, "GTP1", 4);
  set_le(f + 4, 2, (uint64_t)version);
  set_le(f + 6, 2, 48);
  set_le(f + 8, 4, (uint64_t)p->nqueues);
  set_le(f + 12, 4, p->nregions);
  set_le(f + 16, 4, p->ntiles);
  set_le(f + 24, 8, n);
  set_le(f + 32, 8, blen);
  set_le(f + 40, 8, zl);
  put_bytes(f, 48 + zl);
  free(f);
  free(b);
}

/* every_opcode_program's file in format `version` (3: gtp_write's). */
static unsigned char *valid_file_v(int version, size_t *len) {
  GsProgram *p = every_opcode_program();
  if (version >= 3) assert_int_equal(gtp_write(path, p), 0);
  else write_old(p, version);
  prog_free(p);
  return file_bytes(len);
}
static unsigned char *valid_file(size_t *len) { return valid_file_v(GTP_VERSION, len); }

static void test_reject_header(void **state) {
  (void)state;
  size_t len;
  unsigned char *f = valid_file(&len), *g = malloc(len + 1);

  memcpy(g, f, len);
  g[0] = 'X';
  put_bytes(g, len);
  expect_reject("not a .gtp file (bad magic");
  put_bytes(g, 0);
  expect_reject("not a .gtp file (bad magic");

  memcpy(g, f, len);
  set_le(g + 4, 2, 6);
  put_bytes(g, len);
  expect_reject("unsupported .gtp version 6 (this gtsim reads versions 1 to 5)");
  set_le(g + 4, 2, 0);
  put_bytes(g, len);
  expect_reject("unsupported .gtp version 0 (this gtsim reads versions 1 to 5)");

  put_bytes(f, 20);
  expect_reject("truncated header (20 bytes, need 48)");

  put_bytes(f, len - 1);
  expect_reject("truncated: the header says");

  memcpy(g, f, len);
  g[len] = 0;
  put_bytes(g, len + 1);
  expect_reject("1 bytes of trailing data");

  memcpy(g, f, len);
  set_le(g + 24, 8, UINT64_C(1) << 40);
  put_bytes(g, len);
  expect_reject("the header's counts");

  memcpy(g, f, len);
  set_le(g + 32, 8, UINT64_C(1) << 50);
  put_bytes(g, len);
  expect_reject("corrupted header (body size impossible");

  memcpy(g, f, len);
  set_le(g + 16, 4, 0);
  put_bytes(g, len);
  expect_reject("corrupted header (region, tile or queue count");

  memcpy(g, f, len);
  g[len / 2 + 24] ^= 0x55; /* inside the zlib stream */
  put_bytes(g, len);
  char *msg;
  assert_null(read_gtp(&msg));
  assert_non_null(strstr(msg, "error: "));
  free(msg);

  /* every truncation fails cleanly */
  for (size_t n = 0; n < len; n++) {
    put_bytes(f, n);
    assert_null(read_gtp(NULL));
  }
  snprintf(path + strlen(path), 8, ".none");
  expect_reject("cannot read");
  path[strlen(path) - 5] = 0;
  free(g);
  free(f);
}

/* ---- rejections inside the body: inflate, change, deflate, fix the header ---- */

typedef void (*BodyEdit)(unsigned char *body, size_t *blen);

static int body_version = GTP_VERSION; /* the version of the file rewrite_body edits */

static void rewrite_body(BodyEdit edit) {
  size_t len;
  unsigned char *f = valid_file_v(body_version, &len);
  size_t blen = (size_t)le(f + 32, 8);
  unsigned char *b = malloc(blen + 64);
  uLongf ul = (uLongf)blen;
  assert_int_equal(uncompress(b, &ul, f + 48, (uLong)(len - 48)), Z_OK);
  edit(b, &blen);
  uLongf zl = compressBound((uLong)blen);
  unsigned char *g = malloc(48 + zl);
  memcpy(g, f, 48);
  set_le(g + 4, 2, (uint64_t)body_version);
  assert_int_equal(compress2(g + 48, &zl, b, (uLong)blen, 6), Z_OK);
  set_le(g + 32, 8, blen);
  set_le(g + 40, 8, zl);
  put_bytes(g, 48 + zl);
  free(g);
  free(b);
  free(f);
}

/* Edits of a version 2 body. every_opcode_program: queue 0 is c1.k1.vec with V_COUNT
 * instructions */
static void edit_opcode(unsigned char *b, size_t *n) {
  (void)n;
  uint32_t nq = 5;
  b[nq * 16 + 3 * 112] = 200; /* instruction 3 of queue 0 */
}
static void edit_reserved(unsigned char *b, size_t *n) {
  (void)n;
  b[5 * 16 + 7] = 1;
}
static void edit_wait(unsigned char *b, size_t *n) { /* a wait: reserved in version 1 */
  (void)n;
  b[5 * 16 + 4] = 1;
}
static void edit_dup_queue(unsigned char *b, size_t *n) {
  (void)n;
  memcpy(b + 16 * 4, b, 12); /* queue 4 gets queue 0's position (instruction counts kept) */
}
static void edit_bad_queue(unsigned char *b, size_t *n) {
  (void)n;
  set_le(b + 4, 4, (uint64_t)(uint32_t)-2);
}
static void edit_count(unsigned char *b, size_t *n) {
  (void)n;
  set_le(b + 12, 4, le(b + 12, 4) + 1);
}
static void edit_longer(unsigned char *b, size_t *n) {
  b[*n] = 0;
  *n += 1;
}
static void edit_shorter(unsigned char *b, size_t *n) {
  (void)b;
  *n -= 1;
}
static void edit_nul_name(unsigned char *b, size_t *n) {
  /* region 1 is "in[0]": its length word is right after the instructions and region 0 */
  size_t at = 5 * 16 + (size_t)(V_COUNT + 3 + 4 + 3) * 112 + 4;
  assert_true(at + 9 <= *n);
  assert_int_equal(le(b + at, 4), 6);
  b[at + 4 + 2] = 0;
}

/* Edits of a version 3 body: its queue entries are 24 bytes, its records as many bytes as the
 * entries say. */
static void edit3_dup_queue(unsigned char *b, size_t *n) {
  (void)n;
  memcpy(b + 24 * 4, b, 12);
}
static void edit3_nul_name(unsigned char *b, size_t *n) {
  size_t at = 5 * 24 + 4; /* region 1's length word, after the records and region 0's */
  for (int i = 0; i < 5; i++) at += (size_t)le(b + 24 * i + 16, 8);
  assert_true(at + 9 <= *n);
  assert_int_equal(le(b + at, 4), 6);
  b[at + 4 + 2] = 0;
}

/* The queue table's and the names' rejections, in a body of `version` (whose queue entries
 * and names sit at other offsets in version 3: dup and nul are that version's edits). */
static void rejects_in_table(int version, BodyEdit dup, BodyEdit nul) {
  body_version = version;
  rewrite_body(dup);
  expect_reject("queues 0 and 4 are the same queue");
  rewrite_body(edit_bad_queue);
  expect_reject("queue 0 has a bad position");
  rewrite_body(edit_count);
  expect_reject("the queues hold");
  rewrite_body(edit_longer);
  expect_reject("the body is longer than its counts say");
  rewrite_body(edit_shorter);
  expect_reject("the body is shorter than its counts say");
  rewrite_body(nul);
  expect_reject("region name 1 contains a NUL byte");
}

static void test_reject_body(void **state) {
  (void)state;
  body_version = 2;
  rewrite_body(edit_opcode);
  expect_reject("queue 0, instruction 3: opcode 200 out of range");
  rewrite_body(edit_reserved);
  expect_reject("queue 0, instruction 0: reserved bytes are not zero");
  rewrite_body(edit_wait);
  GsProgram *p = read_gtp(NULL); /* version 2: read */
  assert_non_null(p);
  GsCursor cur;
  prog_cursor_init(&cur, &p->queues[0]);
  assert_int_equal(prog_cursor_next(&cur)->wait, 1);
  prog_free(p);
  body_version = 1;
  rewrite_body(edit_wait);
  expect_reject("queue 0, instruction 0: reserved bytes are not zero");
  rejects_in_table(2, edit_dup_queue, edit_nul_name);
  rejects_in_table(3, edit3_dup_queue, edit3_nul_name);
  body_version = GTP_VERSION;
}

/* Versions 1 and 2 read back field by field; gtp_write writes version 5. */
static void test_old_versions(void **state) {
  (void)state;
  GsProgram *p = every_opcode_program(); /* no synchronisation: a version 1 file holds it */
  for (int v = 1; v <= 2; v++) {
    write_old(p, v);
    GsProgram *q = read_gtp(NULL);
    assert_non_null(q);
    assert_same_program(p, q);
    prog_free(q);
  }
  prog_free(p);
}

/* A file of version `version` (3, 4 or 5: the same records) of one queue (c0.dma1) whose n
 * instructions' records are rec[0..rlen), with `code` bytes of records in its entry (rlen: pass
 * rlen). */
static void put_records(int version, const unsigned char *rec, size_t rlen, uint32_t n, uint64_t code) {
  unsigned char b[256];
  set_le(b, 4, 0);
  set_le(b + 4, 4, (uint32_t)-1);
  set_le(b + 8, 4, 1);
  set_le(b + 12, 4, n);
  set_le(b + 16, 8, code);
  memcpy(b + 24, rec, rlen);
  size_t blen = 24 + rlen;
  set_le(b + blen, 4, 0); /* region 0 and tile 0: no names */
  set_le(b + blen + 4, 4, 0);
  blen += 8;
  unsigned char f[48 + 512];
  uLongf zl = 512;
  assert_int_equal(compress2(f + 48, &zl, b, (uLong)blen, 6), Z_OK);
  memset(f, 0, 48);
  memcpy(f, "GTP1", 4);
  set_le(f + 4, 2, (uint64_t)version);
  set_le(f + 6, 2, 48);
  set_le(f + 8, 4, 1);
  set_le(f + 12, 4, 1);
  set_le(f + 16, 4, 1);
  set_le(f + 24, 8, n);
  set_le(f + 32, 8, blen);
  set_le(f + 40, 8, zl);
  put_bytes(f, 48 + zl);
}

static void put_v4(const unsigned char *rec, size_t rlen, uint32_t n, uint64_t code) {
  put_records(4, rec, rlen, n, code);
}
/* Records written by hand by the rules of docs/isa.md: the two-delta stride of a slot, read
 * back and written the same by gtp_write; then every malformed record rejected. */
static void test_records(void **state) {
  (void)state;
  /* four movs whose t0 is 5, 6, 7, 8, every other slot 0: t0 (slot 0) is predicted 0, then 5
   * (no stride yet), then 6 (the difference 1 seen once), then 8 (1 seen twice: the stride) */
  static const unsigned char four[] = {I_MOV, 1, 10, I_MOV, 1, 2, I_MOV, 1, 2, I_MOV, 0};
  put_v4(four, sizeof four, 4, sizeof four);
  GsProgram *p = read_gtp(NULL);
  assert_non_null(p);
  GsCursor c;
  prog_cursor_init(&c, &p->queues[0]);
  for (uint32_t t = 5; t <= 8; t++) {
    const GsInst *in = prog_cursor_next(&c);
    assert_int_equal(in->op, I_MOV);
    assert_int_equal(in->t[0], t);
    assert_int_equal(in->r[0] + in->t[1] + (uint64_t)in->n[0] + in->sub + in->wait, 0);
  }
  assert_null(prog_cursor_next(&c));
  assert_int_equal(gtp_write(path, p), 0);
  prog_free(p);
  size_t len;
  unsigned char *f = file_bytes(&len), b[64];
  uLongf blen = sizeof b;
  assert_int_equal(uncompress(b, &blen, f + 48, (uLong)(len - 48)), Z_OK);
  assert_int_equal(blen, 24 + sizeof four + 8);
  assert_memory_equal(b + 24, four, sizeof four);
  free(f);

  static const unsigned char op200[] = {15, 200, 0}; /* escape: the opcode in a byte */
  put_v4(op200, 3, 1, 3);
  expect_reject("queue 0, instruction 0: opcode 200 out of range");
  static const unsigned char open_mask[] = {I_MOV, 0x80};
  put_v4(open_mask, 2, 1, 2);
  expect_reject("queue 0, instruction 0: malformed record");
  static const unsigned char slot20[] = {I_MOV, 0x80, 0x80, 0x40}; /* there are 20 slots */
  put_v4(slot20, 4, 1, 4);
  expect_reject("queue 0, instruction 0: malformed record");
  static const unsigned char wide_sub[] = {I_MOV, 0x80, 0x80, 0x04, 0x80, 0x04}; /* sub 256 */
  put_v4(wide_sub, 6, 1, 6);
  expect_reject("queue 0, instruction 0: malformed record");
  unsigned char long_leb[16] = {I_MOV, 8}; /* n0 (slot 3): its residual in 65 bits */
  memset(long_leb + 2, 0xff, 9);
  long_leb[11] = 0x02;
  put_v4(long_leb, 12, 1, 12);
  expect_reject("queue 0, instruction 0: malformed record");
  long_leb[11] = 0x01; /* 64 bits, all set: the zigzag of INT64_MIN */
  put_v4(long_leb, 12, 1, 12);
  p = read_gtp(NULL);
  assert_non_null(p);
  prog_cursor_init(&c, &p->queues[0]);
  assert_true(prog_cursor_next(&c)->n[0] == INT64_MIN);
  prog_free(p);
  long_leb[1] = 1; /* t0 (slot 0) = INT64_MIN: too wide for a tile id */
  put_v4(long_leb, 12, 1, 12);
  expect_reject("queue 0, instruction 0: malformed record");
  /* sync = 1 << 24: the sync slot's byte 3, wait2 in version 4 (flag 0), reserved in 3 */
  static const unsigned char wait2[] = {I_MOV, 0x80, 0x80, 0x20, 0x80, 0x80, 0x80, 0x10};
  put_v4(wait2, sizeof wait2, 1, sizeof wait2);
  p = read_gtp(NULL);
  assert_non_null(p);
  prog_cursor_init(&c, &p->queues[0]);
  assert_int_equal(prog_cursor_next(&c)->wait2, 1);
  prog_free(p);
  put_records(3, wait2, sizeof wait2, 1, sizeof wait2);
  expect_reject("queue 0, instruction 0: reserved bytes are not zero");
  /* sync = 1 << 32: the sync slot's byte 4, signal2 in version 5 (queue 0), reserved before */
  static const unsigned char signal2[] = {I_MOV, 0x80, 0x80, 0x20, 0x80, 0x80, 0x80, 0x80, 0x20};
  put_records(5, signal2, sizeof signal2, 1, sizeof signal2);
  p = read_gtp(NULL);
  assert_non_null(p);
  prog_cursor_init(&c, &p->queues[0]);
  assert_int_equal(prog_cursor_next(&c)->signal2, 1);
  prog_free(p);
  put_v4(signal2, sizeof signal2, 1, sizeof signal2);
  expect_reject("queue 0, instruction 0: reserved bytes are not zero");
  put_records(3, signal2, sizeof signal2, 1, sizeof signal2);
  expect_reject("queue 0, instruction 0: reserved bytes are not zero");
  /* sync = 1 << 48: past the slot's six bytes in every version */
  static const unsigned char sync49[] = {I_MOV, 0x80, 0x80, 0x20, 0x80, 0x80,
                                         0x80,  0x80, 0x80, 0x80, 0x80, 0x01};
  put_records(5, sync49, sizeof sync49, 1, sizeof sync49);
  expect_reject("queue 0, instruction 0: malformed record");
  put_records(3, four, sizeof four, 4, sizeof four); /* version 3 files still read */
  p = read_gtp(NULL);
  assert_non_null(p);
  assert_int_equal(p->queues[0].ninsts, 4);
  prog_free(p);
  put_v4(four, sizeof four, 3, sizeof four);
  expect_reject("queue 0: bytes after its 3 instructions' records");
  put_v4(four, sizeof four, 5, sizeof four);
  expect_reject("queue 0, instruction 4: malformed record");
  put_v4(four, sizeof four, 4, 1000);
  expect_reject("queue 0: 1000 bytes of records, more than the body has left");
}

/* ---- fuzz ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull; /* fixed seed: the same mutations every run */
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void mutate(unsigned char *b, size_t len) {
  int k = 1 + (int)(next_rand() % 4);
  for (int i = 0; i < k; i++) {
    size_t at = (size_t)(next_rand() % len);
    switch (next_rand() % 3) {
    case 0: b[at] ^= (unsigned char)(1u << (next_rand() % 8)); break;
    case 1: b[at] = (unsigned char)next_rand(); break;
    default: b[at] = (unsigned char)(next_rand() % 2 ? 0xff : 0); break;
    }
  }
}

/* A read that succeeds must give a program that prog_check and the disassembler can
 * handle (they must not crash on arbitrary field values). */
static void exercise(GsProgram *p) {
  GsDiag d;
  diag_init(&d);
  d.out = fopen("/dev/null", "w");
  d.max_errors = 1000;
  prog_check(p, &tiny, &d, "fuzz");
  gtasm_write(d.out, &tiny, p);
  fclose(d.out);
  prog_free(p);
}

static void test_fuzz_file(void **state) {
  (void)state;
  size_t len;
  unsigned char *f = valid_file(&len), *g = malloc(len);
  int ok = 0;
  for (int it = 0; it < 3000; it++) {
    memcpy(g, f, len);
    /* bias towards the header, where the counts are */
    if (it % 2) mutate(g, 48);
    else mutate(g, len);
    put_bytes(g, len);
    GsProgram *p = read_gtp(NULL);
    if (p) ok++, exercise(p);
  }
  print_message("# %d of 3000 raw mutations were still readable\n", ok);
  free(g);
  free(f);
}

static void test_fuzz_body(void **state) {
  (void)state;
  size_t len;
  unsigned char *f = valid_file(&len);
  size_t blen = (size_t)le(f + 32, 8);
  unsigned char *b = malloc(blen), *m = malloc(blen);
  uLongf ul = (uLongf)blen;
  assert_int_equal(uncompress(b, &ul, f + 48, (uLong)(len - 48)), Z_OK);
  uLongf zcap = compressBound((uLong)blen);
  unsigned char *g = malloc(48 + zcap);
  int ok = 0;
  for (int it = 0; it < 3000; it++) {
    memcpy(m, b, blen);
    mutate(m, blen);
    size_t n = blen - (it % 7 == 0 ? (size_t)(next_rand() % 64) : 0); /* some truncated */
    uLongf zl = zcap;
    assert_int_equal(compress2(g + 48, &zl, m, (uLong)n, 1), Z_OK);
    memcpy(g, f, 48);
    set_le(g + 32, 8, it % 5 == 0 ? blen : n); /* and some with a stale body size */
    set_le(g + 40, 8, zl);
    put_bytes(g, 48 + zl);
    GsProgram *p = read_gtp(NULL);
    if (p) ok++, exercise(p);
  }
  print_message("# %d of 3000 body mutations were still readable\n", ok);
  assert_true(ok > 0); /* mutations of names and numbers are legal: some must be read */
  free(g);
  free(m);
  free(b);
  free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_large),
      cmocka_unit_test(test_layout),
      cmocka_unit_test(test_reject_header),
      cmocka_unit_test(test_reject_body),
      cmocka_unit_test(test_old_versions),
      cmocka_unit_test(test_records),
      cmocka_unit_test(test_fuzz_file),
      cmocka_unit_test(test_fuzz_body),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
