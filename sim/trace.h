// trace.h — recorders: observers the model calls at every occupancy change and every timed
// instruction. They live outside the models and stream to their files while
// the simulation runs, so memory stays bounded. Formats: traces/README.md.
#ifndef GS_TRACE_H
#define GS_TRACE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class SimRecorder {
 public:
  virtual ~SimRecorder() = default;
  // Declarations, before the run starts: buffers (id, name, capacity) and queues (id, name).
  virtual void buffer(int id, const std::string &name, int64_t capacity) = 0;
  virtual void queue(int id, const std::string &name) = 0;
  // Buffer `buf` holds `bytes` allocated bytes from `cycle` on.
  virtual void occupancy(double cycle, int buf, int64_t bytes) = 0;
  // Queue `q` executed instruction `idx` (mnemonic `what`) from `start` to `end`.
  virtual void activity(int q, double start, double end, const char *what, size_t idx) = 0;
  // A transfer from `start` to `end` moved `ddr` bytes to or from DDR and `noc` bytes over the
  // in-cluster interconnect.
  virtual void traffic(double start, double end, double ddr, double noc) {
    (void)start, (void)end, (void)ddr, (void)noc;
  }
  // A barrier episode (a chip barrier or one of cluster 0's) completed at `cycle`.
  virtual void episode(double cycle) { (void)cycle; }
  // The run ended at `cycles`: flush, close and rename into place. False + *err on I/O error.
  virtual bool finish(uint64_t cycles, std::string *err) = 0;
};

// What a trace keeps: the cycles [from, to) (to < 0: to the end); Perfetto: a slice per
// instruction or per queue and barrier episode, named by names[episode] (else "episode N").
struct TraceView {
  double from = 0, to = -1;
  bool instructions = false;
  std::vector<std::string> names;
};

// Open the recorders; nullptr + *err when the file cannot be created.
std::unique_ptr<SimRecorder> trace_gtt_open(const char *path, double clock_mhz, const TraceView &v,
                                            std::string *err);
std::unique_ptr<SimRecorder> trace_perfetto_open(const char *path, double clock_mhz,
                                                 const TraceView &v, std::string *err);

#endif
