/* model.c — model_load(): opens a model file by its extension (.gtg text or .onnx protobuf).
 * The extension decides, not the content, so a mislabelled file gets the parser's own clear
 * error instead of a guess. */
#include <string.h>
#include <strings.h>

#include "graph.h"

static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  return n > e && strcasecmp(path + n - e, ext) == 0;
}

GtGraph *model_load(const char *path, GtDiag *d) {
  if (has_ext(path, ".gtg")) return gtg_load(path, d);
  if (has_ext(path, ".onnx")) return onnx_load(path, d);
  diag_error(d, path, 0, 0, NULL, "unknown model format: expected a .gtg or .onnx file");
  return NULL;
}
