// node_cache.h — an allocator for the nodes of the checks' maps (one node per allocation) that
// keeps freed nodes in a cache of its thread and hands them out again.
//
// Why: the checks make and drop a map node for nearly every write of a strided pattern (a
// region's byte ranges, sim/memory.h) and for every allocation and free of a region (millions a
// run). The C library's per-thread cache holds seven blocks of a size; past that each node went
// through its allocator's slow path: a tenth of the checks' thread on MobileNet-v2 under
// graphturbo (docs/speed.md, "Where the time goes").
// Contract: a std::allocator that serves single objects from a cache of at most kNodeCacheMax
// freed ones per thread and type (last freed, first served); anything else, and a node freed
// when the cache is full, goes to operator new and delete. Nodes are separate blocks of operator
// new, so one allocated by one thread may be freed by another; each thread but the main one
// frees the nodes left in its cache when it exits. No state: every instance is equal to every
// other.
#ifndef GS_NODE_CACHE_H
#define GS_NODE_CACHE_H

#include <pthread.h>

#include <cstddef>
#include <new>

static const size_t kNodeCacheMax = 1 << 14;

template <class T> struct NodeCache {
  using value_type = T;
  NodeCache() noexcept = default;
  template <class U> NodeCache(const NodeCache<U> &) noexcept {}

  T *allocate(size_t n) {
    Slots &s = slots();
    if (n == 1 && s.n > 0) return static_cast<T *>(s.v[--s.n]);
    return static_cast<T *>(::operator new(n * sizeof(T)));
  }

  void deallocate(T *p, size_t n) noexcept {
    Slots &s = slots();
    if (n == 1 && s.n < s.cap) {
      s.v[s.n++] = p;
      return;
    }
    ::operator delete(p);
  }

 private:
  // The thread's cache: trivially destructible, so it stays usable to the thread's very end
  // (a map destroyed after reap below frees its nodes with operator delete: cap is 0).
  struct Slots {
    void **v = nullptr;
    size_t n = 0, cap = 0;
    bool opened = false;
  };
  // Gives the cache its room when the thread first uses it, and asks for reap at the thread's
  // exit through a pthread key, not a thread_local with a destructor: registering that
  // destructor allocates, and glibc aborts the process when it cannot (test_limits), where
  // pthread_setspecific of one of the first 32 keys allocates nothing. (The main thread's
  // keys are not reaped at exit: its cache goes with the process.)
  static void open(Slots *s) {
    static pthread_key_t key;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    static bool have_key = false;
    pthread_once(&once, [] { have_key = pthread_key_create(&key, &reap) == 0; });
    s->opened = true;
    s->v = static_cast<void **>(::operator new(kNodeCacheMax * sizeof(void *), std::nothrow));
    s->cap = s->v ? kNodeCacheMax : 0;
    if (s->v && (!have_key || pthread_setspecific(key, s) != 0)) {  // no reaping: no cache
      ::operator delete(s->v);
      s->v = nullptr;
      s->cap = 0;
    }
  }
  // At the thread's exit: frees the nodes left in its cache and closes it.
  static void reap(void *p) {
    Slots *s = static_cast<Slots *>(p);
    for (size_t i = 0; i < s->n; i++) ::operator delete(s->v[i]);
    ::operator delete(s->v);
    s->v = nullptr;
    s->n = s->cap = 0;
  }
  static Slots &slots() {
    thread_local Slots s;
    if (__builtin_expect(!s.opened, 0)) open(&s);
    return s;
  }
};

template <class T, class U> bool operator==(const NodeCache<T> &, const NodeCache<U> &) { return true; }
template <class T, class U> bool operator!=(const NodeCache<T> &, const NodeCache<U> &) { return false; }

#endif
