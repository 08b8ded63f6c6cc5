#include "airtime/traces/trace_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "airtime/traces/trace_test_util.h"

namespace airtime {
namespace {

using ::airtime::testing::TraceTestData;
using ::testing::HasSubstr;

const std::string kPhilly = TraceTestData("philly/philly_head200.csv");
const std::string kOpenb = TraceTestData("alibaba-gpu-2023/openb_pods_gpuspec33_head300.csv");

TEST(TraceSourceTest, DispatchesPhillyWithParsedOptions) {
  ImportStats stats;
  auto jobs = ImportWorkloadTrace("philly", kPhilly,
                                  {{"limit", "3"},
                                   {"clusters", "6214e9, 11cb48"},
                                   {"reference_type", "A100-80GB"},
                                   {"checkpoint_interval", "15m"},
                                   {"restart_cost", "90s"},
                                   {"preemptible", "no"},
                                   {"rebase_to_first_job", "true"}},
                                  &stats);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ(stats.rows_imported, 3u);
  const WorkloadSpec& j = jobs->front();
  EXPECT_EQ(j.submit_at, 0);
  EXPECT_TRUE(j.tenant == "6214e9" || j.tenant == "11cb48");
  EXPECT_EQ(j.checkpoint_interval, 15 * kMinute);
  EXPECT_EQ(j.restart_cost, 90 * kSecond);
  EXPECT_FALSE(j.preemptible);
  // With gpus_per_node 2, the 4- and 8-GPU jobs of the excerpt may span nodes.
  auto small_nodes = ImportWorkloadTrace("philly", kPhilly, {{"gpus_per_node", "2"}});
  ASSERT_TRUE(small_nodes.ok());
  size_t spanning = 0;
  for (const auto& w : *small_nodes) spanning += w.shape.locality == Locality::kAny;
  EXPECT_EQ(spanning, 3u);
  for (const auto& w : *small_nodes)
    EXPECT_EQ(w.shape.locality, w.shape.gpu_count <= 2 ? Locality::kNode : Locality::kAny);
}

TEST(TraceSourceTest, PhillyTenantPriorityAndValue) {
  auto jobs = ImportWorkloadTrace("philly", kPhilly,
                                  {{"limit", "1"},
                                   {"tenant", "research"},
                                   {"priority", "-3"},
                                   {"value_per_gpu_hour", "2"},
                                   {"utilization", "0.5"}});
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().tenant, "research");
  EXPECT_EQ(jobs->front().priority, -3);
  EXPECT_DOUBLE_EQ(jobs->front().value.on_completion, 2 * 860662.0 / 3600);
  EXPECT_EQ(jobs->front().utilization, 0.5);

  auto r = ImportWorkloadTrace("philly", kPhilly, {{"value_per_gpu_hour", "-1"}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("option 'value_per_gpu_hour': expected a number >= 0, got '-1'"));
  r = ImportWorkloadTrace("philly", kPhilly, {{"value_per_gpu_hour", "inf"}});
  EXPECT_FALSE(r.ok());
  r = ImportWorkloadTrace("philly", kPhilly, {{"utilization", "1.5"}});
  EXPECT_THAT(r.status().message(),
              HasSubstr("option 'utilization': expected a share in (0, 1], got '1.5'"));
  r = ImportWorkloadTrace("philly", kPhilly, {{"priority", "high"}});
  EXPECT_THAT(r.status().message(), HasSubstr("option 'priority'"));
  r = ImportWorkloadTrace("philly", kPhilly, {{"tenant", " "}});
  EXPECT_THAT(r.status().message(), HasSubstr("option 'tenant'"));
}

TEST(TraceSourceTest, DispatchesOpenb) {
  auto pods = ImportWorkloadTrace("openb", kOpenb, {{"limit", "10"}, {"skip_bad_rows", "1"}});
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  EXPECT_EQ(pods->size(), 10u);
  EXPECT_EQ(pods->front().kind, WorkloadKind::kBatch);
}

TEST(TraceSourceTest, UnknownFormatListsTheKnownOnes) {
  auto r = ImportWorkloadTrace("helios", kPhilly);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("'helios' (known: openb, philly)"));
}

TEST(TraceSourceTest, UnknownOrMalformedOptionsAreNamed) {
  auto r = ImportWorkloadTrace("philly", kPhilly, {{"limt", "3"}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("unknown option 'limt'"));
  EXPECT_THAT(r.status().message(), HasSubstr("limit"));
  r = ImportWorkloadTrace("openb", kOpenb, {{"reference_type", "V100"}});
  EXPECT_THAT(r.status().message(), HasSubstr("openb trace: unknown option 'reference_type'"));
  r = ImportWorkloadTrace("philly", kPhilly, {{"limit", "-1"}});
  EXPECT_THAT(r.status().message(),
              HasSubstr("option 'limit': expected an integer >= 0, got '-1'"));
  r = ImportWorkloadTrace("philly", kPhilly, {{"skip_bad_rows", "maybe"}});
  EXPECT_THAT(r.status().message(), HasSubstr("option 'skip_bad_rows'"));
  r = ImportWorkloadTrace("philly", kPhilly, {{"reference_type", "Z80"}});
  EXPECT_THAT(r.status().message(), HasSubstr("option 'reference_type'"));
  r = ImportWorkloadTrace("philly", kPhilly, {{"checkpoint_interval", "soon"}});
  EXPECT_THAT(r.status().message(), HasSubstr("option 'checkpoint_interval'"));
}

}  // namespace
}  // namespace airtime
