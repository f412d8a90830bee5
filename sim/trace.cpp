// trace.cpp — the two recorders. Both write to `PATH.tmp.PID` while the simulation runs (one
// line per event, nothing kept in memory) and rename to PATH when the run ends, so a failed or
// interrupted run never leaves a truncated file under the final name (a device or FIFO PATH is
// written directly).
//   .gtt.gz  — line-oriented text through zlib's gzwrite (traces/README.md)
//   .json    — Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing)
#include "trace.h"
#include "util.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// The file written during the run: PATH.tmp.PID, or PATH itself when it is a device or a FIFO
// (util_write_in_place), which is written directly and never replaced or removed. A temporary
// is tracked (util_tmp_track) until published or discarded: SIGINT/SIGTERM remove it.
std::string tmp_name(const char *path) {
  if (util_write_in_place(path)) return path;
  std::string tmp = std::string(path) + ".tmp." + std::to_string(getpid());
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

class GttRecorder : public SimRecorder {
 public:
  GttRecorder(gzFile f, std::string path, std::string tmp) : f_(f), path_(std::move(path)), tmp_(std::move(tmp)) {}
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
    gzprintf(f_, "o %.10g %d %lld\n", cycle, buf, (long long)bytes);
  }
  void activity(int q, double start, double end, const char *what, size_t idx) override {
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
  gzFile f_;
  std::string path_, tmp_;
};

class PerfettoRecorder : public SimRecorder {
 public:
  PerfettoRecorder(FILE *f, std::string path, std::string tmp, double mhz)
      : f_(f), path_(std::move(path)), tmp_(std::move(tmp)), us_per_cycle_(1.0 / mhz) {
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
  }
  void occupancy(double cycle, int buf, int64_t bytes) override {
    fprintf(f_, ",\n{\"name\": \"%s bytes\", \"ph\": \"C\", \"pid\": 1, \"ts\": %.6f, \"args\": {\"bytes\": %lld}}",
            bufs_[(size_t)buf].c_str(), cycle * us_per_cycle_, (long long)bytes);
  }
  void activity(int q, double start, double end, const char *what, size_t idx) override {
    fprintf(f_, ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.6f, \"dur\": %.6f, "
            "\"args\": {\"index\": %zu, \"start_cycle\": %.10g, \"end_cycle\": %.10g}}",
            what, q + 1, start * us_per_cycle_, (end - start) * us_per_cycle_, idx, start, end);
  }
  bool finish(uint64_t cycles, std::string *err) override {
    fprintf(f_, "\n],\n\"otherData\": {\"cycles\": %llu}}\n", (unsigned long long)cycles);
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
  FILE *f_;
  std::string path_, tmp_;
  double us_per_cycle_;
  std::vector<std::string> bufs_;
};

}  // namespace

std::unique_ptr<SimRecorder> trace_gtt_open(const char *path, double clock_mhz, std::string *err) {
  std::string tmp = tmp_name(path);
  gzFile f = gzopen(tmp.c_str(), "wb6");
  if (!f) {
    *err = std::string(path) + ": error: cannot create the trace: " + strerror(errno);
    discard(tmp, path);
    return nullptr;
  }
  gzbuffer(f, 1 << 16);
  gzprintf(f, "gtt 1 clock_mhz %.10g\n", clock_mhz);
  return std::unique_ptr<SimRecorder>(new GttRecorder(f, path, tmp));
}

std::unique_ptr<SimRecorder> trace_perfetto_open(const char *path, double clock_mhz,
                                                 std::string *err) {
  std::string tmp = tmp_name(path);
  FILE *f = fopen(tmp.c_str(), "w");
  if (!f) {
    *err = std::string(path) + ": error: cannot create the Perfetto trace: " + strerror(errno);
    discard(tmp, path);
    return nullptr;
  }
  return std::unique_ptr<SimRecorder>(new PerfettoRecorder(f, path, tmp, clock_mhz));
}
