// cli_progress.cpp — gtsim's progress line on stderr (docs/cli.md, "Progress and timing on
// stderr"). Contract:
//   - cli_progress_setup(mode) decides once per process where progress goes: with mode 0 (no
//     option) to stderr when it is a terminal, else nowhere; --progress (1) forces it on,
//     --no-progress (-1) off. Nothing here ever writes to stdout, so reports are unaffected.
//   - On a terminal the line is rewritten in place ("\r", erase to the end of the line) and
//     erased when its stage ends; on anything else (forced on) every update is a line of its
//     own and nothing is erased, so a log keeps the figures.
//   - cli_progress_stage(fmt, ...) shows a stage ("scheduling X ..."); null erases it.
//   - CliSimProgress covers one simulation: it installs SimOptions::progress (left empty when
//     progress is off, so the simulator does not even call it), which the simulator calls every
//     4096 executed instructions; each call reads the clock once and prints at most every
//     half second: percentage, elapsed time and the time left at the rate so far, or with an
//     unknown total (0) the instructions done and the rate. finish() prints the last figures
//     (100% when every instruction ran) and erases the line on a terminal.
#include <unistd.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <string>

#include "cli.h"
#include "sim.h"

enum { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_LINES };
static int where = PROGRESS_OFF;

static constexpr double kInterval = 0.5;  // seconds between two updates, at least

void cli_progress_setup(int mode) {
  bool tty = isatty(STDERR_FILENO) == 1;
  where = mode < 0 ? PROGRESS_OFF : tty ? PROGRESS_TTY : mode > 0 ? PROGRESS_LINES : PROGRESS_OFF;
}

bool cli_progress_on() { return where != PROGRESS_OFF; }

double cli_wall_seconds() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

std::string cli_thread_times(const SimResult &r) {
  char b[96];
  if (r.checks_cpu_s < 0) snprintf(b, sizeof b, "processor time: model %.3f s with the checks", r.model_cpu_s);
  else snprintf(b, sizeof b, "processor time: model %.3f s, checks %.3f s", r.model_cpu_s, r.checks_cpu_s);
  return b;
}

std::string cli_sim_timing(const SimResult &r, const GsProgram *p, double seconds) {
  char b[160];
  double held = (double)prog_code_bytes(p);
  snprintf(b, sizeof b, "simulate %.3f s, %llu instructions, %.1f MiB held (%.2f B each); ", seconds,
           (unsigned long long)r.instructions, held / 1048576.0,
           held / (double)(r.instructions ? r.instructions : 1));
  return b + cli_thread_times(r) + "; checks " + r.checks;
}

static void vshow(const char *fmt, va_list ap) {
  if (where == PROGRESS_TTY) fputs("\r\033[K", stderr);
  if (fmt) {
    vfprintf(stderr, fmt, ap);
    if (where == PROGRESS_LINES) fputc('\n', stderr);
  }
  fflush(stderr);
}

void cli_progress_stage(const char *fmt, ...) {
  if (where == PROGRESS_OFF || (!fmt && where == PROGRESS_LINES)) return;
  va_list ap;
  va_start(ap, fmt);
  vshow(fmt, ap);
  va_end(ap);
}

// "1234", "56.7 k", "16.0 M": an instruction count, short.
static std::string count_text(double n) {
  char b[32];
  if (n < 1e4) snprintf(b, sizeof b, "%.0f", n);
  else if (n < 1e6) snprintf(b, sizeof b, "%.1f k", n / 1e3);
  else snprintf(b, sizeof b, "%.1f M", n / 1e6);
  return b;
}

// "0.4 s", "12 s", "3m05s", "2h07m": a duration, short.
static std::string time_text(double s) {
  char b[32];
  long long t = (long long)(s + 0.5);
  if (s < 10) snprintf(b, sizeof b, "%.1f s", s);
  else if (t < 60) snprintf(b, sizeof b, "%lld s", t);
  else if (t < 3600) snprintf(b, sizeof b, "%lldm%02llds", t / 60, t % 60);
  else snprintf(b, sizeof b, "%lldh%02lldm", t / 3600, t / 60 % 60);
  return b;
}

CliSimProgress::CliSimProgress(const char *who, uint64_t total, SimOptions *so)
    : who_(who), total_(total), t0_(cli_wall_seconds()), shown_(t0_) {
  if (!cli_progress_on()) return;
  if (total_) cli_progress_stage("gtsim: %s: simulating %s instructions ...", who, count_text((double)total_).c_str());
  else cli_progress_stage("gtsim: %s: simulating ...", who);
  so->progress = [this](uint64_t done, uint64_t) { update(done, false); };
}

void CliSimProgress::update(uint64_t done, bool last) {
  double now = cli_wall_seconds(), el = now - t0_;
  if (!last && now - shown_ < kInterval) return;
  shown_ = now;
  if (total_ == 0) {
    cli_progress_stage("gtsim: %s: simulating: %s instructions done, %s/s, %s elapsed", who_.c_str(),
                       count_text((double)done).c_str(), count_text((double)done / (el > 0 ? el : 1e-9)).c_str(),
                       time_text(el).c_str());
    return;
  }
  double pct = 100.0 * (double)done / (double)total_;
  std::string tot = count_text((double)total_);
  if (last || done >= total_) {
    cli_progress_stage("gtsim: %s: simulating %s instructions: %.0f%%, %s elapsed", who_.c_str(),
                       tot.c_str(), pct, time_text(el).c_str());
    return;
  }
  double left = el * (double)(total_ - done) / (double)(done ? done : 1);
  cli_progress_stage("gtsim: %s: simulating %s instructions: %.0f%%, %s elapsed, about %s left",
                     who_.c_str(), tot.c_str(), pct < 99 ? pct : 99, time_text(el).c_str(), time_text(left).c_str());
}

void CliSimProgress::finish(uint64_t done) {
  if (!cli_progress_on()) return;
  update(done, true);
  cli_progress_stage(nullptr);
}
