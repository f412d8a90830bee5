/* test_arena.c — the arena (sched/util.h): every allocation is zeroed, 16-byte aligned and
 * apart from every other one, whatever its size: small ones share 64 KiB blocks, larger ones
 * get a block of their own, and those of 2 MiB and more a block on whole 2 MiB pages
 * (util_advise_huge), whose room past the request is not handed out again. The oracle: each
 * allocation is filled with a byte of its own (ASan reports a write past its room), and at
 * the end every one still holds only its byte, so no two overlapped. util_advise_huge on a
 * range with no whole huge page, or on a range of the stack, does nothing wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util.h"

enum { MIB = 1 << 20 };

/* Sizes around the thresholds (64 KiB, 2 MiB), with small ones between the large. */
static const size_t sizes[] = {1,       16,           24,          64 * 1024 - 16, 64 * 1024,
                               100,     64 * 1024 + 1, 7,          2 * MIB - 48,   2 * MIB - 16,
                               3,       2 * MIB,       2 * MIB + 1, 40,            5 * MIB + 3,
                               1000,    64,            3 * MIB,     17,            200000};
enum { N = sizeof sizes / sizeof *sizes };

static int all_equal(const unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

static void test_sizes_apart_and_zeroed(void **state) {
  (void)state;
  GsArena *a = arena_new();
  unsigned char *p[N];
  for (int i = 0; i < N; i++) {
    p[i] = arena_alloc(a, sizes[i]);
    assert_non_null(p[i]);
    assert_int_equal((uintptr_t)p[i] % 16, 0);
    assert_true(all_equal(p[i], sizes[i], 0)); /* zeroed */
    memset(p[i], i + 1, sizes[i]);
  }
  for (int i = 0; i < N; i++) assert_true(all_equal(p[i], sizes[i], (unsigned char)(i + 1)));
  arena_free(a);
}

/* A block of its own does not become the head: the small requests after a large one go on
 * filling the 64 KiB block they were filling (consecutive, 16 bytes apart). */
static void test_large_keeps_head(void **state) {
  (void)state;
  GsArena *a = arena_new();
  unsigned char *s0 = arena_alloc(a, 16);
  unsigned char *big = arena_alloc(a, 3 * MIB);
  unsigned char *s1 = arena_alloc(a, 16);
  assert_ptr_equal(s1, s0 + 16);
  assert_true(big + 3 * MIB <= s0 || big >= s1 + 16);
  arena_free(a);
}

static void test_advise_any_range(void **state) {
  (void)state;
  unsigned char local[256];
  util_advise_huge(local, sizeof local); /* no whole huge page inside: nothing asked */
  util_advise_huge(NULL, 0);
  unsigned char *m = malloc(5 * MIB);
  assert_non_null(m);
  util_advise_huge(m, 5 * MIB); /* one or two whole pages inside */
  memset(m, 7, 5 * MIB);
  assert_true(all_equal(m, 5 * MIB, 7));
  free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes_apart_and_zeroed),
      cmocka_unit_test(test_large_keeps_head),
      cmocka_unit_test(test_advise_any_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
