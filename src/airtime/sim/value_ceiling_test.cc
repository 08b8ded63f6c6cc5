#include "airtime/sim/value_ceiling.h"

#include <gtest/gtest.h>

#include "airtime/engine/test_util.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakeService;

TEST(ValueCeilingTest, CountsWhatCouldBeEarnedBeforeTheHorizon) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});  // speed 1.0
  WorkloadSpec svc = MakeService("svc", 10);       // 1 per 1k requests
  svc.realtime.max_replicas = 2;                   // serves at most 20 rps
  svc.realtime.demand = {{0, 10}, {kHour, 30}};
  WorkloadSpec quick = MakeJob("quick", WorkloadKind::kBatch, 1, 3600, kHour);  // ends 2h
  quick.value.on_completion = 7;
  WorkloadSpec late = MakeJob("late", WorkloadKind::kBatch, 1, 3 * 3600, 0);  // ends 3h
  late.value.on_completion = 5;
  WorkloadSpec after = MakeJob("after", WorkloadKind::kBatch, 1, 60, 3 * kHour);
  SimInput in = MakeSimInput(c, {svc, quick, late, after});
  const ValueCeiling v = ComputeValueCeiling(in, 2 * kHour);
  EXPECT_EQ(v.jobs, 2);  // `after` comes after the horizon
  EXPECT_EQ(v.reachable_jobs, 1);
  // Requests: 10 rps for an hour, then 30 (20 reachable) for an hour; the first minute's
  // 600 are missed while the first replica loads.
  EXPECT_NEAR(v.offered_value, (36000 + 108000) / 1000.0 + 7 + 5, 1e-9);
  EXPECT_NEAR(v.reachable_value, (36000 - 600 + 72000) / 1000.0 + 7, 1e-9);
  EXPECT_NEAR(v.requests, 36000 + 108000, 1e-6);
  EXPECT_NEAR(v.missed_at_start, 600, 1e-6);
  EXPECT_NEAR(v.reachable_requests, 36000 - 600 + 72000, 1e-6);
  EXPECT_NEAR(v.reachable_slo_attainment(), (36000 - 600 + 72000) / 144000.0, 1e-12);
  EXPECT_NEAR(v.installed_gpu_hours, 8, 1e-12);
  EXPECT_NEAR(v.reachable_per_gpu_hour(), 114.4 / 8, 1e-9);
}

// A service submitted later counts its requests from its submission, and misses its first
// cold start after it.
TEST(ValueCeilingTest, AServiceCountsFromItsSubmission) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  WorkloadSpec svc = MakeService("svc", 10);
  svc.submit_at = kHour;
  svc.realtime.cold_start = 2 * 60 * 1000;
  svc.realtime.demand = {{0, 5}};
  const ValueCeiling v = ComputeValueCeiling(MakeSimInput(c, {svc}), 2 * kHour);
  EXPECT_NEAR(v.requests, 5 * 3600, 1e-6);
  EXPECT_NEAR(v.missed_at_start, 5 * 120, 1e-6);
  EXPECT_NEAR(v.reachable_requests, 5 * (3600 - 120), 1e-6);
}

}  // namespace
}  // namespace airtime
