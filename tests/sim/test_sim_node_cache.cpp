// test_sim_node_cache.cpp — the checks' node allocator (sim/node_cache.h): a freed node is the
// next one handed out (last freed, first served), a map keeps its contents through it, nodes
// made on one thread may be freed on another, and a map that outlives the thread's cache (a
// thread_local map made before it) still frees its nodes. The last two are what `make asan`
// checks: a node freed twice, or written after the cache closed, is an error there.
#include <map>
#include <thread>

#include "node_cache.h"
#include "simtest.h"

using CachedMap = std::map<int64_t, int64_t, std::less<int64_t>, NodeCache<std::pair<const int64_t, int64_t>>>;

static void reuses_last_freed(void **) {
  NodeCache<double> a;
  double *x = a.allocate(1), *y = a.allocate(1);
  a.deallocate(x, 1);
  a.deallocate(y, 1);
  assert_ptr_equal(a.allocate(1), y);  // last freed, first served
  assert_ptr_equal(a.allocate(1), x);
  double *many = a.allocate(3);  // not a node: operator new
  a.deallocate(many, 3);
  a.deallocate(x, 1);
  a.deallocate(y, 1);
}

static void map_through_cache(void **) {
  CachedMap m;
  for (int round = 0; round < 3; round++) {
    for (int64_t i = 0; i < 5000; i++) m[(i * 7919) % 5000] = i + round;
    for (int64_t i = 0; i < 5000; i += 2) m.erase(i);
    assert_int_equal(m.size(), 2500);
    for (const auto &e : m) assert_int_equal(e.first % 2, 1);
    m.clear();
  }
}

static void across_threads(void **) {
  CachedMap *m = new CachedMap;
  std::thread t([m]() {
    for (int64_t i = 0; i < 20000; i++) (*m)[i] = i;  // more than the cache holds, freed below
  });
  t.join();
  assert_int_equal(m->size(), 20000);
  delete m;  // frees another thread's nodes into this thread's cache (and past it)
  std::thread u([]() {
    static thread_local CachedMap late;  // made before the thread's cache: destroyed after it
    CachedMap early;
    for (int64_t i = 0; i < 100; i++) late[i] = early[i] = i;
    early.clear();  // into the cache, which the thread frees at its exit
  });
  u.join();
}

int sc_main(int, char **) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reuses_last_freed),
      cmocka_unit_test(map_through_cache),
      cmocka_unit_test(across_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
