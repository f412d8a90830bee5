/* gtp.c — the binary program file .gtp: a fixed 48-byte little-endian header followed by one
 * zlib stream holding the body (queue table, each queue's instructions in table order, region
 * names, tile names). Layout: docs/isa.md (drawn by gtp_write_layout_doc from the same offsets used
 * below).
 *
 * Version 3 stores each queue's instructions as the records the program is held in
 * (prog_code.c: prog_code_export, prog_code_import), so writing copies them and reading checks
 * and re-encodes them: a change to that encoding is a new version. Version 4 is version 3
 * with the sync slot's byte 3, reserved there, holding wait2; version 5 is version 4 with a
 * sync slot of six bytes, its bytes 4 and 5 holding signal2 and signal2_flag. Versions 1 and 2
 * (fixed 112-byte words), 3 and 4 are still read.
 * Both directions stream: the writer serialises into a 64 KiB staging buffer that is deflated
 * as it fills; the reader inflates 64 KiB at a time and decodes from that window, so memory
 * is the program itself plus constant buffers (and one queue's records while it is read).
 * Every count in the header is checked against the data before it is used to allocate (a
 * corrupted header cannot ask for more memory than the file could describe), and every byte is
 * accounted for: the body must inflate to exactly body_bytes and the compressed stream must end
 * exactly at the end of the file.
 * Invariant: gtp_read(gtp_write(p)) equals p field by field, names included.
 */
#include "prog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char gtp_magic[4] = {'G', 'T', 'P', '1'};
enum { STAGE = 1 << 16, MAX_NAME = GS_MAX_NAME + 1 }; /* names are < MAX_NAME bytes */

/* Instruction word: byte offsets (the doc table and the codec both use these). */
enum {
  IW_OP = 0, IW_SUB = 1, IW_DTYPE = 2, IW_FLAGS = 3, IW_WAIT = 4, IW_SIGNAL = 5,
  IW_SIGNAL_FLAG = 6, IW_RESERVED = 7, IW_R = 8, IW_T = 20, IW_N = 32
};
_Static_assert(IW_N + 8 * GS_INST_NUM == GTP_INST_BYTES, "instruction word size");

