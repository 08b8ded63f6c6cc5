// ClassCurves: the demand of each request class of a service with model variants, rebuilt
// from what a daemon's store keeps of it, for `airtime sim --from-data` (from_data.h).
//
// The daemon stores, for each member of such a service, its own demand (the sum of the
// classes it serves by default, RealtimeProfile::OwnDemand; for a service of one class, that
// class's rate), and each class's rate with its last one (Store::SetClassDemand), each as a
// history of steps (at most two per 10 s: the highest rate of a step's reports, then the
// last; DemandRecorder; from_data.cc adds the last report after the newest step). A class that its
// default member serves alone has its whole history in that member's rows. Classes that share a
// default member have their own steps since the store kept them (schema version 7); before that,
// only their sum: each is at its last rate from its last report on, and before that what the sum
// leaves is split among the classes not yet at theirs, in proportion to those rates (equally when
// they are all 0). The sum is always what was recorded.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "airtime/base/time.h"
#include "airtime/model/workload.h"

namespace airtime {

// (wall-clock ms, requests/s) points, sorted by time.
using WallCurve = std::vector<std::pair<TimeMs, double>>;

struct ClassCurves {
  std::vector<WallCurve> classes;  // one per class of the service, on the wall clock
  // The latest report at which two or more classes' rates were estimated (0: none was), and
  // the classes estimated then.
  TimeMs estimated_until = 0;
  std::vector<int> estimated;
};

// `rt`: a member's profile as submitted (its classes' curves relative to the submission),
// `submitted_at` the submission's wall-clock time. `history`: each member's stored demand,
// by variant index (members missing from it have none). `last`: each class's last rate
// (time, rps), by class index. `steps`: each class's recorded rates, by class index, sorted
// by time. Each class starts at its curve's value at the submission, as the daemon's engine
// took it when the service arrived.
ClassCurves RebuildClassCurves(const RealtimeProfile& rt, TimeMs submitted_at,
                               const std::map<int, WallCurve>& history,
                               const std::map<int, std::pair<TimeMs, double>>& last,
                               const std::map<int, WallCurve>& steps = {});

}  // namespace airtime
