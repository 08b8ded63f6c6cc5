#include "airtime/policies/airtime/interference_score.h"

#include <algorithm>

#include "airtime/engine/engine.h"
#include "airtime/model/interference.h"

namespace airtime {
namespace {

bool Shares(const Shape& s) {
  return s.mode == ShareMode::kFraction && s.gpu_count == 1 && s.gpu_milli < 1000;
}

const InterferenceModel& ModelOf(const Engine& engine) {
  return engine.interference() ? *engine.interference() : InterferenceModel::Gavel();
}

}  // namespace

double InterferenceScore::Cost(const Job& job, GpuIndex gpu, const Engine& engine) {
  const std::vector<AllocationId>* tenants = engine.SharedOn(gpu);
  if (tenants == nullptr || tenants->empty()) return 0;
  const InterferenceModel& model = ModelOf(engine);
  const std::string& mine = job.s().family;
  const double own_rate = std::max(job.value_density, 1e-9) * job.s().shape.gpu_milli;
  double own_factor = 1, loss = 0;
  for (AllocationId id : *tenants) {
    const Allocation* a = engine.allocation(id);
    if (a == nullptr) continue;
    const Job& t = engine.job(a->workload);
    own_factor *= model.Factor(mine, t.s().family);
    loss += t.value_density * a->placement.milli * (1 - model.Factor(t.s().family, mine));
  }
  loss += own_rate * (1 - own_factor);
  return loss / own_rate;
}

InterferenceScore::Best InterferenceScore::Cheapest(const Job& job, NodeIndex node,
                                                    const Engine& engine) {
  Best best;
  const Shape& shape = job.s().shape;
  const GpuIndex first = engine.cluster().first_gpu(node);
  bool any = false;
  for (int i = 0; i < engine.cluster().node(node).gpu_count; ++i) {
    const GpuIndex g = first + i;
    if (!engine.state().GpuTakes(shape, g)) continue;
    const double c = Cost(job, g, engine);
    if (any && c != best.cost) best.tie = false;
    if (!any || c < best.cost) {
      best.gpu = g;
      best.cost = c;
    }
    any = true;
  }
  return best;
}

double InterferenceScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  if (!Shares(job.s().shape)) return 0;
  return -Cheapest(job, node, engine).cost;
}

bool InterferenceScore::SelectGpus(const Job& job, NodeIndex node, const Engine& engine,
                                   std::vector<GpuIndex>* out) const {
  if (!Shares(job.s().shape)) return false;
  const Best best = Cheapest(job, node, engine);
  if (best.gpu < 0 || best.tie) return false;
  out->push_back(best.gpu);
  return true;
}

}  // namespace airtime
