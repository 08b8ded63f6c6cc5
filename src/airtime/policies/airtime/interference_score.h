// InterferenceScore: places work that shares a GPU by fractions beside neighbours it slows
// least (model/interference.h).
//
// For a fractional one-GPU workload, each GPU of a node that can take it has a cost: the
// value per hour lost to contention if it went there, its own (value density x share x
// (1 - its factor beside the GPU's current tenants)) plus each tenant's (its density x share
// x (1 - its factor beside the newcomer)), expressed as a fraction of the newcomer's own
// value rate so that it weighs like a loss of speed. A node scores minus its cheapest GPU's
// cost, and that GPU is the one chosen. Where every candidate GPU costs the same (usually
// nothing: most measured pairs do not interfere, nor does work of no known family), the
// plug-in leaves the choice to the next scorer (FGD in airtime's policy). It uses the
// engine's model, or the Gavel table where the engine applies none (the daemon: real GPUs
// interfere by themselves, and the policy still plans with what Gavel measured).
#pragma once

#include <string_view>
#include <vector>

#include "airtime/engine/plugins.h"

namespace airtime {

class InterferenceScore : public ScorePlugin {
 public:
  std::string_view name() const override { return "interference"; }
  double Score(const Job& job, NodeIndex node, const Engine& engine) const override;
  bool SelectGpus(const Job& job, NodeIndex node, const Engine& engine,
                  std::vector<GpuIndex>* out) const override;

  // The cost (see above) of placing `job` on `gpu`.
  static double Cost(const Job& job, GpuIndex gpu, const Engine& engine);

 private:
  // The cheapest GPU of `node` for `job` and its cost; gpu -1 when none takes it. `tie`:
  // every candidate costs the same.
  struct Best {
    GpuIndex gpu = -1;
    double cost = 0;
    bool tie = true;
  };
  static Best Cheapest(const Job& job, NodeIndex node, const Engine& engine);
};

}  // namespace airtime
