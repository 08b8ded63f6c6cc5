// Plug-ins shared by several policies: queue orders, strict ordering, best-fit scoring.
#pragma once

#include <string_view>
#include <utility>

#include "airtime/engine/engine.h"
#include "airtime/engine/plugins.h"

namespace airtime {

// First come, first served: by submission time; a service's replica request by the time it
// joined the queue; a preempted job keeps its original place.
class ArrivalOrder : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "arrival"; }
  QueueKey Key(const Job& job, const Engine& engine) const override;
};

// Higher priority first, then arrival.
class PriorityOrder : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "priority"; }
  QueueKey Key(const Job& job, const Engine& engine) const override;
};

// Strict order: the first workload that does not fit blocks every one behind it.
class StrictOrder : public OrderPlugin {
 public:
  std::string_view name() const override { return "strict"; }
  int BlockingGroup(const Job&, const Engine&) const override { return 0; }
};

// Best fit (the FGD paper's BestFit): prefer the node left with the least free GPU and CPU,
// half weight each, GPU normalised by 8 GPUs and CPU by 128 cores.
class BestFitScore : public ScorePlugin {
 public:
  std::string_view name() const override { return "bestfit"; }
  double Score(const Job& job, NodeIndex node, const Engine& engine) const override;
};

}  // namespace airtime
