/* util.c — arena, vectors, die(), diagnostics, atomic file output and JSON strings.
 * The arena is a list of 64 KiB blocks (larger requests get their own block); it never
 * moves an allocation, so pointers into it stay valid until arena_free(). */
#define _GNU_SOURCE /* madvise's MADV_HUGEPAGE, sched_getaffinity */
#include "util.h"

#include <sched.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void tmp_remove_all(void);

/* Set by the first thread that dies: exit() run by two threads at once (the simulation's two
 * threads both out of memory) crashed in the exit handlers instead of exiting 3. */
static atomic_flag dying = ATOMIC_FLAG_INIT;

noreturn void util_die(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  if (atomic_flag_test_and_set(&dying))
    for (;;) pause(); /* another thread ends the process */
  tmp_remove_all(); /* an output being written is not left half done */
  fprintf(stderr, "gtsim: internal error at %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(GS_EXIT_INTERNAL);
}

typedef struct Block {
  struct Block *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} Block;

typedef struct Adopted { /* a heap block the arena frees (arena_adopt) */
  struct Adopted *next;
  void *p;
} Adopted;

struct GsArena {
  Block *head;
  Adopted *adopted;
};

enum { BLOCK_SIZE = 64 * 1024, HUGE_BLOCK = 2 << 20 /* a huge page */ };

GsArena *arena_new(void) {
  GsArena *a = calloc(1, sizeof *a);
  if (!a) die("out of memory");
  return a;
}

void arena_free(GsArena *a) {
  if (!a) return;
  for (Adopted *x = a->adopted; x; x = x->next) free(x->p); /* the nodes are in the blocks */
  for (Block *b = a->head, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  free(a);
}

/* Planning's large arrays, written once, cost ViT-B/16 graphturbo's planning about half its
 * time in page faults, each several microseconds on a virtual machine (docs/speed.md,
 * "Scheduling"): backing their whole 2 MiB pages with huge pages takes one fault per 512
 * pages. The kernel decides (transparent huge pages in their "madvise" or "always" mode); it
 * may refuse, and nothing depends on it but time. */
void util_advise_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  uintptr_t lo = ((uintptr_t)p + HUGE_BLOCK - 1) & ~(uintptr_t)(HUGE_BLOCK - 1);
  uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_BLOCK - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p, (void)n;
#endif
}

/* A memory's first write takes a page fault per 4 KiB page, about 10 us each on a virtual
 * machine; MADV_POPULATE_WRITE (Linux 5.14) maps them all in one call, about 1.5 us a page
 * (5 MiB: 15 ms touched page by page, 2 ms populated). Small pages, unlike util_advise_huge:
 * the checks' ring on huge pages slowed its reader by a tenth (docs/speed.md). A kernel
 * without it refuses, and the pages fault at their first write as before. */
void util_populate(void *p, size_t n) {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* linux/mman.h; glibc's headers may predate it */
#endif
  uintptr_t lo = (uintptr_t)p & ~(uintptr_t)4095, hi = (uintptr_t)p + n;
  if (n) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

int util_two_cores(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 2;
}

/* A new block for n bytes: BLOCK_SIZE, or n alone when larger; one of HUGE_BLOCK or more on
 * whole huge pages (util_advise_huge: a big array of planning, written once). */
static Block *arena_block(GsArena *a, size_t n) {
  size_t size = n > BLOCK_SIZE ? n : BLOCK_SIZE;
  Block *b;
  if (size >= HUGE_BLOCK) {
    size_t whole = (sizeof *b + size + HUGE_BLOCK - 1) & ~(size_t)(HUGE_BLOCK - 1);
    b = aligned_alloc(HUGE_BLOCK, whole);
    if (b) util_advise_huge(b, whole);
    size = whole - sizeof *b;
  } else {
    b = malloc(sizeof *b + size);
  }
  if (!b) die("out of memory (%zu bytes)", n);
  b->size = size;
  b->used = 0;
  if (n > BLOCK_SIZE && a->head) { /* keep the current block as head for small requests */
    b->next = a->head->next;
    a->head->next = b;
  } else {
    b->next = a->head;
    a->head = b;
  }
  return b;
}

void *arena_alloc(GsArena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  Block *b = a->head;
  if (!b || b->size - b->used < n) b = arena_block(a, n);
  void *p = b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

void *arena_adopt(GsArena *a, void *p) {
  if (!p) return NULL;
  Adopted *x = arena_alloc(a, sizeof *x);
  x->p = p;
  x->next = a->adopted;
  a->adopted = x;
  return p;
}

char *arena_strndup(GsArena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(GsArena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(GsArena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) die("bad format");
  char *p = arena_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

void vec_init(GsVec *v, size_t elem) {
  memset(v, 0, sizeof *v);
  v->elem = elem;
}

void *vec_push(GsVec *v) {
  if (v->len == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 16;
    void *d = realloc(v->data, cap * v->elem);
    if (!d) die("out of memory");
    v->data = d;
    v->cap = cap;
  }
  void *slot = (unsigned char *)v->data + v->len * v->elem;
  memset(slot, 0, v->elem);
  v->len++;
  return slot;
}

void vec_free(GsVec *v) {
  free(v->data);
  v->data = NULL;
  v->len = v->cap = 0;
}

void diag_init(GsDiag *d) {
  memset(d, 0, sizeof *d);
  d->out = stderr;
  d->max_errors = 1;
}

void diag_show_line(FILE *out, const char *src, int line, int col) {
  if (!src || line < 1) return;
  const char *p = src;
  for (int l = 1; l < line && *p; p++)
    if (*p == '\n') l++;
  const char *e = strchr(p, '\n');
  int len = e ? (int)(e - p) : (int)strlen(p);
  fprintf(out, "  %.*s\n", len, p);
  if (col >= 1) {
    fputs("  ", out);
    for (int i = 1; i < col && i <= len; i++) fputc(p[i - 1] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
  }
}

void diag_error(GsDiag *d, const char *file, int line, int col, const char *src,
                const char *fmt, ...) {
  int max = d->max_errors > 0 ? d->max_errors : 1;
  d->nerrors++;
  if (d->nerrors > max) return;
  FILE *out = d->out ? d->out : stderr;
  if (line > 0 && col > 0) fprintf(out, "%s:%d:%d: error: ", file, line, col);
  else if (line > 0) fprintf(out, "%s:%d: error: ", file, line);
  else fprintf(out, "%s: error: ", file);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(out, fmt, ap);
  va_end(ap);
  fputc('\n', out);
  diag_show_line(out, src, line, col);
}

char *util_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (!buf) die("out of memory");
  for (;;) {
    if (cap - n < 4096) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb) die("out of memory");
      buf = nb;
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

int util_has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  return n > e && strcasecmp(path + n - e, ext) == 0;
}

int util_write_in_place(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* The tracked temporaries: fixed storage, so the signal handler touches nothing but these
 * arrays, unlink() and raise() (all async-signal-safe). */
static char tmp_path[UTIL_TMP_SLOTS][4096];
static volatile sig_atomic_t tmp_used[UTIL_TMP_SLOTS];
static const int tmp_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void tmp_remove_all(void) {
  for (int i = 0; i < UTIL_TMP_SLOTS; i++)
    if (tmp_used[i]) {
      unlink(tmp_path[i]);
      tmp_used[i] = 0;
    }
}

static void tmp_on_signal(int sig) {
  tmp_remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Installs the handler for each signal still at its default action (an ignored SIGINT, as in
 * a background job, stays ignored). */
static void tmp_install(void) {
  static int done;
  if (done) return;
  done = 1;
  for (size_t i = 0; i < sizeof tmp_signals / sizeof tmp_signals[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(tmp_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tmp_on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t j = 0; j < sizeof tmp_signals / sizeof tmp_signals[0]; j++)
      sigaddset(&sa.sa_mask, tmp_signals[j]);
    sigaction(tmp_signals[i], &sa, NULL);
  }
}

int util_tmp_track(const char *path) {
  size_t n = strlen(path);
  if (n >= sizeof tmp_path[0]) return -1;
  tmp_install();
  for (int i = 0; i < UTIL_TMP_SLOTS; i++)
    if (!tmp_used[i]) {
      memcpy(tmp_path[i], path, n + 1);
      tmp_used[i] = 1;
      return 0;
    }
  return -1;
}

void util_tmp_untrack(const char *path) {
  for (int i = 0; i < UTIL_TMP_SLOTS; i++)
    if (tmp_used[i] && strcmp(tmp_path[i], path) == 0) tmp_used[i] = 0;
}

char *util_tmp_name(const char *path) {
  size_t n = strlen(path) + 32;
  char *tmp = malloc(n);
  if (!tmp) die("out of memory");
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  return tmp;
}

int util_check_writable(const char *path) {
  struct stat st;
  if (!*path) { /* its temporary would be made, the rename to "" would fail */
    errno = ENOENT;
    return -1;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    if (!S_ISDIR(st.st_mode)) return 0; /* a device or FIFO: opening a FIFO waits for a reader */
    errno = EISDIR;
    return -1;
  }
  char *tmp = util_tmp_name(path);
  util_tmp_track(tmp);
  int fd = open(tmp, O_WRONLY | O_CREAT, 0666), e = errno;
  if (fd >= 0) {
    close(fd);
    unlink(tmp);
  }
  util_tmp_untrack(tmp);
  free(tmp);
  errno = e;
  return fd < 0 ? -1 : 0;
}

int util_write_file_atomic(const char *path, const void *data, size_t len) {
  if (util_write_in_place(path)) { /* a device or FIFO: written, never replaced */
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int bad = fwrite(data, 1, len, f) != len;
    if (fclose(f) != 0) bad = 1;
    if (bad && !errno) errno = EIO;
    return bad ? -1 : 0;
  }
  char *tmp = util_tmp_name(path);
  util_tmp_track(tmp);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    util_tmp_untrack(tmp);
    free(tmp);
    return -1;
  }
  size_t w = fwrite(data, 1, len, f);
  int bad = w != len;
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    util_tmp_untrack(tmp);
    free(tmp);
    errno = e ? e : EIO;
    return -1;
  }
  util_tmp_untrack(tmp);
  free(tmp);
  return 0;
}

void util_json_str(FILE *out, const char *s) {
  fputc('"', out);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c < 0x20) fprintf(out, "\\u%04x", c);
    else fputc(c, out);
  }
  fputc('"', out);
}
