// trace.cpp — the two recorders. Both write to `PATH.tmp.PID` while the simulation runs (one
// line per event, nothing kept in memory) and rename to PATH when the run ends, so a failed or
// interrupted run never leaves a truncated file under the final name (a device or FIFO PATH is
// written directly).
//   .gtt.gz  — line-oriented text through zlib's gzwrite (traces/README.md)
//   .json    — Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing): by default a slice
//              per queue and barrier episode, named by the task the episode ends (a kernel, a
//              graphturbo instance's kernel), so a batch-64 run stays a few MB; per instruction
//              on request; DDR and interconnect bandwidth counters per episode either way.
// Both keep only the cycles of the TraceView's window, slices clipped to it.
#include "trace.h"
#include "util.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

namespace {

// The file written during the run: PATH.tmp.PID, or PATH itself when it is a device or a FIFO
// (util_write_in_place), which is written directly and never replaced or removed. A temporary
// is tracked (util_tmp_track) until published or discarded: SIGINT/SIGTERM remove it.
std::string tmp_name(const char *path) {
  if (util_write_in_place(path)) return path;
  char *name = util_tmp_name(path);
  std::string tmp = name;
  free(name);
  util_tmp_track(tmp.c_str());
  return tmp;
}

// Moves the finished temporary over PATH (nothing to do when written in place); false on failure.
bool publish(const std::string &tmp, const std::string &path) {
  if (tmp == path) return true;
  bool ok = rename(tmp.c_str(), path.c_str()) == 0;
  if (ok) util_tmp_untrack(tmp.c_str());
  return ok;
}

// Removes an unfinished temporary (never a device written in place).
void discard(const std::string &tmp, const std::string &path) {
  if (tmp == path) return;
  unlink(tmp.c_str());
  util_tmp_untrack(tmp.c_str());
}

// Clips [*s, *e] to the view's window; false when nothing of it is inside.
bool clip(const TraceView &v, double *s, double *e) {
  if ((v.to >= 0 && *s >= v.to) || *e < v.from) return false;
  *s = std::max(*s, v.from);
  if (v.to >= 0) *e = std::min(*e, v.to);
  return *e >= *s;
}

bool inside(const TraceView &v, double t) { return t >= v.from && (v.to < 0 || t < v.to); }

class GttRecorder : public SimRecorder {
 public:
  GttRecorder(gzFile f, std::string path, std::string tmp, TraceView v)
      : f_(f), path_(std::move(path)), tmp_(std::move(tmp)), v_(std::move(v)) {}
  ~GttRecorder() override {
    if (f_) {
      gzclose(f_);
      discard(tmp_, path_);
    }
  }
  void buffer(int id, const std::string &name, int64_t cap) override {
    gzprintf(f_, "buffer %d %s %lld\n", id, name.c_str(), (long long)cap);
  }
  void queue(int id, const std::string &name) override { gzprintf(f_, "queue %d %s\n", id, name.c_str()); }
  void occupancy(double cycle, int buf, int64_t bytes) override {
    if ((size_t)buf >= last_.size()) last_.resize((size_t)buf + 1, -1);
    if (!inside(v_, cycle)) {
      last_[(size_t)buf] = bytes;  // written at the window's start (gtt readers step-plot)
      return;
    }
    if (!entered_) enter();
    gzprintf(f_, "o %.10g %d %lld\n", cycle, buf, (long long)bytes);
  }
  void activity(int q, double start, double end, const char *what, size_t idx) override {
    if (!clip(v_, &start, &end)) return;
    if (!entered_) enter();
    gzprintf(f_, "a %.10g %.10g %d %s %zu\n", start, end, q, what, idx);
  }
  bool finish(uint64_t cycles, std::string *err) override {
    gzprintf(f_, "end %llu\n", (unsigned long long)cycles);
    int rc = gzclose(f_);
    f_ = nullptr;
    if (rc != Z_OK || !publish(tmp_, path_)) {
      *err = path_ + ": error: cannot write the trace: " + strerror(errno);
      discard(tmp_, path_);
      return false;
    }
    return true;
  }

