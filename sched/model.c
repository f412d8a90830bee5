/* model.c — model_load(): opens a model file by its extension (.gtg text or .onnx protobuf).
 * The extension decides, not the content, so a mislabelled file gets the parser's own clear
 * error instead of a guess. */
#include <string.h>

#include "graph.h"

GsGraph *model_load(const char *path, GsDiag *d) {
  if (util_has_ext(path, ".gtg")) return gtg_load(path, d);
  if (util_has_ext(path, ".onnx")) return onnx_load(path, d);
  diag_error(d, path, 0, 0, NULL, "unknown model format: expected a .gtg or .onnx file");
  return NULL;
}
