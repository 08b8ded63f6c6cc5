// Progress: how far a run gets, what a stop keeps and what it throws away.
//
// One rule for every driver: a run on GPUs of speed s (the slowest GPU of the placement)
// first pays its restart overhead (when it resumes from a checkpoint), then advances s
// reference-seconds of work per second. The speed may change during the run (work sharing
// its GPU came or went: see model/interference.h); it is piecewise constant. A checkpoint
// is taken every checkpoint_interval of run time after the overhead; a stop keeps the work
// up to the last checkpoint and loses the rest. Pure functions.
#pragma once

#include <utility>
#include <vector>

#include "airtime/base/time.h"
#include "airtime/model/workload.h"

namespace airtime {

struct RunSegment {
  TimeMs start = 0;
  DurationMs overhead = 0;   // restart cost paid before progress resumes
  double speed = 1.0;        // reference-seconds of work per second, from the start
  double work_at_start = 0;  // work already saved when the segment began
  // Later speeds: (from, speed), in time order, all after `start`.
  std::vector<std::pair<TimeMs, double>> speed_changes;

  // The speed at `t` (the last change at or before it).
  double SpeedAt(TimeMs t) const;
};

// Reference-seconds of work the segment did by `t`, beyond work_at_start (0 before the
// overhead ends).
double SegmentWork(const RunSegment& seg, TimeMs t);

// When the segment finishes the spec's work (kNever for services or zero speed).
TimeMs SegmentEnd(const WorkloadSpec& spec, const RunSegment& seg);

struct StopOutcome {
  double work_saved = 0;   // work kept (reference-seconds), including work_at_start
  DurationMs kept_ms = 0;  // wall time of the segment whose progress is kept
  DurationMs lost_ms = 0;  // wall time of the segment thrown away (incl. the overhead)
};

// Stopping the segment at `at` (preemption or failure).
StopOutcome StopSegment(const WorkloadSpec& spec, const RunSegment& seg, TimeMs at);

}  // namespace airtime
