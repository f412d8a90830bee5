// cli_output.cpp — where a mode's output goes: rendered into memory first, then written
// atomically to -o FILE (util_write_file_atomic: a failed run leaves no partial file) or to stdout;
// and the output files checked before a mode's work begins (cli_check_outputs).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/stat.h>

#include <climits>
#include <string>
#include <utility>
#include <vector>

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

// The name a regular output will have once renamed into place: its directory's real path and
// its own name, so that "x.json" and "./x.json" are one file. Empty when the directory is not
// there (util_check_writable has refused it already).
static std::string final_name(const char *path) {
  std::string p(path);
  char real[PATH_MAX];
  if (!realpath(cli_parent(p).c_str(), real)) return "";
  return std::string(real) + "/" + p.substr(p.rfind('/') + 1);  // (npos + 1: all of it)
}

static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_check_outputs(const CliOptions &o) {
  std::pair<const char *, const char *> outs[] = {
      {"-o", o.output}, {"--emit", o.emit}, {"--trace", o.trace}, {"--perfetto", o.perfetto}};
  std::vector<const char *> ins(o.inputs.begin(), o.inputs.end());
  for (const char *in : {o.arch, o.convert, o.disasm})
    if (in) ins.push_back(in);
  std::vector<std::pair<std::string, const char *>> seen;  // final names of regular outputs
  for (auto &[opt, path] : outs) {
    bool converted = o.convert && path == o.output;  // --convert's -o: "-" is stdout
    if (!path || (converted && strcmp(path, "-") == 0)) continue;
    if (util_check_writable(path) != 0) {
      fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
      return GS_EXIT_INPUT;
    }
    for (const char *in : ins)  // --convert reads its model whole first: it may rewrite it
      if (!(converted && in == o.convert) && same_file(path, in)) {
        fprintf(stderr, "%s: error: %s would replace the input %s: give another output path\n",
                path, opt, in);
        return GS_EXIT_INPUT;
      }
    if (util_write_in_place(path)) continue;  // /dev/null may take several outputs
    std::string name = final_name(path);
    for (auto &[other, other_opt] : seen)
      if (other == name) {
        fprintf(stderr, "%s: error: given to both %s and %s: give each output its own path\n",
                path, other_opt, opt);
        return GS_EXIT_INPUT;
      }
    seen.emplace_back(name, opt);
  }
  return GS_EXIT_OK;
}
