#include "airtime/base/progress.h"

#include <unistd.h>

#include <cmath>

namespace airtime {

std::string FormatEta(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const long long s = std::llround(seconds);
  char b[32];
  if (s < 60) {
    std::snprintf(b, sizeof b, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(b, sizeof b, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(b, sizeof b, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  }
  return b;
}

std::string ProgressLine(std::string_view what, size_t done, size_t total, double elapsed_s) {
  const double share = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1;
  char b[64];
  std::snprintf(b, sizeof b, ": %zu/%zu runs (%.0f%%), ", done, total, 100 * share);
  std::string line = std::string(what) + b + FormatEta(elapsed_s) + " elapsed, ";
  if (done == 0) return line + "left unknown";
  const double left =
      elapsed_s / static_cast<double>(done) * static_cast<double>(total > done ? total - done : 0);
  return line + "about " + FormatEta(left) + " left";
}

bool IsTerminal(std::FILE* stream) { return stream != nullptr && isatty(fileno(stream)) == 1; }

Progress::Progress(std::string what, size_t total, std::FILE* out, bool enabled)
    : what_(std::move(what)), total_(total), out_(out), enabled_(enabled && out != nullptr) {
  std::lock_guard<std::mutex> lock(mu_);
  Draw();
}

Progress Progress::ForStderr(std::string what, size_t total) {
  return Progress(std::move(what), total, stderr, IsTerminal(stderr));
}

Progress::Progress(Progress&& o) noexcept
    : what_(std::move(o.what_)),
      total_(o.total_),
      out_(o.out_),
      enabled_(o.enabled_),
      start_(o.start_),
      done_(o.done_),
      drawn_(o.drawn_) {
  o.enabled_ = false;
  o.drawn_ = false;
}

Progress::~Progress() { Clear(); }

void Progress::Step() {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  Draw();
}

void Progress::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);  // back to the line's start, erase it
  std::fflush(out_);
  drawn_ = false;
}

void Progress::Redraw() {
  std::lock_guard<std::mutex> lock(mu_);
  Draw();
}

size_t Progress::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

void Progress::Draw() {
  if (!enabled_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(out_, "\r\033[K%s", ProgressLine(what_, done_, total_, elapsed).c_str());
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace airtime
