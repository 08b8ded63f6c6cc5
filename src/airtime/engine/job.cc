#include "airtime/engine/job.h"

#include <algorithm>

namespace airtime {

const char* JobPhaseName(JobPhase p) {
  switch (p) {
    case JobPhase::kPending:
      return "pending";
    case JobPhase::kRunning:
      return "running";
    case JobPhase::kDone:
      return "done";
    case JobPhase::kCancelled:
      return "cancelled";
  }
  return "?";
}

const char* WaitReasonName(WaitReason r) {
  switch (r) {
    case WaitReason::kNone:
      return "none";
    case WaitReason::kNoFit:
      return "no-fit";
    case WaitReason::kBehindHead:
      return "behind-head";
    case WaitReason::kNoSuchHardware:
      return "no-such-hardware";
    case WaitReason::kTooLarge:
      return "too-large";
    case WaitReason::kPolicy:
      return "policy";
    case WaitReason::kBackoff:
      return "backoff";
  }
  return "?";
}

double ValueDensity(const WorkloadSpec& spec, const GpuCatalog& catalog) {
  const double gpus = std::max(1e-3, static_cast<double>(spec.shape.TotalMilli(catalog)) / 1000.0);
  if (spec.is_service()) {
    // Value of one replica-hour at full load.
    return spec.value.per_1k_requests * spec.realtime.capacity_rps * 3.6 / gpus;
  }
  const double hours = std::max(1.0 / 3600, spec.work_seconds / 3600.0);
  return spec.value.on_completion / (hours * gpus);
}

TimeMs EndIfStartedAt(const Job& job, TimeMs now, double speed) {
  if (job.is_service()) return kNever;
  RunSegment seg;
  seg.start = now;
  seg.overhead = job.work_saved > 0 ? job.s().restart_cost : 0;
  seg.speed = speed;
  seg.work_at_start = job.work_saved;
  return SegmentEnd(job.s(), seg);
}

}  // namespace airtime
