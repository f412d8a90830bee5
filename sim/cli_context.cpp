// cli_context.cpp — the context a model run's report carries (docs/cli.md, "Report context"):
// gtsim's version, the arch and its file, the model and its file, the batch, every --set
// override, the transfer chunk size and where it came from, and per run the strategy and the
// batches per cluster. sched/report.c renders the report; this adds the context to what it
// rendered: leading columns on every CSV record (so rows from many runs concatenate into one
// table), a "context" member first in the JSON object, a closing line of the text.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"

extern "C" {
#include "util.h"
}

namespace {

std::string csv_field(const std::string &s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string json_str(const std::string &s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') q += std::string("\\") + (char)c;
    else if (c < 0x20) {
      char b[8];
      snprintf(b, sizeof b, "\\u%04x", c);
      q += b;
    } else q += (char)c;
  }
  return q + "\"";
}

// The records of a CSV text, each without its line end; a quoted field may hold newlines.
std::vector<std::string> csv_records(const std::string &csv) {
  std::vector<std::string> v;
  std::string cur;
  bool quoted = false;
  for (char c : csv) {
    if (c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) {
      v.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) v.push_back(cur);
  return v;
}

// The context's columns: the shared fields, then the per-run ones (a compare table has its
// own strategy column, so only batch_per_cluster there).
std::vector<std::string> csv_columns(const CliContext &c, bool compare) {
  std::vector<std::string> v;
  for (const CliContextField &f : c.fields) v.push_back(f.key);
  for (const CliContextField &f : c.sets) v.push_back("set:" + f.key);
  if (!compare) v.push_back("strategy");
  v.push_back("batch_per_cluster");
  return v;
}

std::vector<std::string> csv_values(const CliContext &c, bool compare, size_t run) {
  std::vector<std::string> v;
  for (const CliContextField &f : c.fields) v.push_back(f.value);
  for (const CliContextField &f : c.sets) v.push_back(f.value);
  if (!compare) v.push_back(c.runs[run].strategy);
  v.push_back(std::to_string(c.runs[run].batch_per_cluster));
  return v;
}

std::string join_csv(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &x : v) s += csv_field(x) + ",";
  return s;
}

// Every record prefixed: the header with the column names, row i with run i's values (a
// single run: every row with run 0's).
std::string apply_csv(const std::string &csv, const CliContext &c, bool compare) {
  std::vector<std::string> rec = csv_records(csv);
  if (rec.empty()) die("empty CSV report");
  if (compare && rec.size() != c.runs.size() + 1)
    die("compare CSV has %zu rows for %zu runs", rec.size() - 1, c.runs.size());
  std::string out = join_csv(csv_columns(c, compare)) + rec[0] + "\n";
  for (size_t i = 1; i < rec.size(); i++)
    out += join_csv(csv_values(c, compare, compare ? i - 1 : 0)) + rec[i] + "\n";
  return out;
}

// --batch-per-cluster auto's candidates of run r as a JSON array.
std::string json_autotune(const CliContextRun &r) {
  std::string s = "[";
  for (size_t i = 0; i < r.autotune.size(); i++) {
    const CliAutotuneRow &x = r.autotune[i];
    char b[320];
    snprintf(b, sizeof b, "%s{\"batch_per_cluster\": %lld, \"iterations\": %d, \"status\": %d, "
             "\"cycles\": %llu, \"throughput_samples_per_s\": %.9g, \"latency_s\": %.9g}",
             i ? ", " : "", x.per_cluster, x.iterations, x.status, (unsigned long long)x.cycles,
             x.throughput, x.latency_s);
    s += b;
  }
  return s + "]";
}

std::string json_context(const CliContext &c, bool compare) {
  std::string s = "\"context\": {";
  for (const CliContextField &f : c.fields)
    s += json_str(f.key) + ": " + (f.numeric ? f.value : json_str(f.value)) + ", ";
  s += "\"overrides\": {";
  for (size_t i = 0; i < c.sets.size(); i++)
    s += (i ? ", " : "") + json_str(c.sets[i].key) + ": " + json_str(c.sets[i].value);
  s += "}, ";
  std::string st, bpc;
  for (size_t i = 0; i < c.runs.size(); i++) {
    st += (i ? ", " : "") + json_str(c.runs[i].strategy);
    bpc += (i ? ", " : "") + std::to_string(c.runs[i].batch_per_cluster);
  }
  if (compare) s += "\"strategy\": [" + st + "], \"batch_per_cluster\": [" + bpc + "]";
  else s += "\"strategy\": " + st + ", \"batch_per_cluster\": " + bpc;
  if (!c.runs[0].autotune.empty()) {  // every run or none was tuned
    s += ", \"batch_per_cluster_auto\": [";
    for (size_t i = 0; i < c.runs.size(); i++) s += (i ? ", " : "") + json_autotune(c.runs[i]);
    s += "]";
  }
  return s + "}";
}

// The candidates as a table, the chosen one marked.
std::string text_autotune(const CliContextRun &r) {
  std::string s = "\nbatch per cluster, " + r.strategy + " (--batch-per-cluster auto):\n";
  char b[200];
  snprintf(b, sizeof b, "  %8s %10s %14s %12s %14s\n", "per_cl", "iterations", "cycles", "samples/s", "latency_ms");
  s += b;
  for (const CliAutotuneRow &x : r.autotune) {
    if (x.status != 0)
      snprintf(b, sizeof b, "  %8lld %10d   failed (exit %d)\n", x.per_cluster, x.iterations, x.status);
    else
      snprintf(b, sizeof b, "  %8lld %10d %14llu %12.2f %14.6f%s\n", x.per_cluster, x.iterations,
               (unsigned long long)x.cycles, x.throughput, x.latency_s * 1e3,
               x.per_cluster == r.batch_per_cluster ? "  <- chosen" : "");
    s += b;
  }
  return s;
}

std::string text_context(const CliContext &c) {
  std::string s;
  for (const CliContextRun &r : c.runs)
    if (!r.autotune.empty()) s += text_autotune(r);
  s += "\ncontext        ";
  for (const CliContextField &f : c.fields) s += " " + f.key + "=" + f.value;
  for (const CliContextField &f : c.sets) s += " set:" + f.key + "=" + f.value;
  if (c.runs.size() == 1)
    s += " strategy=" + c.runs[0].strategy + " batch_per_cluster=" + std::to_string(c.runs[0].batch_per_cluster);
  else
    for (const CliContextRun &r : c.runs)
      s += " batch_per_cluster[" + r.strategy + "]=" + std::to_string(r.batch_per_cluster);
  return s + "\n";
}

}  // namespace

