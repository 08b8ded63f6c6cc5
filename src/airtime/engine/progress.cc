#include "airtime/engine/progress.h"

#include <algorithm>
#include <cmath>

namespace airtime {

double RunSegment::SpeedAt(TimeMs t) const {
  double s = speed;
  for (const auto& [from, v] : speed_changes) {
    if (from > t) break;
    s = v;
  }
  return s;
}

double SegmentWork(const RunSegment& seg, TimeMs t) {
  TimeMs from = seg.start + seg.overhead;
  if (t <= from) return 0;
  double work = 0, speed = seg.speed;
  for (const auto& [at, v] : seg.speed_changes) {
    if (at >= t) break;
    if (at > from) {
      work += ToSeconds(at - from) * speed;
      from = at;
    }
    speed = v;
  }
  return work + ToSeconds(t - from) * speed;
}

TimeMs SegmentEnd(const WorkloadSpec& spec, const RunSegment& seg) {
  if (spec.is_service()) return kNever;
  double remaining = std::max(0.0, spec.work_seconds - seg.work_at_start);
  TimeMs from = seg.start + seg.overhead;
  double speed = seg.speed;
  // Walk the pieces: each runs at its speed until the next change.
  for (size_t i = 0; i <= seg.speed_changes.size(); ++i) {
    const TimeMs until = i < seg.speed_changes.size() ? seg.speed_changes[i].first : kNever;
    if (until != kNever && until <= from) {
      speed = seg.speed_changes[i].second;
      continue;
    }
    if (speed > 0) {
      const DurationMs run = SaturatedMs(std::ceil(remaining / speed * kSecond));
      // An end past any time a TimeMs holds (work of 1e17 s, a speed of 1e-12) is never.
      const bool ends = run < kNever && from < kNever - run;
      if (ends && (until == kNever || from + run <= until))
        return from + std::max<DurationMs>(run, 1);
      if (!ends && until == kNever) return kNever;
      remaining -= ToSeconds(until - from) * speed;
    }
    if (until == kNever) return kNever;
    from = until;
    speed = seg.speed_changes[i].second;
  }
  return kNever;
}

StopOutcome StopSegment(const WorkloadSpec& spec, const RunSegment& seg, TimeMs at) {
  StopOutcome out;
  out.work_saved = seg.work_at_start;
  const DurationMs wall = std::max<DurationMs>(0, at - seg.start);
  const DurationMs running = std::max<DurationMs>(0, wall - seg.overhead);
  if (spec.checkpoint_interval > 0 && running > 0) {
    const DurationMs kept = running / spec.checkpoint_interval * spec.checkpoint_interval;
    out.work_saved = std::min(
        spec.work_seconds, seg.work_at_start + SegmentWork(seg, seg.start + seg.overhead + kept));
    // The overhead that led to kept progress counts as kept too.
    out.kept_ms = kept > 0 ? kept + std::min(seg.overhead, wall) : 0;
  }
  out.lost_ms = wall - out.kept_ms;
  return out;
}

}  // namespace airtime
