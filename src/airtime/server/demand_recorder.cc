#include "airtime/server/demand_recorder.h"

namespace airtime {

void DemandRecorder::Resume(std::optional<DemandPoint> newest_step,
                            std::optional<DemandPoint> last_report) {
  step_ = newest_step;
  aside_.reset();
  if (step_ && last_report && last_report->at > step_->at) aside_ = last_report;
}

std::vector<DemandWrite> DemandRecorder::Report(TimeMs at, double rps) {
  std::vector<DemandWrite> writes;
  if (step_ && at - step_->at < resolution_) {
    if (rps > step_->rps) {
      step_->rps = rps;
      writes.push_back({DemandWrite::kRaise, step_->at, rps});
    }
    aside_ = DemandPoint{at, rps};
    return writes;
  }
  if (step_ && aside_ && aside_->rps != step_->rps)
    writes.push_back({DemandWrite::kAdd, aside_->at, aside_->rps});
  step_ = DemandPoint{at, rps};
  aside_.reset();
  writes.push_back({DemandWrite::kAdd, at, rps});
  return writes;
}

}  // namespace airtime