 private:
  // The first event inside the window: the occupancy each buffer had when it opened.
  void enter() {
    entered_ = true;
    for (size_t b = 0; b < last_.size(); b++)
      if (last_[b] >= 0) gzprintf(f_, "o %.10g %zu %lld\n", v_.from, b, (long long)last_[b]);
  }
  gzFile f_;
  std::string path_, tmp_;
  TraceView v_;
  std::vector<int64_t> last_;  // per buffer: the occupancy before the window, -1: none
  bool entered_ = false;
};

class PerfettoRecorder : public SimRecorder {
 public:
  PerfettoRecorder(FILE *f, std::string path, std::string tmp, double mhz, TraceView v)
      : f_(f), path_(std::move(path)), tmp_(std::move(tmp)), us_per_cycle_(1.0 / mhz),
        gbps_per_byte_per_cycle_(mhz / 1000.0), v_(std::move(v)) {
    fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", f_);
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"gtsim\"}}", f_);
  }
  ~PerfettoRecorder() override {
    if (f_) {
      fclose(f_);
      discard(tmp_, path_);
    }
  }
  void buffer(int id, const std::string &name, int64_t) override {
    if ((size_t)id >= bufs_.size()) bufs_.resize((size_t)id + 1);
    bufs_[(size_t)id] = name;
  }
  void queue(int id, const std::string &name) override {
    fprintf(f_, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"args\": {\"name\": \"%s\"}}",
            id + 1, name.c_str());
    fprintf(f_, ",\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"args\": {\"sort_index\": %d}}",
            id + 1, id);
    if ((size_t)id >= agg_.size()) agg_.resize((size_t)id + 1);
  }
  void occupancy(double cycle, int buf, int64_t bytes) override {
    if (!inside(v_, cycle)) return;
    fprintf(f_, ",\n{\"name\": \"%s bytes\", \"ph\": \"C\", \"pid\": 1, \"ts\": %.6f, \"args\": {\"bytes\": %lld}}",
            bufs_[(size_t)buf].c_str(), cycle * us_per_cycle_, (long long)bytes);
  }
  void activity(int q, double start, double end, const char *what, size_t idx) override {
    if (!v_.instructions) {  // folded into the queue's slice of this episode
      Agg &a = agg_[(size_t)q];
      if (a.n++ == 0) a.start = start;
      a.end = std::max(a.end, end);
      a.busy += end - start;
      return;
    }
    double s = start, e = end;
    if (!clip(v_, &s, &e)) return;
    fprintf(f_, ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.6f, \"dur\": %.6f, "
            "\"args\": {\"index\": %zu, \"episode\": %zu, \"start_cycle\": %.10g, \"end_cycle\": %.10g}}",
            what, q + 1, s * us_per_cycle_, (e - s) * us_per_cycle_, idx, episode_, start, end);
  }
  void traffic(double, double, double ddr, double noc) override {
    ddr_ += ddr;
    noc_ += noc;
  }
  void episode(double cycle) override { close_episode(cycle); }
  bool finish(uint64_t cycles, std::string *err) override {
    close_episode((double)cycles);
    fprintf(f_, "\n],\n\"otherData\": {\"cycles\": %llu, \"episodes\": %zu}}\n",
            (unsigned long long)cycles, episode_);
    bool ok = !ferror(f_);
    ok = fclose(f_) == 0 && ok;
    f_ = nullptr;
    if (!ok || !publish(tmp_, path_)) {
      *err = path_ + ": error: cannot write the Perfetto trace: " + strerror(errno);
      discard(tmp_, path_);
      return false;
    }
    return true;
  }

 private:
  struct Agg {  // a queue's instructions in the current episode
    double start = 0, end = 0, busy = 0;
    uint64_t n = 0;
  };

  // The episode that ends at `cycle`: a slice per queue that ran in it, and the bandwidth
  // counters over it.
  void close_episode(double cycle) {
    std::string name = episode_ < v_.names.size() && !v_.names[episode_].empty()
                           ? v_.names[episode_]
                           : "episode " + std::to_string(episode_);
    for (size_t q = 0; q < agg_.size(); q++) {
      Agg &a = agg_[q];
      double s = a.start, e = a.end;
      if (a.n && clip(v_, &s, &e)) {
        fputs(",\n{\"name\": ", f_);
        util_json_str(f_, name.c_str());
        fprintf(f_, ", \"ph\": \"X\", \"pid\": 1, \"tid\": %zu, \"ts\": %.6f, \"dur\": %.6f, \"args\": "
                "{\"episode\": %zu, \"instructions\": %llu, \"busy_cycles\": %.10g, \"start_cycle\": %.10g, "
                "\"end_cycle\": %.10g}}", q + 1, s * us_per_cycle_, (e - s) * us_per_cycle_, episode_,
                (unsigned long long)a.n, a.busy, a.start, a.end);
      }
      a = Agg();
    }
    double s = prev_, e = cycle;
    if (clip(v_, &s, &e)) {
      double per = cycle > prev_ ? gbps_per_byte_per_cycle_ / (cycle - prev_) : 0;
      counter("DDR GB/s", s, ddr_ * per);
      counter("interconnect GB/s", s, noc_ * per);
    }
    ddr_ = noc_ = 0;
    prev_ = cycle;
    episode_++;
  }
  void counter(const char *name, double cycle, double v) {
    fprintf(f_, ",\n{\"name\": \"%s\", \"ph\": \"C\", \"pid\": 1, \"ts\": %.6f, \"args\": {\"GB/s\": %.6g}}",
            name, cycle * us_per_cycle_, v);
  }

  FILE *f_;
  std::string path_, tmp_;
  double us_per_cycle_, gbps_per_byte_per_cycle_;
  TraceView v_;
  std::vector<std::string> bufs_;
  std::vector<Agg> agg_;        // per queue id
  size_t episode_ = 0;          // episodes closed so far
  double prev_ = 0;             // the last episode's end
  double ddr_ = 0, noc_ = 0;    // bytes in the current episode
};

}  // namespace

std::unique_ptr<SimRecorder> trace_gtt_open(const char *path, double clock_mhz, const TraceView &v,
                                            std::string *err) {
  std::string tmp = tmp_name(path);
  gzFile f = gzopen(tmp.c_str(), "wb6");
  if (!f) {
    *err = std::string(path) + ": error: cannot create the trace: " + strerror(errno);
    discard(tmp, path);
    return nullptr;
  }
  gzbuffer(f, 1 << 16);
  gzprintf(f, "gtt 1 clock_mhz %.10g\n", clock_mhz);
  return std::unique_ptr<SimRecorder>(new GttRecorder(f, path, tmp, v));
}

std::unique_ptr<SimRecorder> trace_perfetto_open(const char *path, double clock_mhz,
                                                 const TraceView &v, std::string *err) {
  std::string tmp = tmp_name(path);
  FILE *f = fopen(tmp.c_str(), "w");
  if (!f) {
    *err = std::string(path) + ": error: cannot create the Perfetto trace: " + strerror(errno);
    discard(tmp, path);
    return nullptr;
  }
  return std::unique_ptr<SimRecorder>(new PerfettoRecorder(f, path, tmp, clock_mhz, v));
}