CliContext cli_context(const CliOptions &o, const GsArch *a, const char *model, long long batch) {
  CliContext c;
  bool set_chunk = false;
  for (const char *s : o.sets) {
    const char *eq = strchr(s, '=');
    std::string key = eq ? std::string(s, (size_t)(eq - s)) : s, value = eq ? eq + 1 : "";
    set_chunk |= key == "chip.chunk_bytes";
    bool dup = false;
    for (CliContextField &f : c.sets)
      if (f.key == key) f.value = value, dup = true;  // the last --set of a key wins
    if (!dup) c.sets.push_back({key, value, false});
  }
  const char *chunk_src = set_chunk ? "--set" : cli_chunk_env() ? "GTSIM_CHUNK_BYTES" : "config";
  c.fields = {{"gtsim_version", cli_version(), false}, {"arch", a->name, false},
              {"arch_file", o.arch, false},         {"model", model, false},
              {"model_file", o.inputs[0], false},   {"batch", std::to_string(batch), true},
              {"chunk_bytes", std::to_string(a->chunk_bytes), true},
              {"chunk_source", chunk_src, false},
              {"transfer_model", a->transfer_model == XFER_FLOW ? "flow" : "chunk", false}};
  return c;
}

std::string cli_context_apply(const std::string &report, GsReportFormat f, bool compare,
                              const CliContext &c) {
  if (c.runs.empty() || (!compare && c.runs.size() != 1)) die("context of %zu runs", c.runs.size());
  if (f == REPORT_CSV) return apply_csv(report, c, compare);
  if (f == REPORT_TEXT) return report + text_context(c);
  size_t brace = report.find('{');
  if (brace == std::string::npos || report.find_first_not_of(" \n", 0) != brace)
    die("a JSON report that is not an object");
  return report.substr(0, brace + 1) + "\n  " + json_context(c, compare) + "," + report.substr(brace + 1);
}
