/* fuzz_mutate.h — a small deterministic mutator for the suite's short fuzz runs (the long runs
 * use libFuzzer's own): fuzz_mutate() turns a seed into a variant by one of a few edits chosen
 * by a fixed-seed generator — flip a byte, insert or delete a byte, cut a stretch, repeat a
 * stretch, put an extreme number where a digit is (0, -1, 2^31, 2^40, 2^40 + 1, 2^63 - 1), or
 * take a line of another seed. Same seeds and generator state: the same variants, every run.
 * C and C++ (the simulator's target includes it too). */
#ifndef GS_FUZZ_MUTATE_H
#define GS_FUZZ_MUTATE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t s;
} FuzzRng;

static inline uint64_t fuzz_next(FuzzRng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline size_t fuzz_below(FuzzRng *r, size_t n) {
  return n ? (size_t)(fuzz_next(r) % n) : 0;
}

typedef struct {
  unsigned char *b;
  size_t n;
} FuzzBuf;

/* Replaces [at, at + cut) of x by the n bytes of s. */
static inline void fuzz_splice(FuzzBuf *x, size_t at, size_t cut, const void *s, size_t n) {
  unsigned char *b = (unsigned char *)malloc(x->n - cut + n + 1);
  if (!b) abort();
  memcpy(b, x->b, at);
  memcpy(b + at, s, n);
  memcpy(b + at + n, x->b + at + cut, x->n - at - cut);
  free(x->b);
  x->b = b;
  x->n = x->n - cut + n;
}

/* A variant of seed (n bytes) in *out (heap); other: another seed to take a line from. */
static inline void fuzz_mutate(FuzzRng *r, const unsigned char *seed, size_t n,
                               const unsigned char *other, size_t on, FuzzBuf *out) {
  static const char *const extreme[] = {"0", "-1", "2147483648", "1099511627776",
                                        "1099511627777", "9223372036854775807"};
  out->n = n;
  out->b = (unsigned char *)malloc(n + 1);
  if (!out->b) abort();
  memcpy(out->b, seed, n);
  size_t at = fuzz_below(r, out->n + 1), len = 1 + fuzz_below(r, 16);
  if (at + len > out->n) len = out->n - at;
  switch (fuzz_below(r, 7)) {
  case 0: if (at < out->n) out->b[at] ^= (unsigned char)(1u << fuzz_below(r, 8)); break;
  case 1: { unsigned char c = (unsigned char)fuzz_next(r); fuzz_splice(out, at, 0, &c, 1); break; }
  case 2: fuzz_splice(out, at, len ? 1 : 0, "", 0); break;
  case 3: fuzz_splice(out, at, len, "", 0); break;
  case 4: /* a stretch again */
    fuzz_splice(out, at, 0, seed + (at < n ? at : 0), at < n && at + len <= n ? len : 0);
    break;
  case 5: { /* a number where a digit is */
    size_t i = at;
    while (i < out->n && (out->b[i] < '0' || out->b[i] > '9')) i++;
    size_t j = i;
    while (j < out->n && out->b[j] >= '0' && out->b[j] <= '9') j++;
    const char *v = extreme[fuzz_below(r, sizeof extreme / sizeof *extreme)];
    if (i < out->n) fuzz_splice(out, i, j - i, v, strlen(v));
    break;
  }
  default: { /* a line of the other seed, at a line start */
    size_t a = fuzz_below(r, on + 1);
    while (a > 0 && other[a - 1] != '\n') a--;
    size_t e = a;
    while (e < on && other[e] != '\n') e++;
    if (e < on) e++;
    size_t i = at;
    while (i > 0 && out->b[i - 1] != '\n') i--;
    fuzz_splice(out, i, 0, other + a, e - a);
  }
  }
}

#endif
