// LatencyLog: latencies the daemon's loop measures, kept for /metrics and benchmarks.
//
// Each sample is one event that led to a start: the time from the moment the daemon saw
// the event (a submission committed, a process exit noticed) to the decision (the engine's
// cycle done) and to the process start (the launcher returned). Also the decision cycle's
// own duration, and the time from a start's decision to the backend accepting it (for Slurm:
// the job submitted to its nodes). Bounded: the newest `kKeep` samples of each series. Plain
// value type.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace airtime {

class LatencySeries {
 public:
  static constexpr size_t kKeep = 100000;
  void Add(double seconds) {
    if (samples_.size() == kKeep) samples_.pop_front();
    samples_.push_back(seconds);
    ++count_;
    sum_ += seconds;
  }
  // The q-quantile (0..1) of the kept samples; 0 when there are none.
  double Quantile(double q) const {
    if (samples_.empty()) return 0;
    std::vector<double> v(samples_.begin(), samples_.end());
    const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
  }
  const std::deque<double>& samples() const { return samples_; }
  uint64_t count() const { return count_; }  // all ever added
  double sum() const { return sum_; }

 private:
  std::deque<double> samples_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

struct LatencyLog {
  LatencySeries event_to_decision;
  LatencySeries event_to_start;
  LatencySeries cycle;
  LatencySeries submit_commit;         // submission received -> committed (answer goes out)
  LatencySeries decision_to_accepted;  // a start decided -> the actuator's Launch returned ok
};

}  // namespace airtime
