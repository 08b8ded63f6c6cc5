#include "airtime/policies/plugins/common_plugins.h"

namespace airtime {

QueueKey ArrivalOrder::Key(const Job& job, const Engine&) const {
  const TimeMs t = job.is_service() ? job.queued_since : job.submitted;
  return {static_cast<double>(t), 0.0};
}

QueueKey PriorityOrder::Key(const Job& job, const Engine&) const {
  const TimeMs t = job.is_service() ? job.queued_since : job.submitted;
  return {-static_cast<double>(job.priority), static_cast<double>(t)};
}

double BestFitScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  const NodeSummary& s = engine.state().node(node);
  const Shape& shape = job.s().shape;
  const int64_t gpu_left = s.free_milli - shape.TotalMilli(engine.catalog());
  const Node& n = engine.cluster().node(node);
  const int64_t cpu_left = n.cpu_milli > 0 ? s.cpu_free - shape.cpu_milli : 0;
  const double left =
      0.5 * static_cast<double>(gpu_left) / 8000.0 + 0.5 * static_cast<double>(cpu_left) / 128000.0;
  return -left;
}

}  // namespace airtime
