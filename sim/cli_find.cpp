// cli_find.cpp — names of architecture configs and models: `--arch ascend910` and the model
// argument `resnet50` resolve through a search path, with or without their extension, so the
// shipped configs and zoo work from any directory (docs/cli.md, "Names and the search path").
//
// A name with a '/' is a path: only that file (or it with an extension added) is tried, and
// when neither exists the loader's own "cannot read" error names it. A bare
// name is looked for in, in order: the current directory; every directory of GTSIM_PATH
// (colon-separated) and its configs/ or workloads/; the installed share directory (the
// executable's ../share/gtsim/configs or /workloads, so `make install PREFIX=DIR` needs no
// configuration and survives a move of DIR); the source tree's configs/ or workloads/ (its
// path compiled in, GTSIM_SRCDIR). An unknown name is exit 1 listing the close matches.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cli.h"

extern "C" {
#include "util.h"
}

#ifndef GTSIM_SRCDIR
#define GTSIM_SRCDIR ""
#endif

namespace {

struct Kind {
  const char *what;                  // how messages name it
  const char *subdir;                // where the share and source trees keep it
  std::vector<std::string> exts;     // extensions tried when the name has none of them
};

const Kind &kind_of(CliFileKind k) {
  static const Kind arch{"architecture config", "configs", {".cfg"}};
  static const Kind model{"model", "workloads", {".gtg", ".onnx"}};
  return k == CLI_FIND_ARCH ? arch : model;
}

bool is_file(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

bool has_any_ext(const std::string &name, const std::vector<std::string> &exts) {
  for (const std::string &e : exts)
    if (util_has_ext(name.c_str(), e.c_str())) return true;
  return false;
}

// The directory of the running executable (/proc/self/exe, symlinks resolved), or "".
std::string exe_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  char *real = realpath(buf, nullptr);
  std::string p = real ? real : buf;
  free(real);
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash);
}

// The candidate files for `name` in directory `dir` ("" = the name as given).
std::vector<std::string> candidates(const std::string &dir, const std::string &name, const Kind &k) {
  std::string base = dir.empty() ? name : dir + "/" + name;
  std::vector<std::string> v{base};
  if (!has_any_ext(name, k.exts))
    for (const std::string &e : k.exts) v.push_back(base + e);
  return v;
}

// Levenshtein distance (names are short: a row of ints is plenty).
size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) row[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string strip_ext(const std::string &name, const Kind &k) {
  for (const std::string &e : k.exts)
    if (util_has_ext(name.c_str(), e.c_str())) return name.substr(0, name.size() - e.size());
  return name;
}

// Every name (without extension) of kind k in the search directories, sorted.
std::set<std::string> known_names(const std::vector<std::string> &dirs, const Kind &k) {
  std::set<std::string> names;
  for (const std::string &d : dirs) {
    DIR *dp = opendir(d.c_str());
    if (!dp) continue;
    while (struct dirent *e = readdir(dp)) {
      std::string n = e->d_name;
      if (has_any_ext(n, k.exts) && is_file(d + "/" + n)) names.insert(strip_ext(n, k));
    }
    closedir(dp);
  }
  return names;
}

// The known names nearest to `name` (its directory and extension stripped): within an edit
// distance of a third of its length (at least 2), or containing it, or contained in it.
std::vector<std::string> close_matches(const std::string &name, const std::set<std::string> &known) {
  std::string want = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string &n : known) {
    size_t d = edit_distance(want, n);
    bool near = d <= std::max<size_t>(2, want.size() / 3);
    bool part = want.size() >= 3 && (n.find(want) != std::string::npos || want.find(n) != std::string::npos);
    if (near || part) scored.push_back({near ? d : want.size(), n});
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> v;
  for (size_t i = 0; i < scored.size() && i < 6; i++) v.push_back(scored[i].second);
  return v;
}

}  // namespace

std::string cli_parent(const std::string &d) {
  size_t slash = d.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : d.substr(0, slash);
}

std::vector<std::string> cli_search_dirs(CliFileKind kind) {
  const Kind &k = kind_of(kind);
  std::vector<std::string> dirs{"."};
  if (const char *env = getenv("GTSIM_PATH")) {
    std::string s = env;
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t colon = s.find(':', pos);
      std::string d = s.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
      if (!d.empty()) {
        dirs.push_back(d);
        dirs.push_back(d + "/" + k.subdir);
      }
      if (colon == std::string::npos) break;
      pos = colon + 1;
    }
  }
  std::string exe = exe_dir();
  if (!exe.empty()) dirs.push_back(cli_parent(exe) + "/share/gtsim/" + k.subdir);
  if (*GTSIM_SRCDIR) dirs.push_back(std::string(GTSIM_SRCDIR) + "/" + k.subdir);
  return dirs;
}

std::string cli_find(CliFileKind kind, const char *name, const char *option) {
  const Kind &k = kind_of(kind);
  std::string n = name;
  bool path = n.find('/') != std::string::npos;
  std::vector<std::string> dirs = path ? std::vector<std::string>{""} : cli_search_dirs(kind);
  for (const std::string &d : dirs)
    for (const std::string &c : candidates(d, n, k))
      if (is_file(c)) return c;
  if (path) return n;  // the loader says why it cannot read it ("PATH: error: cannot read: ...")
  std::string exts;
  for (const std::string &e : k.exts) exts += (exts.empty() ? "" : " or ") + e;
  fprintf(stderr, "gtsim: %s%sno %s '%s'", option, *option ? ": " : "", k.what, name);
  fprintf(stderr, "\n  searched (also with %s added):", exts.c_str());
  for (const std::string &d : dirs) fprintf(stderr, " %s", d.c_str());
  std::set<std::string> known = known_names(dirs, k);
  std::vector<std::string> close = close_matches(strip_ext(n, k), known);
  fprintf(stderr, "\n  %s:", close.empty() ? "known names" : "close matches");
  if (close.empty()) close.assign(known.begin(), known.end());
  for (const std::string &c : close) fprintf(stderr, " %s", c.c_str());
  fprintf(stderr, "%s\n", close.empty() ? " (none)" : "");
  exit(GS_EXIT_INPUT);
}
