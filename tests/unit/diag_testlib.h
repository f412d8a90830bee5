/* diag_testlib.h — a GsDiag whose messages go into a string, for the tests that read them
 * (include after cmocka.h):
 *   DiagText t;
 *   GsDiag *d = diag_text_begin(&t);    then calls that report to d (t stays where it is)
 *   char *msgs = diag_text_end(&t);     every message, NUL-terminated (caller frees);
 *                                       t.d's counts stay readable, t.len is the length */
#ifndef GS_DIAG_TESTLIB_H
#define GS_DIAG_TESTLIB_H
#include <stdio.h>

#include "util.h"

typedef struct {
  GsDiag d;
  FILE *m;
  char *text;
  size_t len;
} DiagText;

static inline GsDiag *diag_text_begin(DiagText *t) {
  t->text = NULL;
  t->len = 0;
  t->m = open_memstream(&t->text, &t->len);
  assert_non_null(t->m);
  diag_init(&t->d);
  t->d.out = t->m;
  return &t->d;
}

static inline char *diag_text_end(DiagText *t) {
  fclose(t->m);
  return t->text;
}

#endif