static void put16(unsigned char *b, uint16_t v) {
  b[0] = (unsigned char)v;
  b[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *b, uint32_t v) {
  for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *b, uint64_t v) {
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static uint16_t get16(const unsigned char *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t get32(const unsigned char *b) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | b[i];
  return v;
}
static uint64_t get64(const unsigned char *b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | b[i];
  return v;
}

static void decode_inst(const unsigned char *w, GsInst *in) {
  memset(in, 0, sizeof *in);
  in->op = w[IW_OP];
  in->sub = w[IW_SUB];
  in->dtype = w[IW_DTYPE];
  in->flags = w[IW_FLAGS];
  in->wait = w[IW_WAIT];
  in->signal = w[IW_SIGNAL];
  in->signal_flag = w[IW_SIGNAL_FLAG]; /* (byte IW_RESERVED: read_words requires it 0) */
  for (int i = 0; i < 3; i++) in->r[i] = get32(w + IW_R + 4 * i);
  for (int i = 0; i < 3; i++) in->t[i] = get32(w + IW_T + 4 * i);
  for (int i = 0; i < GS_INST_NUM; i++) in->n[i] = (int64_t)get64(w + IW_N + 8 * i);
}

/* ------------------------------------------------------------------- writer ---- */

typedef struct {
  z_stream z;
  unsigned char stage[STAGE];
  size_t nstage;
  unsigned char *out; /* header + compressed body */
  size_t len, cap;
} ZW;

static void zw_pump(ZW *w, int flush) {
  w->z.next_in = w->stage;
  w->z.avail_in = (uInt)w->nstage;
  int r;
  do {
    if (w->cap - w->len < STAGE) {
      w->cap = w->cap * 2 + STAGE;
      unsigned char *n = realloc(w->out, w->cap);
      if (!n) die("out of memory");
      w->out = n;
    }
    w->z.next_out = w->out + w->len;
    w->z.avail_out = (uInt)(w->cap - w->len);
    r = deflate(&w->z, flush);
    if (r == Z_STREAM_ERROR) die("deflate failed");
    w->len = (size_t)(w->z.next_out - w->out);
  } while (w->z.avail_out == 0 || w->z.avail_in > 0 || (flush == Z_FINISH && r != Z_STREAM_END));
  w->nstage = 0;
}

static void zw_put(ZW *w, const void *data, size_t n) {
  const unsigned char *d = data;
  while (n) {
    size_t k = STAGE - w->nstage < n ? STAGE - w->nstage : n;
    memcpy(w->stage + w->nstage, d, k);
    w->nstage += k;
    d += k;
    n -= k;
    if (w->nstage == STAGE) zw_pump(w, Z_NO_FLUSH);
  }
}

static uint64_t names_bytes(const GsProgram *p, int is_tile, uint32_t count) {
  uint64_t b = 4ull * count;
  for (uint32_t i = 0; i < count; i++) {
    const char *s = prog_name(p, is_tile, i);
    if (s && strlen(s) >= MAX_NAME) die("name longer than %d bytes", MAX_NAME);
    if (s) b += strlen(s);
  }
  return b;
}

static void put_names(ZW *w, const GsProgram *p, int is_tile, uint32_t count) {
  unsigned char b[4];
  for (uint32_t i = 0; i < count; i++) {
    const char *s = prog_name(p, is_tile, i);
    size_t n = s ? strlen(s) : 0;
    put32(b, s ? (uint32_t)n + 1 : 0);
    zw_put(w, b, 4);
    if (n) zw_put(w, s, n);
  }
}

static void zw_put_cb(void *w, const void *data, size_t n) { zw_put(w, data, n); }

int gtp_write(const char *path, const GsProgram *p) {
  uint64_t ninsts = (uint64_t)prog_ninsts(p);
  uint64_t *code = malloc(sizeof *code * ((size_t)p->nqueues + 1));
  if (!code) die("out of memory");
  uint64_t body = (uint64_t)p->nqueues * GTP_QUEUE3_BYTES + names_bytes(p, 0, p->nregions) +
                  names_bytes(p, 1, p->ntiles);
  for (int i = 0; i < p->nqueues; i++) body += code[i] = prog_code_export(&p->queues[i], NULL, NULL);
  ZW *w = calloc(1, sizeof *w);
  if (!w) die("out of memory");
  w->cap = GTP_HEADER_BYTES + STAGE;
  w->out = malloc(w->cap);
  if (!w->out) die("out of memory");
  w->len = GTP_HEADER_BYTES;
  /* level 1: higher levels cost several times the CPU for a few percent (scripts/bench_isa.sh) */
  if (deflateInit(&w->z, Z_BEST_SPEED) != Z_OK) die("deflateInit failed");

  unsigned char b[GTP_QUEUE3_BYTES];
  for (int i = 0; i < p->nqueues; i++) {
    const GsQueue *q = &p->queues[i];
    put32(b, (uint32_t)q->cluster);
    put32(b + 4, (uint32_t)q->core);
    put32(b + 8, (uint32_t)q->index);
    put32(b + 12, (uint32_t)q->ninsts);
    put64(b + 16, code[i]);
    zw_put(w, b, GTP_QUEUE3_BYTES);
  }
  for (int i = 0; i < p->nqueues; i++) prog_code_export(&p->queues[i], zw_put_cb, w);
  free(code);
  put_names(w, p, 0, p->nregions);
  put_names(w, p, 1, p->ntiles);
  zw_pump(w, Z_FINISH);
  gs_assert(w->z.total_in == body);
  deflateEnd(&w->z);

  unsigned char *h = w->out;
  memcpy(h, gtp_magic, 4);
  put16(h + 4, GTP_VERSION);
  put16(h + 6, GTP_HEADER_BYTES);
  put32(h + 8, (uint32_t)p->nqueues);
  put32(h + 12, p->nregions);
  put32(h + 16, p->ntiles);
  put32(h + 20, 0);
  put64(h + 24, ninsts);
  put64(h + 32, body);
  put64(h + 40, (uint64_t)(w->len - GTP_HEADER_BYTES));
  int r = util_write_file_atomic(path, w->out, w->len);
  int e = errno;
  free(w->out);
  free(w);
  errno = e;
  return r;
}

/* ------------------------------------------------------------------- reader ---- */

typedef struct {
  z_stream z;
  unsigned char buf[STAGE];
  size_t pos, len;
  int end;
  uint64_t consumed;
  const char *err; /* first error, for the message */
} ZR;

/* Copies n body bytes to dst; -1 on error (r->err says why). */
static int zr_get(ZR *r, void *dst, size_t n) {
  unsigned char *d = dst;
  while (n) {
    if (r->pos == r->len) {
      if (r->end) {
        r->err = "the body is shorter than its counts say";
        return -1;
      }
      r->z.next_out = r->buf;
      r->z.avail_out = STAGE;
      int ret = inflate(&r->z, Z_NO_FLUSH);
      if (ret == Z_STREAM_END) {
        r->end = 1;
      } else if (ret == Z_BUF_ERROR) {
        r->err = "the compressed body ends early (truncated file)";
        return -1;
      } else if (ret != Z_OK) {
        r->err = "corrupted compressed body";
        return -1;
      }
      r->pos = 0;
      r->len = STAGE - r->z.avail_out;
      continue;
    }
    size_t k = r->len - r->pos < n ? r->len - r->pos : n;
    memcpy(d, r->buf + r->pos, k);
    r->pos += k;
    r->consumed += k;
    d += k;
    n -= k;
  }
  return 0;
}

typedef struct {
  int32_t cluster, core, index;
  int qi;
} QKey;

static int qkey_cmp(const void *x, const void *y) {
  const QKey *a = x, *b = y;
  if (a->cluster != b->cluster) return a->cluster < b->cluster ? -1 : 1;
  if (a->core != b->core) return a->core < b->core ? -1 : 1;
  if (a->index != b->index) return a->index < b->index ? -1 : 1;
  return a->qi < b->qi ? -1 : a->qi > b->qi;
}

static int read_names(ZR *r, GsProgram *p, int is_tile, uint32_t count, const char *path,
                      GsDiag *d) {
  char *name = malloc(MAX_NAME + 1);
  if (!name) die("out of memory");
  for (uint32_t i = 0; i < count; i++) {
    unsigned char b[4];
    if (zr_get(r, b, 4) != 0) goto fail;
    uint32_t l = get32(b);
    if (l == 0) continue;
    if (l - 1 >= MAX_NAME) {
      diag_error(d, path, 0, 0, NULL, "%s name %u is %u bytes long (limit %d)",
                 is_tile ? "tile" : "region", i, l - 1, MAX_NAME - 1);
      free(name);
      return -1;
    }
    if (zr_get(r, name, l - 1) != 0) goto fail;
    name[l - 1] = 0;
    if (strlen(name) != l - 1) {
      diag_error(d, path, 0, 0, NULL, "%s name %u contains a NUL byte", is_tile ? "tile" : "region", i);
      free(name);
      return -1;
    }
    prog_set_name(p, is_tile, i, name);
  }
  free(name);
  return 0;
fail:
  diag_error(d, path, 0, 0, NULL, "%s", r->err);
  free(name);
  return -1;
}

/* The queue table: positions into p->queues, instruction counts into count[], and (version 3)
 * record bytes into code[]; 0 or -1 after reporting. */
static int read_queue_table(ZR *r, GsProgram *p, uint64_t ninsts, int version, uint32_t *count,
                            uint64_t *code, const char *path, GsDiag *d) {
  unsigned char b[GTP_QUEUE3_BYTES];
  size_t entry = version >= 3 ? GTP_QUEUE3_BYTES : GTP_QUEUE_BYTES;
  uint64_t sum = 0;
  QKey *keys = calloc((size_t)p->nqueues + 1, sizeof *keys);
  if (!keys) die("out of memory");
  for (int i = 0; i < p->nqueues; i++) {
    if (zr_get(r, b, entry) != 0) {
      diag_error(d, path, 0, 0, NULL, "%s", r->err);
      goto fail;
    }
    GsQueue *q = &p->queues[i];
    q->cluster = (int32_t)get32(b);
    q->core = (int32_t)get32(b + 4);
    q->index = (int32_t)get32(b + 8);
    count[i] = get32(b + 12);
    code[i] = version >= 3 ? get64(b + 16) : 0;
    if (q->cluster < 0 || q->core < -1 || q->index < 0) {
      diag_error(d, path, 0, 0, NULL, "queue %d has a bad position (cluster %d, core %d, index %d)",
                 i, q->cluster, q->core, q->index);
      goto fail;
    }
    sum += count[i];
    if (sum > ninsts) {
      diag_error(d, path, 0, 0, NULL, "the queues hold more instructions than the header's %llu",
                 (unsigned long long)ninsts);
      goto fail;
    }
    keys[i] = (QKey){q->cluster, q->core, q->index, i};
  }
  if (sum != ninsts) {
    diag_error(d, path, 0, 0, NULL, "the queues hold %llu instructions, the header says %llu",
               (unsigned long long)sum, (unsigned long long)ninsts);
    goto fail;
  }
  qsort(keys, (size_t)p->nqueues, sizeof *keys, qkey_cmp);
  for (int i = 1; i < p->nqueues; i++)
    if (keys[i].cluster == keys[i - 1].cluster && keys[i].core == keys[i - 1].core &&
        keys[i].index == keys[i - 1].index) {
      diag_error(d, path, 0, 0, NULL, "queues %d and %d are the same queue (c%d, core %d, index %d)",
                 keys[i - 1].qi, keys[i].qi, keys[i].cluster, keys[i].core, keys[i].index);
      goto fail;
    }
  free(keys);
  return 0;
fail:
  free(keys);
  return -1;
}

/* What the reader requires of every instruction, whatever the version (`reserved`: whether
 * its reserved bits are set): 0, or -1 after reporting. */
static int check_read_inst(const GsInst *in, int reserved, int qi, uint64_t k, const char *path,
                           GsDiag *d) {
  if (in->op >= I_COUNT) {
    diag_error(d, path, 0, 0, NULL, "queue %d, instruction %llu: opcode %u out of range (0..%d)",
               qi, (unsigned long long)k, in->op, I_COUNT - 1);
    return -1;
  }
  if (reserved) {
    diag_error(d, path, 0, 0, NULL, "queue %d, instruction %llu: reserved bytes are not zero", qi,
               (unsigned long long)k);
    return -1;
  }
  return 0;
}

/* Versions 1 and 2: count[i] instruction words per queue. */
static int read_words(ZR *r, GsProgram *p, const uint32_t *count, int version, const char *path,
                      GsDiag *d) {
  unsigned char b[GTP_INST_BYTES];
  for (int i = 0; i < p->nqueues; i++) {
    GsQueue *q = &p->queues[i];
    for (uint64_t k = 0; k < count[i]; k++) {
      if (zr_get(r, b, GTP_INST_BYTES) != 0) {
        diag_error(d, path, 0, 0, NULL, "%s", r->err);
        return -1;
      }
      GsInst *in = prog_emit(q);
      decode_inst(b, in);
      /* version 1 reserved bytes 4..7, where version 2 keeps the synchronisation */
      int reserved = version == 1 ? get32(b + IW_WAIT) != 0 : b[IW_RESERVED] != 0;
      if (check_read_inst(in, reserved, i, k, path, d) != 0) return -1;
    }
  }
  return 0;
}

/* check_read_inst for prog_code_import: queue qi's instructions of a version 3, 4 or 5 file
 * (version 3 has the sync slot's byte 3, version 5's wait2, reserved; versions 3 and 4 its
 * bytes 4 and 5, version 5's signal2 and signal2_flag). */
typedef struct {
  int qi, version;
  const char *path;
  GsDiag *d;
} RecordCheck;
static int accept_record(void *ctx, const GsInst *in, uint64_t k) {
  const RecordCheck *c = ctx;
  int reserved = (c->version == 3 && in->wait2) ||
                 (c->version <= 4 && (in->signal2 || in->signal2_flag));
  return check_read_inst(in, reserved, c->qi, k, c->path, c->d) == 0;
}

/* Versions 3 to 5: per queue, code[i] bytes of records for count[i] instructions
 * (prog_code.c). */
static int read_records(ZR *r, GsProgram *p, const uint32_t *count, const uint64_t *code,
                        uint64_t body, int version, const char *path, GsDiag *d) {
  unsigned char *buf = NULL;
  int rc = -1;
  for (int i = 0; i < p->nqueues; i++) {
    GsQueue *q = &p->queues[i];
    if (code[i] > body - r->consumed) {
      diag_error(d, path, 0, 0, NULL, "queue %d: %llu bytes of records, more than the body has left",
                 i, (unsigned long long)code[i]);
      goto out;
    }
    unsigned char *nb = realloc(buf, (size_t)code[i] + 1);
    if (!nb) die("out of memory");
    buf = nb;
    if (zr_get(r, buf, (size_t)code[i]) != 0) {
      diag_error(d, path, 0, 0, NULL, "%s", r->err);
      goto out;
    }
    uint64_t bad;
    RecordCheck rc3 = {i, version, path, d};
    int got = prog_code_import(q, buf, (size_t)code[i], count[i], accept_record, &rc3, &bad);
    if (got == -1 && bad < count[i])
      diag_error(d, path, 0, 0, NULL, "queue %d, instruction %llu: malformed record", i,
                 (unsigned long long)bad);
    else if (got == -1)
      diag_error(d, path, 0, 0, NULL, "queue %d: bytes after its %u instructions' records", i,
                 count[i]);
    if (got != 0) goto out; /* -2: accept_record said why */
  }
  rc = 0;
out:
  free(buf);
  return rc;
}

/* Decodes the body of a version `version` file into p (whose counts are set); 0 or -1 after
 * reporting. */
static int read_body(ZR *r, GsProgram *p, uint64_t ninsts, uint64_t body, int version,
                     const char *path, GsDiag *d) {
  uint32_t *count = calloc((size_t)p->nqueues + 1, sizeof *count);
  uint64_t *code = calloc((size_t)p->nqueues + 1, sizeof *code);
  if (!count || !code) die("out of memory");
  int rc = read_queue_table(r, p, ninsts, version, count, code, path, d);
  if (rc == 0)
    rc = version >= 3 ? read_records(r, p, count, code, body, version, path, d)
                      : read_words(r, p, count, version, path, d);
  free(count);
  free(code);
  if (rc != 0) return -1;
  if (read_names(r, p, 0, p->nregions, path, d) != 0) return -1;
  if (read_names(r, p, 1, p->ntiles, path, d) != 0) return -1;
  return 0;
}

GsProgram *gtp_read(const char *path, GsDiag *d) {
  size_t len;
  unsigned char *f = (unsigned char *)util_read_file(path, &len);
  if (!f) {
    diag_error(d, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
    return NULL;
  }
  GsProgram *p = NULL;
  ZR *r = NULL;
  const char *why = NULL;
  char msg[256];
  if (len < 4 || memcmp(f, gtp_magic, 4) != 0) {
    why = "not a .gtp file (bad magic; expected \"GTP1\")";
    goto out;
  }
  if (len < GTP_HEADER_BYTES) {
    snprintf(msg, sizeof msg, "truncated header (%zu bytes, need %d)", len, GTP_HEADER_BYTES);
    why = msg;
    goto out;
  }
  uint16_t version = get16(f + 4), hbytes = get16(f + 6);
  uint32_t nqueues = get32(f + 8), nregions = get32(f + 12), ntiles = get32(f + 16);
  uint64_t ninsts = get64(f + 24), body = get64(f + 32), zbody = get64(f + 40);
  uint64_t have = len - GTP_HEADER_BYTES;
  /* the least bytes a queue entry and an instruction take in the body */
  uint64_t qmin = version >= 3 ? GTP_QUEUE3_BYTES : GTP_QUEUE_BYTES;
  uint64_t imin = version >= 3 ? 2 : GTP_INST_BYTES;
  if (version < 1 || version > GTP_VERSION) {
    snprintf(msg, sizeof msg, "unsupported .gtp version %u (this gtsim reads versions 1 to %d)",
             version, GTP_VERSION);
    why = msg;
  } else if (hbytes != GTP_HEADER_BYTES || get32(f + 20) != 0) {
    why = "corrupted header (header size or reserved field)";
  } else if (zbody > have) {
    snprintf(msg, sizeof msg, "truncated: the header says %llu compressed bytes, the file has %llu",
             (unsigned long long)zbody, (unsigned long long)have);
    why = msg;
  } else if (zbody < have) {
    snprintf(msg, sizeof msg, "%llu bytes of trailing data after the compressed body",
             (unsigned long long)(have - zbody));
    why = msg;
  } else if (nregions < 1 || ntiles < 1 || nregions > GS_MAX_IDS || ntiles > GS_MAX_IDS ||
             nqueues > (uint32_t)INT32_MAX) {
    why = "corrupted header (region, tile or queue count out of range)";
  } else if (zbody > UINT32_MAX) {
    why = "compressed bodies of 4 GiB and more are not supported";
  } else if (body / 1032 > zbody + 64) {
    /* deflate cannot compress better than about 1032:1 */
    why = "corrupted header (body size impossible for the compressed size)";
  } else if (ninsts > body / imin ||
             (uint64_t)nqueues * qmin + ninsts * imin +
                     4ull * nregions + 4ull * ntiles > body) {
    snprintf(msg, sizeof msg, "the header's counts (%u queues, %llu instructions, %u regions, "
             "%u tiles) exceed its body size %llu", nqueues, (unsigned long long)ninsts,
             nregions, ntiles, (unsigned long long)body);
    why = msg;
  }
  if (why) goto out;

  r = calloc(1, sizeof *r);
  if (!r) die("out of memory");
  if (inflateInit(&r->z) != Z_OK) die("inflateInit failed");
  r->z.next_in = f + GTP_HEADER_BYTES;
  r->z.avail_in = (uInt)zbody; /* < 4 GiB: checked with the header */
  p = prog_new();
  p->queues = calloc((size_t)nqueues + 1, sizeof *p->queues);
  if (!p->queues) die("out of memory");
  p->nqueues = (int)nqueues;
  prog_reserve_ids(p, nregions, ntiles);
  if (read_body(r, p, ninsts, body, version, path, d) != 0) goto fail;
  if (r->pos != r->len) {
    why = "the body is longer than its counts say";
  } else if (!r->end) {
    unsigned char extra;
    if (zr_get(r, &extra, 1) == 0) why = "the body is longer than its counts say";
    else if (!r->end || r->pos != r->len) why = r->err;
  }
  if (!why && r->consumed != body) {
    snprintf(msg, sizeof msg, "the body holds %llu bytes of data, the header says %llu",
             (unsigned long long)r->consumed, (unsigned long long)body);
    why = msg;
  }
  if (!why && r->z.avail_in != 0) why = "data after the end of the compressed stream";
  if (why) goto fail;
  inflateEnd(&r->z);
  free(r);
  free(f);
  return p;
fail:
  inflateEnd(&r->z);
  prog_free(p);
  p = NULL;
out:
  if (why) diag_error(d, path, 0, 0, NULL, "%s", why);
  free(r);
  free(f);
  return NULL;
}

/* ------------------------------------------------------------------ the doc ---- */

void gtp_write_layout_doc(FILE *out) {
  fprintf(out,
          "All integers are little-endian. A file is a %d-byte header followed by one zlib\n"
          "stream (RFC 1950, `compress2`/`deflate` compatible) that inflates to the body.\n\n",
          GTP_HEADER_BYTES);
  fputs("Header:\n\n```\n"
        "offset size field\n"
        "     0    4 magic        \"GTP1\"\n"
        "     4    2 version      format version (this gtsim writes ", out);
  fprintf(out, "%d and reads 1 to %d)\n", GTP_VERSION, GTP_VERSION);
  fprintf(out,
          "     6    2 header_bytes %d\n"
          "     8    4 nqueues      queues in the body\n"
          "    12    4 nregions     region ids are 0..nregions-1 (0 = none)\n"
          "    16    4 ntiles       tile ids are 0..ntiles-1 (0 = none)\n"
          "    20    4 reserved     0\n"
          "    24    8 ninsts       instructions over all queues\n"
          "    32    8 body_bytes   size of the inflated body\n"
          "    40    8 zbody_bytes  size of the zlib stream; the file ends right after it\n"
          "```\n\n",
          GTP_HEADER_BYTES);
  fprintf(out,
          "Body (inflated), in this order:\n\n"
          "1. queue table: nqueues entries of %d bytes: `int32 cluster, int32 core (-1: a cluster\n"
          "   DMA engine), int32 index, uint32 ninsts, uint64 code_bytes`;\n"
          "2. each queue's instructions as records (below), code_bytes bytes, queue by queue in\n"
          "   table order;\n"
          "3. region names for ids 0..nregions-1, then tile names for ids 0..ntiles-1: each a\n"
          "   `uint32 len1` (0: no name, else the name has len1-1 bytes, no NUL) and its bytes.\n\n",
          GTP_QUEUE3_BYTES);
  fputs("A record stores an instruction as the difference from a prediction, which is how gtsim\n"
        "holds programs in memory too (about 4 bytes an instruction; the file is that, deflated).\n"
        "An instruction's fields are 20 slots, in this order: t0 t1 t2, n0 n1 n2 n3, r0 r1 r2,\n"
        "n4 ... n9, sub, dtype, flags, sync (= wait | signal << 8 | signal_flag << 16 | wait2\n"
        "<< 24 | signal2 << 32 | signal2_flag << 40). A queue's reader keeps 16 rows, each\n"
        "with, per slot, `last`, `stride` and `lastd` (64-bit, all 0 at the queue's start) and\n"
        "the opcode it last held (none at the start), and per opcode the row it used last. A\n"
        "record is:\n\n"
        "- a header byte: `opcode | row << 4`; opcode 15 is an escape, the opcode is then the next\n"
        "  byte. When the row last held another opcode (or none), it first becomes a copy of the\n"
        "  row this opcode used last (all 0 when there is none); the row is then this opcode's\n"
        "  last;\n"
        "- a mask, LEB128 (7 bits a byte, least significant first, high bit: more follow): bit k\n"
        "  set when slot k has a residual;\n"
        "- for each set bit in turn, the residual: a zigzag LEB128 (`(x << 1) ^ (x >> 63)`).\n\n"
        "Every slot's value is `last + stride` (+ its residual), in 64-bit wrap-around; it then\n"
        "learns: `d = value - last`; `stride = d` when `d == lastd`; `lastd = d`; `last = value`.\n"
        "So a field that moves by the same amount twice is predicted from then on. sub, dtype and\n"
        "flags take 8 bits, r and t 32, sync 48, n 64 (two's complement).\n\n", out);
  fputs("Versions 1 and 2 (still read) had queue entries of 16 bytes (no code_bytes) and every\n"
        "instruction as a word of 112 bytes:\n\n```\n", out);
  fputs(" byte  0     1     2     3     4     5      6      7    8 ... 19    20 ... 31    32 ... 111\n"
        "      +-----+-----+-----+-----+-----+------+------+----+-----------+------------+-------------+\n"
        "      | op  | sub |dtype|flags|wait |signal|signal|res.| r0 r1 r2  | t0 t1 t2   | n0 ... n9   |\n"
        "      |     |     |     |     |     |      |_flag | =0 |           |            |             |\n"
        "      | u8  | u8  | u8  | u8  | u8  |  u8  |  u8  | u8 | 3 x u32   | 3 x u32    | 10 x int64  |\n"
        "      +-----+-----+-----+-----+-----+------+------+----+-----------+------------+-------------+\n"
        "```\n\n",
        out);
  fprintf(out, "Field offsets: op %d, sub %d, dtype %d, flags %d, wait %d, signal %d, signal_flag %d, "
          "reserved %d, r[i] %d+4i, t[i] %d+4i, n[i] %d+8i. wait and signal hold 1 + the flag or\n"
          "queue (0: none), as in GsInst. Version 1 (before instructions carried synchronisation)\n"
          "has bytes 4 to 7 reserved and zero; it reads as version 2 without any. Version 3 files\n"
          "of the zoo's scheduled programs are 4 to 35 times smaller, and faster to write and\n"
          "read (docs/timing.md, \"Writing the program\"). Version 4 is version 3 with byte 3 of\n"
          "the sync slot, reserved and zero there, holding `wait2` (Queues, above); version 5 is\n"
          "version 4 with a sync slot of 48 bits instead of 32, its bytes 4 and 5 holding\n"
          "`signal2` and `signal2_flag`. Files of versions 3 and 4 still read.\n\n",
          IW_OP, IW_SUB, IW_DTYPE, IW_FLAGS, IW_WAIT, IW_SIGNAL, IW_SIGNAL_FLAG, IW_RESERVED, IW_R,
          IW_T, IW_N);
  fputs("The reader rejects, with `file: error: ...` and exit status 1: a bad magic, another\n"
        "version, a truncated header or body, trailing bytes, a corrupted zlib stream, counts\n"
        "that exceed the body, a body that does not inflate to exactly body_bytes, two queue\n"
        "entries for the same queue, a malformed record (one that runs past its queue's bytes,\n"
        "a number longer than 64 bits, a mask bit past the 20 slots, a value wider than its\n"
        "field), records left over after a queue's instructions, an opcode out of range,\n"
        "non-zero reserved bytes and names with NUL bytes. Everything else (units, engines,\n"
        "ranges of enum operands) is checked by prog_check against the arch, like an assembled\n"
        "program.\n",
        out);
}
