#include "airtime/traces/philly.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "airtime/traces/trace_test_util.h"

namespace airtime {
namespace {

using ::airtime::testing::TraceTestData;
using ::testing::HasSubstr;

const std::string kHead = TraceTestData("philly/philly_head200.csv");
const std::string kBad = TraceTestData("philly/philly_bad.csv");

GpuTypeId Type(const char* name) { return *GpuCatalog::Builtin().Find(name); }

TEST(PhillyTest, ImportsTheExcerptSortedBySubmission) {
  ImportStats stats;
  auto jobs = ImportPhilly(kHead, {}, &stats);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 200u);
  EXPECT_EQ(stats.rows_read, 200u);
  EXPECT_EQ(stats.rows_imported, 200u);
  EXPECT_EQ(stats.rows_skipped, 0u);
  EXPECT_EQ(stats.rows_filtered, 0u);
  for (size_t i = 1; i < jobs->size(); ++i)
    EXPECT_LE((*jobs)[i - 1].submit_at, (*jobs)[i].submit_at);

  // Earliest row: line 4, "2017-09-29 07:58:32,860662.0,1,860662.0,6c71a0".
  const WorkloadSpec& first = jobs->front();
  EXPECT_EQ(first.name, "philly-3");
  EXPECT_EQ(first.source, "philly_head200.csv:4");
  EXPECT_EQ(first.tenant, "6c71a0");
  EXPECT_EQ(first.kind, WorkloadKind::kTraining);
  EXPECT_EQ(first.submit_at, 0);
  EXPECT_EQ(first.shape.gpu_count, 1);
  EXPECT_EQ(first.shape.mode, ShareMode::kWhole);
  EXPECT_EQ(first.shape.locality, Locality::kNode);
  EXPECT_TRUE(first.shape.allowed_types.empty());
  const GpuCatalog& cat = GpuCatalog::Builtin();
  EXPECT_DOUBLE_EQ(first.work_seconds, 860662.0 * cat.type(Type("V100")).relative_speed);
  EXPECT_EQ(first.RunTimeOn(Type("V100"), first.work_seconds, cat), 860662 * kSecond);
  EXPECT_EQ(first.checkpoint_interval, 30 * kMinute);
  EXPECT_EQ(first.restart_cost, 2 * kMinute);
  EXPECT_TRUE(first.preemptible);

  // Line 56 "2017-10-07 01:11:39,193256.0,8,...,ee9e8c": 8 GPUs still on one node.
  const WorkloadSpec& third = (*jobs)[2];
  EXPECT_EQ(third.name, "philly-54");
  EXPECT_EQ(third.shape.gpu_count, 8);
  EXPECT_EQ(third.shape.locality, Locality::kNode);
  EXPECT_EQ(third.submit_at, 666787000);

  // Latest row: line 2, "2017-10-09 07:01:55,66.0,1,66.0,11cb48".
  EXPECT_EQ(jobs->back().name, "philly-1");
  EXPECT_EQ(jobs->back().submit_at, 860603000);
  for (const auto& j : *jobs) EXPECT_TRUE(ValidateSpec(j, cat).ok()) << j.name;
}

TEST(PhillyTest, FiltersLimitsAndRebases) {
  PhillyOptions o;
  o.clusters = {"11cb48", "ee9e8c"};
  ImportStats stats;
  auto jobs = ImportPhilly(kHead, o, &stats);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(jobs->size(), 9u);
  EXPECT_EQ(stats.rows_filtered, 191u);
  for (const auto& j : *jobs) EXPECT_TRUE(j.tenant == "11cb48" || j.tenant == "ee9e8c");
  // Times stay on the file's clock (the earliest row is of another cluster)...
  EXPECT_EQ(jobs->front().submit_at, 666787000);
  // ...unless rebased.
  o.rebase_to_first_job = true;
  o.limit = 2;
  jobs = ImportPhilly(kHead, o, &stats);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ(jobs->front().submit_at, 0);
  EXPECT_EQ(stats.rows_imported, 2u);
  EXPECT_EQ(stats.rows_read, stats.rows_imported + stats.rows_skipped + stats.rows_filtered);

  PhillyOptions typo;
  typo.clusters = {"nope"};
  auto none = ImportPhilly(kHead, typo);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no job of cluster 'nope'"));
}

TEST(PhillyTest, ReferenceTypeAndCheckpointOptions) {
  PhillyOptions o;
  o.reference_type = Type("A100-80GB");
  o.checkpoint_interval = 10 * kMinute;
  o.restart_cost = 0;
  o.preemptible = false;
  o.limit = 1;
  auto jobs = ImportPhilly(kHead, o);
  ASSERT_TRUE(jobs.ok());
  EXPECT_DOUBLE_EQ(jobs->front().work_seconds, 860662.0);  // A100-80GB has speed 1
  EXPECT_EQ(jobs->front().checkpoint_interval, 10 * kMinute);
  EXPECT_FALSE(jobs->front().preemptible);
  o.reference_type = 999;
  EXPECT_FALSE(ImportPhilly(kHead, o).ok());
}

TEST(PhillyTest, TenantPriorityAndValueOptions) {
  auto plain = ImportPhilly(kHead);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->front().priority, 0);
  EXPECT_EQ(plain->front().value.on_completion, 0);

