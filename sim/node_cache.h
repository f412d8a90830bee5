// node_cache.h — an allocator for the nodes of the checks' maps (one node per allocation) that
// keeps freed nodes in a cache of its thread and hands them out again.
//
// Why: the checks make and drop a map node for nearly every write of a strided pattern (a
// region's byte ranges, sim/memory.h) and for every allocation and free of a region (millions a
// run). The C library's per-thread cache holds seven blocks of a size; past that each node went
// through its allocator's slow path: a tenth of the checks' thread on MobileNet-v2 under
// graphturbo (docs/timing.md, "Where the time goes").
// Contract: a std::allocator that serves single objects from a cache of at most kNodeCacheMax
// freed ones per thread and type (last freed, first served); anything else, and a node freed
// when the cache is full, goes to operator new and delete. Nodes are separate blocks of operator
// new, so one allocated by one thread may be freed by another; each thread frees the nodes left
// in its cache when it exits. No state: every instance is equal to every other.
#ifndef GS_NODE_CACHE_H
#define GS_NODE_CACHE_H

#include <cstddef>
#include <new>
#include <vector>

static const size_t kNodeCacheMax = 1 << 14;

template <class T> struct NodeCache {
  using value_type = T;
  NodeCache() noexcept = default;
  template <class U> NodeCache(const NodeCache<U> &) noexcept {}

  T *allocate(size_t n) {
    if (n == 1) {
      std::vector<void *> &c = cache();
      if (!c.empty()) {
        void *p = c.back();
        c.pop_back();
        return static_cast<T *>(p);
      }
    }
    return static_cast<T *>(::operator new(n * sizeof(T)));
  }

  void deallocate(T *p, size_t n) noexcept {
    if (n == 1) {
      std::vector<void *> &c = cache();
      if (c.size() < c.capacity()) {  // room kept at the start: push_back cannot throw here
        c.push_back(p);
        return;
      }
    }
    ::operator delete(p);
  }

 private:
  struct Cache {
    std::vector<void *> v;
    Cache() { v.reserve(kNodeCacheMax); }
    ~Cache() {
      for (void *p : v) ::operator delete(p);
    }
  };
  static std::vector<void *> &cache() {
    thread_local Cache c;
    return c.v;
  }
};

template <class T, class U> bool operator==(const NodeCache<T> &, const NodeCache<U> &) { return true; }
template <class T, class U> bool operator!=(const NodeCache<T> &, const NodeCache<U> &) { return false; }

#endif
