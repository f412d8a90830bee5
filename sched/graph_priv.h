/* graph_priv.h — helpers shared by the graph_*.c and gtg_*.c files only (not a contract).
 * The dtype name/size lookups are derived from the GT_DTYPES table in arch.h, so the graph
 * library does not depend on the architecture parser being linked in. */
#ifndef GT_GRAPH_PRIV_H
#define GT_GRAPH_PRIV_H

#include <string.h>

#include "graph.h"

static inline const char *dtype_name_local(GtDtype t) {
  static const char *const names[] = {
#define X(e, n, b) n,
      GT_DTYPES(X)
#undef X
  };
  return (int)t >= 0 && t < DT_COUNT ? names[t] : "?";
}

static inline int dtype_bytes_local(GtDtype t) {
  static const int bytes[] = {
#define X(e, n, b) b,
      GT_DTYPES(X)
#undef X
  };
  return (int)t >= 0 && t < DT_COUNT ? bytes[t] : 0;
}

static inline int dtype_parse_local(const char *s, GtDtype *out) {
  for (int t = 0; t < DT_COUNT; t++)
    if (strcmp(dtype_name_local((GtDtype)t), s) == 0) {
      *out = (GtDtype)t;
      return 0;
    }
  return -1;
}

#endif
