// SloBooks: a realtime service's error budget, booked cycle by cycle. Its requests and those
// served within the SLO since it was first seen, and the rates (demand, and what its ready
// replicas serve of it) that hold from the last cycle until the next. ForecastScale keeps one
// per plain service, VariantMix one per service with variants.
#pragma once

#include <algorithm>

#include "airtime/base/time.h"

namespace airtime {

struct SloBooks {
  TimeMs since = 0;
  double demand_rps = 0, served_rps = 0;  // from `since` on
  double requests = 0, in_slo = 0;        // until `since`

  // Books [since, now) at the rates from `since` on; `since` becomes `now` (the caller then
  // sets the rates that hold from now on).
  void Advance(TimeMs now) {
    const double dt = static_cast<double>(std::max<TimeMs>(0, now - since)) / 1000.0;
    requests += demand_rps * dt;
    in_slo += served_rps * dt;
    since = std::max(since, now);
  }
  // in_slo - target x requests, up to `now`: the requests the service may still miss and
  // meet `target` (< 0: below it).
  double Over(TimeMs now, double target) const {
    const double dt = static_cast<double>(std::max<TimeMs>(0, now - since)) / 1000.0;
    return in_slo + served_rps * dt - target * (requests + demand_rps * dt);
  }
};

}  // namespace airtime
