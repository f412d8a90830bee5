/* fuzz_onnx.c — libFuzzer target for the ONNX importer (sched/onnx_*.c): any byte string is
 * unpacked and imported; the importer must return a graph or report an error, never crash,
 * leak or exit. An imported graph is also inferred at batch 2 and costed, like the CLI does.
 * Seeds: the fixtures of tests/onnx/make_fixtures.py. Build and run (clang):
 *   clang -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -Isched -Ibuild/gen -o build/fuzz/fuzz_onnx tests/fuzz/fuzz_onnx.c sched/[a-z]*.c \
 *     build/gen/onnx/onnx.pb-c.c -lprotobuf-c -linih -lz -lm
 *   /usr/bin/python3 tests/onnx/make_fixtures.py build/fuzz/onnx_corpus
 *   build/fuzz/fuzz_onnx -max_total_time=60 build/fuzz/onnx_corpus
 */
#include <stdio.h>

#include "onnx_imp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  GsDiag d;
  diag_init(&d);
  d.out = devnull;
  GsGraph *g = ox_import_bytes("fuzz.onnx", data, size, &d);
  if (!g) return 0;
  if (graph_infer(g, 2, &d) == 0)
    for (int i = 0; i < g->nops; i++) (void)graph_op_cost(g, i);
  graph_free(g);
  return 0;
}
