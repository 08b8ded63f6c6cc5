// Progress of a long run (airtime sim --suite, the FGD protocol's seeds) on a terminal: one
// line, redrawn in place, with the share done, the time spent and an estimate of the time
// left. Quiet when its output is not a terminal, so logs and pipes get nothing.
//
// Thread-safe: Step may be called from the worker threads of ParallelFor.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace airtime {

// A duration for a person: "45s", "3m05s", "2h07m" (negative or NaN as "?").
std::string FormatEta(double seconds);

// "suite: 12/40 runs (30%), 1m05s elapsed, about 2m32s left": the time left is the time
// spent per step so far times the steps left ("left unknown" before the first step).
std::string ProgressLine(std::string_view what, size_t done, size_t total, double elapsed_s);

// Whether `stream` is a terminal (isatty on its descriptor).
bool IsTerminal(std::FILE* stream);

class Progress {
 public:
  // Draws on `out` only when `enabled`; ForStderr draws when stderr is a terminal.
  Progress(std::string what, size_t total, std::FILE* out, bool enabled);
  static Progress ForStderr(std::string what, size_t total);
  Progress(Progress&& other) noexcept;
  ~Progress();

  // One more step done (of `total`); redraws the line.
  void Step();
  // Clears the line (also on destruction), so that other output starts on a clean line;
  // the next Step or Redraw draws it again.
  void Clear();
  void Redraw();
  size_t done() const;

 private:
  void Draw();  // under mu_

  std::string what_;
  size_t total_;
  std::FILE* out_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::mutex mu_;
  size_t done_ = 0;
  bool drawn_ = false;
};

}  // namespace airtime
