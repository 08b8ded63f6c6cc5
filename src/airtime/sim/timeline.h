// A replay's allocation and queue over time, in a bounded number of points: the time since
// the start is cut into equal intervals (from one minute); when there would be more than
// `max_points`, neighbouring intervals merge in pairs and the interval doubles. Each interval
// keeps exact integer sums, so the points are the same whatever the order of the cuts and
// merging loses nothing but resolution. Memory: O(max_points). Not thread-safe; one per run.
#pragma once

#include <cstdint>
#include <vector>

#include "airtime/base/time.h"

namespace airtime {

struct TimelinePoint {
  TimeMs start = 0;        // the interval's start
  DurationMs covered = 0;  // how much of it the replay covered (the last one may be short)
  double allocation = 0;   // held milli-GPU-time / installed milli-GPU-time over it
  double waiting = 0;      // workloads waiting, averaged over it
};

class Timeline {
 public:
  explicit Timeline(size_t max_points = 200, DurationMs first_step = kMinute);

  // Accounts [from, to): `held_milli` of `installed_milli` milli-GPUs held by work and
  // `waiting` workloads in the queue throughout. Calls come in time order; from < to.
  void Add(TimeMs from, TimeMs to, int64_t held_milli, int64_t installed_milli, int64_t waiting);

  std::vector<TimelinePoint> Points() const;
  DurationMs step() const { return step_; }

 private:
  struct Bin {
    int64_t held = 0, installed = 0;  // milli-GPU-ms
    int64_t waiting = 0;              // workload-ms
    DurationMs covered = 0;
  };
  void Coarsen();

  size_t max_points_;
  DurationMs step_;
  std::vector<Bin> bins_;
};

}  // namespace airtime
