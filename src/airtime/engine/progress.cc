#include "airtime/engine/progress.h"

#include <algorithm>
#include <cmath>

namespace airtime {

TimeMs SegmentEnd(const WorkloadSpec& spec, const RunSegment& seg) {
  if (spec.is_service() || seg.speed <= 0) return kNever;
  const double remaining = std::max(0.0, spec.work_seconds - seg.work_at_start);
  const auto run = static_cast<DurationMs>(std::ceil(remaining / seg.speed * kSecond));
  return seg.start + seg.overhead + std::max<DurationMs>(run, 1);
}

StopOutcome StopSegment(const WorkloadSpec& spec, const RunSegment& seg, TimeMs at) {
  StopOutcome out;
  out.work_saved = seg.work_at_start;
  const DurationMs wall = std::max<DurationMs>(0, at - seg.start);
  const DurationMs running = std::max<DurationMs>(0, wall - seg.overhead);
  if (spec.checkpoint_interval > 0 && running > 0) {
    const DurationMs kept = running / spec.checkpoint_interval * spec.checkpoint_interval;
    out.work_saved = std::min(spec.work_seconds, seg.work_at_start + ToSeconds(kept) * seg.speed);
    // The overhead that led to kept progress counts as kept too.
    out.kept_ms = kept > 0 ? kept + std::min(seg.overhead, wall) : 0;
  }
  out.lost_ms = wall - out.kept_ms;
  return out;
}

}  // namespace airtime
