/* fuzz_common.h — what the libFuzzer targets of tests/fuzz/ share (included by each; every
 * function static inline, so a test that includes several targets gets one copy, and C++ —
 * fuzz_sim.cpp — no warning for the ones it does not use):
 *   fuzz_null()           a FILE for the messages of inputs that fail (/dev/null)
 *   fuzz_text(d, n)       the input as a NUL-terminated heap string (bytes after a NUL end it)
 *   fuzz_tiny()           configs/tiny.cfg, loaded once (targets run from the source tree)
 *   fuzz_disasm(a, p)     program p as .gtasm text (heap), the form round trips compare
 *   fuzz_gtp_path()       a per-process temporary file for .gtp bytes (the reader takes paths)
 * A target aborts on a bug it can see (a round trip that changes the program): libFuzzer
 * reports that like a crash. */
#ifndef GS_FUZZ_COMMON_H
#define GS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "prog.h"

static inline FILE *fuzz_null(void) {
  static FILE *null;
  if (!null) null = fopen("/dev/null", "w");
  if (!null) abort();
  return null;
}

static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *text = (char *)malloc(size + 1);
  if (!text) abort();
  memcpy(text, data, size);
  text[size] = 0;
  return text;
}

static inline const GsArch *fuzz_tiny(void) {
  static GsArch *tiny;
  if (tiny) return tiny;
  GsDiag d;
  diag_init(&d);
  tiny = arch_load("configs/tiny.cfg", NULL, 0, &d); /* (also for C++: fuzz_sim.cpp) */
  if (!tiny) {
    fprintf(stderr, "fuzz: run from the source tree (configs/tiny.cfg)\n");
    abort();
  }
  return tiny;
}

static inline char *fuzz_disasm(const GsArch *a, const GsProgram *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) abort();
  gtasm_write(f, a, p);
  fclose(f);
  return buf;
}

static inline const char *fuzz_gtp_path(void) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/gtsim_fuzz_%ld.gtp", (long)getpid());
  return path;
}

/* Aborts with both texts when a round trip changed the program. */
static inline void fuzz_same(const char *what, const char *t1, const char *t2) {
  if (strcmp(t1, t2) == 0) return;
  fprintf(stderr, "%s changed the program:\n%s\n---\n%s\n", what, t1, t2);
  abort();
}

/* p (whose disassembly is t1) written as .gtp and read back must disassemble to t1; a program
 * the writer refuses is fine (0), one it writes must read back (else abort). */
static inline void fuzz_gtp_round_trip(const GsArch *a, const GsProgram *p, const char *t1) {
  if (gtp_write(fuzz_gtp_path(), p) != 0) return;
  GsDiag d;
  diag_init(&d);
  d.out = fuzz_null();
  GsProgram *r = gtp_read(fuzz_gtp_path(), &d);
  if (!r) abort();
  char *t2 = fuzz_disasm(a, r);
  fuzz_same("writing and reading .gtp", t1, t2);
  free(t2);
  prog_free(r);
}

#endif
