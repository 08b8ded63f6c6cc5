#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

TEST(BestFitTest, PrefersTheFullestNode) {
  Cluster c = MakeCluster({{"H100", 8, 3}});
  auto p = PolicyRegistry::Builtin().Make("bestfit", c);
  Engine e(c, std::move(*p));
  e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kTraining, 4, 100)));  // node 0
  e.Handle(Event::Arrival(0, MakeJob("b", WorkloadKind::kTraining, 6, 100)));  // node 1
  auto& r = e.Handle(Event::Arrival(0, MakeJob("c", WorkloadKind::kTraining, 2, 100)));
  EXPECT_EQ(c.gpu(r.decisions[0].placement.gpus[0]).node, 1);
}

}  // namespace
}  // namespace airtime
