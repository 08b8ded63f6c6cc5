// DemandRecorder: which of one service's (or one request class's) demand reports become
// steps of its stored history, so that the history grows with time, not with reports.
//
// The first report opens a step. Reports within `resolution` of the report that opened the
// newest step join it: that step takes the highest rate among them, and the last of them is
// kept aside. When a report opens the next step, the one kept aside is written first, at its
// own time, unless the step already has its rate. So a history holds at most two steps per
// `resolution` however often a tenant reports, each rate stays in it at most `resolution`
// longer than it lasted, and the rate that ended a burst of reports starts when it did.
// (The same rule as the policy's scale-down window, demand_window.h, which keeps one entry
// per resolution in memory.) The rate in force is stored apart (the workload's last demand,
// each class's last rate): a restart resumes from the newest step and that report.
// Pure value type; not thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "airtime/base/time.h"
#include "airtime/forecast/demand_window.h"
#include "airtime/model/workload.h"

namespace airtime {

struct DemandWrite {
  enum Kind { kAdd, kRaise };
  Kind kind = kAdd;  // kAdd: a new step at `at`; kRaise: the step begun at `at` takes `rps`
  TimeMs at = 0;
  double rps = 0;
};

class DemandRecorder {
 public:
  explicit DemandRecorder(DurationMs resolution = DemandWindow::kDefaultResolution)
      : resolution_(resolution) {}

  // After a restart: the newest stored step, and the last report (the rate in force) when
  // it came after that step began.
  void Resume(std::optional<DemandPoint> newest_step, std::optional<DemandPoint> last_report);
  // What to write for a report of `rps` at `at` (no earlier than the last report).
  std::vector<DemandWrite> Report(TimeMs at, double rps);

 private:
  DurationMs resolution_;
  std::optional<DemandPoint> step_;   // the newest step: when it began, its highest rate
  std::optional<DemandPoint> aside_;  // the last report that joined it
};

}  // namespace airtime
