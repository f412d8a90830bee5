/* rng_testlib.h — the random tests' generator: xorshift64 (Marsaglia) from a fixed seed, so a
 * test case is one seed and every run draws the same numbers. The seed must not be 0.
 */
#ifndef GS_RNG_TESTLIB_H
#define GS_RNG_TESTLIB_H

#include <stdint.h>

typedef struct {
  uint64_t s;
} Rng;

static inline uint64_t rnd(Rng *r) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}

#endif
