// stats.cpp — the stats registry and its printers (text for people, JSON for tools).
// Invariant: printing never changes values; numbers print with %.17g in JSON (exact round trip)
// and as integers in text when they are whole, so two identical runs print identical bytes.
#include <cmath>
#include <cstring>

#include "sim.h"

extern "C" {
#include "util.h"
}

void SimStats::add(const std::string &name, const char *unit, const char *desc, double value) {
  stats_.push_back({name, unit, desc, value});
}

const SimStat *SimStats::find(const std::string &name) const {
  for (const SimStat &s : stats_)
    if (s.name == name) return &s;
  return nullptr;
}

double SimStats::get(const std::string &name) const {
  const SimStat *s = find(name);
  return s ? s->value : 0;
}

static void print_value(FILE *out, double v) {
  if (std::fabs(v) < 9e15 && v == std::floor(v)) fprintf(out, "%.0f", v);
  else fprintf(out, "%.6g", v);
}

void SimStats::print_text(FILE *out) const {
  size_t w = 0;
  for (const SimStat &s : stats_) w = std::max(w, s.name.size());
  for (const SimStat &s : stats_) {
    fprintf(out, "%-*s ", (int)w, s.name.c_str());
    print_value(out, s.value);
    fprintf(out, " %s  # %s\n", s.unit.c_str(), s.desc.c_str());
  }
}

void SimStats::print_json(FILE *out) const {
  fputs("{\"stats\": [", out);
  for (size_t i = 0; i < stats_.size(); i++) {
    const SimStat &s = stats_[i];
    fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
    util_json_str(out, s.name.c_str());
    fputs(", \"unit\": ", out);
    util_json_str(out, s.unit.c_str());
    fputs(", \"desc\": ", out);
    util_json_str(out, s.desc.c_str());
    if (std::isfinite(s.value)) fprintf(out, ", \"value\": %.17g}", s.value);
    else fputs(", \"value\": null}", out);
  }
  fputs("\n]}\n", out);
}

// RFC 4180 field: quoted when it holds a comma, quote or newline.
static void csv_field(FILE *out, const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos) {
    fputs(s.c_str(), out);
    return;
  }
  fputc('"', out);
  for (char c : s) {
    if (c == '"') fputc('"', out);
    fputc(c, out);
  }
  fputc('"', out);
}

void SimStats::print_csv(FILE *out) const {
  fputs("name,value,unit,desc\n", out);
  for (const SimStat &s : stats_) {
    csv_field(out, s.name);
    fprintf(out, ",%.17g,", s.value);
    csv_field(out, s.unit);
    fputc(',', out);
    csv_field(out, s.desc);
    fputc('\n', out);
  }
}
