#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/registry.h"
#include "airtime/policies/static/static_partition.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

TEST(StaticTest, PoolsSplitPerTypeAndRespectLabels) {
  Cluster c = MakeCluster({{"H100", 8, 4}, {"T4", 4, 2, "", "training"}});
  auto pools = AssignPools(c, 0.5);
  EXPECT_EQ(pools, (std::vector<int>{0, 0, 1, 1, 1, 1}));
}

TEST(StaticTest, InferenceAndTrainingQueuesAreSeparate) {
  Cluster c = MakeCluster({{"H100", 8, 2}});
  auto p = PolicyRegistry::Builtin().Make("static", c);
  ASSERT_TRUE(p.ok());
  Engine e(c, std::move(*p));
  // Training takes its pool (node 1); a second training job waits, but batch inference
  // still starts on the inference pool: no blocking across pools.
  auto& r1 = e.Handle(Event::Arrival(0, MakeJob("t1", WorkloadKind::kTraining, 8, 100)));
  EXPECT_EQ(c.gpu(r1.decisions[0].placement.gpus[0]).node, 1);
  e.Handle(Event::Arrival(0, MakeJob("t2", WorkloadKind::kTraining, 8, 100)));
  // The empty inference node could take t2; the explanation names the filter that says no.
  EXPECT_TRUE(e.job(1).wait.fits_now);
  EXPECT_NE(e.Explain(1).find("filter 'pool'"), std::string::npos) << e.Explain(1);
  auto& r3 = e.Handle(Event::Arrival(0, MakeJob("b", WorkloadKind::kBatch, 2, 100)));
  ASSERT_EQ(r3.decisions.size(), 1u);
  EXPECT_EQ(c.gpu(r3.decisions[0].placement.gpus[0]).node, 0);
  // The inference pool has room, but training may not use it.
  EXPECT_EQ(e.job(1).wait.reason, WaitReason::kNoFit);
}

}  // namespace
}  // namespace airtime
