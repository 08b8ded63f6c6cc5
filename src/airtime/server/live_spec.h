// LiveSpec: a workload spec as submitted (times relative to its submission, as in a
// scenario file) placed on the daemon's wall clock.
#pragma once

#include <memory>

#include "airtime/base/time.h"
#include "airtime/model/workload.h"

namespace airtime {

// Shifts submit_at, the deadline and the demand curves (a member's classes' too) so that
// the spec's time 0 is `submitted_at` (ms since the epoch). A scenario's submit_at offset is
// ignored: the daemon runs work when it is submitted.
inline std::shared_ptr<const WorkloadSpec> LiveSpec(WorkloadSpec spec, TimeMs submitted_at) {
  const TimeMs shift = submitted_at - spec.submit_at;
  if (spec.deadline) *spec.deadline += shift;
  for (DemandPoint& p : spec.realtime.demand) p.at += submitted_at;
  for (RequestClass& c : spec.realtime.classes)
    for (DemandPoint& p : c.demand) p.at += submitted_at;
  spec.submit_at = submitted_at;
  return std::make_shared<const WorkloadSpec>(std::move(spec));
}

}  // namespace airtime