  PhillyOptions o;
  o.tenant = "research";
  o.priority = -5;
  o.value_per_gpu_hour = 2.5;
  o.utilization = 0.5;
  auto jobs = ImportPhilly(kHead, o);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  for (const auto& j : *jobs) {
    EXPECT_EQ(j.tenant, "research");
    EXPECT_EQ(j.priority, -5);
    EXPECT_EQ(j.utilization, 0.5);
  }
  // Line 4: 860662 s on 1 GPU; line 55: 193256 s on 8 GPUs.
  EXPECT_DOUBLE_EQ(jobs->front().value.on_completion, 2.5 * 860662.0 / 3600);
  EXPECT_EQ((*jobs)[2].source, "philly_head200.csv:55");
  EXPECT_DOUBLE_EQ((*jobs)[2].value.on_completion, 2.5 * 8 * 193256.0 / 3600);
  for (const auto& j : *jobs) EXPECT_TRUE(ValidateSpec(j, GpuCatalog::Builtin()).ok()) << j.name;

  o.utilization = 0;
  EXPECT_FALSE(ImportPhilly(kHead, o).ok());
  o.utilization = 1;
  o.value_per_gpu_hour = -1;
  EXPECT_FALSE(ImportPhilly(kHead, o).ok());
}

TEST(PhillyTest, BrokenRowsNameFileLineAndColumn) {
  auto jobs = ImportPhilly(kBad);
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(jobs.status().message(),
              HasSubstr("philly_bad.csv:3: column 'duration': expected a number, got 'abc'"));
}

TEST(PhillyTest, SkipBadRowsCountsAndKeepsMessages) {
  PhillyOptions o;
  o.skip_bad_rows = true;
  ImportStats stats;
  auto jobs = ImportPhilly(kBad, o, &stats);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ(stats.rows_read, 9u);
  EXPECT_EQ(stats.rows_skipped, 7u);
  EXPECT_EQ(stats.rows_imported, 2u);
  ASSERT_EQ(stats.first_errors.size(), 7u);
  EXPECT_THAT(stats.first_errors[0], HasSubstr("philly_bad.csv:3: column 'duration'"));
  EXPECT_THAT(stats.first_errors[1], HasSubstr(":4: expected 5 fields"));
  EXPECT_THAT(
      stats.first_errors[2],
      HasSubstr(
          ":5: column 'duration': expected a positive number of seconds (at most 1e12), got '-5'"));
  EXPECT_THAT(stats.first_errors[3], HasSubstr(":6: column 'timestamp'"));
  EXPECT_THAT(stats.first_errors[4], HasSubstr(":7: column 'duration'"));
  EXPECT_THAT(stats.first_errors[5], HasSubstr(":8: column 'num_gpus': expected a GPU count"));
  EXPECT_THAT(stats.first_errors[6], HasSubstr(":9: column 'num_gpus': expected a whole number"));
  // The 16-GPU job (line 11) is the earliest and spans nodes.
  EXPECT_EQ(jobs->front().source, "philly_bad.csv:11");
  EXPECT_EQ(jobs->front().name, "philly-9");  // the ninth data row (line 10 is blank)
  EXPECT_EQ(jobs->front().shape.gpu_count, 16);
  EXPECT_EQ(jobs->front().shape.locality, Locality::kAny);
  EXPECT_EQ(jobs->front().tenant, "b436b2");
  EXPECT_EQ((*jobs)[1].submit_at, (60 + 1) * kMinute + 55 * kSecond);
}

// A row dated far outside the trace's era is a broken row, not a replay over millennia.
TEST(PhillyTest, ARowDatedYear9999IsABrokenRow) {
  const std::string path = ::testing::TempDir() + "/philly_far.csv";
  {
    std::ofstream f(path);
    f << "timestamp,duration,num_gpus,gpu_time,cluster\n"
         "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
         "9999-10-09 07:01:55,66.0,1,66.0,11cb48\n";
  }
  auto jobs = ImportPhilly(path);
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(),
              HasSubstr("philly_far.csv:3: column 'timestamp': expected a date and time like "
                        "'2017-10-09 07:01:55', from 1970 to 2099, got '9999-10-09 07:01:55'"));
  std::remove(path.c_str());
}

TEST(PhillyTest, MissingFileIsNotFound) {
  auto jobs = ImportPhilly("/no/such/philly.csv");
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(jobs.status().message(), HasSubstr("/no/such/philly.csv"));
}

}  // namespace
}  // namespace airtime
