// TypeTrade on its own, in a minimal policy (value order, speed score, the trade), with a
// permit that holds one job back: the case where a claim is not taken up.
#include "airtime/policies/airtime/type_trade.h"

#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/airtime/value_plugins.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

const GpuTypeId kH100 = *GpuCatalog::Builtin().Find("H100");
const GpuTypeId kT4 = *GpuCatalog::Builtin().Find("T4");

// Never lets a workload whose name starts with "held" start.
class HoldBack : public PermitPlugin {
 public:
  std::string_view name() const override { return "hold-back"; }
  bool Permit(const Job& job, const Placement&, const Engine&) override {
    return job.s().name.rfind("held", 0) != 0;
  }
};

Engine MakeEngine(const Cluster& c) {
  Policy p;
  p.name = "trade-only";
  p.queue_sort = std::make_unique<ValueOrder>(0);
  auto trade = std::make_unique<TypeTrade>();
  p.scores.emplace_back(std::make_unique<SpeedScore>(), 1000.0);
  p.cycle.push_back(std::move(trade));
  p.permits.push_back(std::make_unique<HoldBack>());
  return Engine(c, std::move(p), EngineOptions{1});
}

WorkloadSpec Job(const std::string& name, int gpus, double work_s, double h100, double t4,
                 double value) {
  WorkloadSpec s = MakeJob(name, WorkloadKind::kTraining, gpus, work_s);
  s.speed_overrides = {{kH100, h100}, {kT4, t4}};
  s.value.on_completion = value;
  return s;
}

GpuTypeId TypeOf(const Cluster& c, const CycleResult& r, WorkloadId id) {
  for (const Decision& d : r.decisions)
    if (d.type == DecisionType::kStart && d.workload == id) return c.gpu_type(d.placement.gpus[0]);
  ADD_FAILURE() << "workload " << id << " did not start";
  return -1;
}

TEST(TypeTradeTest, AClaimThatDoesNotStartStopsTheTradingOnItsType) {
  // One H100 and two T4s, all busy until 01:00. Then a recommendation model (dense, 10%
  // slower on a T4) is traded to a T4 for a network (ten times slower there) that a permit
  // holds back: the H100 stays free. The next recommendation model takes the H100, not the
  // other T4: trading on the H100 stopped when the claim it gave way to did not start.
  Cluster c = MakeCluster({{"H100", 1, 1}, {"T4", 2, 1}});
  Engine e = MakeEngine(c);
  WorkloadSpec blocker = Job("blocker", 3, 3600, 1.0, 1.0, 1);
  blocker.shape.locality = Locality::kAny;
  const AllocationId b = e.Handle(Event::Arrival(0, blocker)).decisions.at(0).allocation;
  const WorkloadId first =
      e.Handle(Event::Arrival(1, Job("recsys-1", 1, 1800, 1.0, 0.9, 12))).arrived;
  const WorkloadId held =
      e.Handle(Event::Arrival(2, Job("held-convnet", 1, 7200, 2.0, 0.2, 10))).arrived;
  const CycleResult& freed = e.Handle(Event::Completion(kHour, b));
  EXPECT_EQ(TypeOf(c, freed, first), kT4);
  EXPECT_EQ(e.job(held).phase, JobPhase::kPending);
  EXPECT_EQ(e.state().free_whole_of_type(kH100), 1);
  const CycleResult& next =
      e.Handle(Event::Arrival(kHour + 1, Job("recsys-2", 1, 1800, 1.0, 0.9, 12)));
  EXPECT_EQ(TypeOf(c, next, next.arrived), kH100);
}

}  // namespace
}  // namespace airtime
