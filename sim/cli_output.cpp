// cli_output.cpp — where a mode's output goes: rendered into memory first, then written
// atomically to -o FILE (util_write_file_atomic: a failed run leaves no partial file) or to stdout.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.h"

extern "C" {
#include "util.h"
}

int cli_write_output(const char *path, const std::function<void(FILE *)> &print) {
  char *buf = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) die("open_memstream failed");
  print(f);
  fclose(f);
  int rc = GS_EXIT_OK;
  if (!path) {
    fwrite(buf, 1, len, stdout);
  } else if (util_write_file_atomic(path, buf, len) != 0) {
    fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
    rc = GS_EXIT_INPUT;
  }
  free(buf);
  return rc;
}
