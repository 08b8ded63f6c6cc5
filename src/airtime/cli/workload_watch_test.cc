#include "airtime/cli/workload_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

json View(int id, const std::string& state, const std::string& reason = "", int submitted_age = 0) {
  return {{"id", id},
          {"name", "w" + std::to_string(id)},
          {"state", state},
          {"reason", reason},
          {"submitted_at", submitted_age}};
}

json List(std::vector<json> views) { return {{"workloads", views}}; }

TEST(WorkloadWatch, TheFirstListingIsAllNewThenOnlyChangesAndDepartures) {
  WorkloadWatch watch;
  auto first = watch.Next(List({View(1, "queued", "waits"), View(2, "running")}));
  EXPECT_EQ(first.changed.size(), 2u);
  EXPECT_TRUE(first.gone.empty());
  // Nothing changed but a field a watcher is not told of.
  auto same = watch.Next(List({View(1, "queued", "waits", 5), View(2, "running")}));
  EXPECT_TRUE(same.changed.empty());
  // 1 started, 3 arrived, 2 left the listing (it finished).
  auto next = watch.Next(List({View(1, "running"), View(3, "queued")}));
  ASSERT_EQ(next.changed.size(), 2u);
  EXPECT_EQ(next.changed[0]["id"], 1);
  EXPECT_EQ(next.changed[1]["id"], 3);
  EXPECT_THAT(next.gone, ElementsAre("2"));
  // A departed workload is forgotten: back in a listing, it is new again.
  auto back = watch.Next(List({View(1, "running"), View(2, "failed"), View(3, "queued")}));
  ASSERT_EQ(back.changed.size(), 1u);
  EXPECT_EQ(back.changed[0]["id"], 2);
}

TEST(WorkloadWatch, AChangedReasonOrPriorityIsAChange) {
  WorkloadWatch watch;
  watch.Next(List({View(1, "queued", "waits for 4 GPUs")}));
  EXPECT_EQ(watch.Next(List({View(1, "queued", "waits for 2 GPUs")})).changed.size(), 1u);
  json raised = View(1, "queued", "waits for 2 GPUs");
  raised["priority"] = 90;
  EXPECT_EQ(watch.Next(List({raised})).changed.size(), 1u);
}

TEST(WorkloadWatch, ABadListingIsNoChangeAndDropsNothingUnseen) {
  WorkloadWatch watch;
  EXPECT_TRUE(watch.Next(json::array()).changed.empty());
  EXPECT_TRUE(watch.Next(json{{"workloads", {1, "x", {{"name", "no id"}}}}}).changed.empty());
}

TEST(CheckWait, ReachedNeverOrWait) {
  EXPECT_EQ(CheckWait(View(1, "running"), "running").verdict, WaitCheck::kReached);
  EXPECT_EQ(CheckWait(View(1, "queued"), "running").verdict, WaitCheck::kWait);
  // A running workload may yet be preempted back to queued.
  EXPECT_EQ(CheckWait(View(1, "running"), "queued").verdict, WaitCheck::kWait);
  for (const char* final_state : {"succeeded", "failed", "cancelled"}) {
    EXPECT_EQ(CheckWait(View(1, final_state), "finished").verdict, WaitCheck::kReached);
  }
  json failed = View(1, "failed");
  failed["exit_code"] = 3;
  const WaitCheck never = CheckWait(failed, "succeeded");
  EXPECT_EQ(never.verdict, WaitCheck::kNever);
  EXPECT_EQ(never.why, "it ended failed (exit code 3) and will not be succeeded");
  EXPECT_EQ(CheckWait(View(1, "cancelled"), "running").verdict, WaitCheck::kNever);
  EXPECT_EQ(CheckWait(json("not a view"), "running").verdict, WaitCheck::kWait);
}

TEST(CheckWait, StatesAreCheckedByName) {
  EXPECT_TRUE(CheckWaitState("finished").ok());
  EXPECT_TRUE(CheckWaitState("queued").ok());
  const Status bad = CheckWaitState("done");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.message(), HasSubstr("'done'"));
  EXPECT_THAT(bad.message(), HasSubstr("finished"));
}

}  // namespace
}  // namespace airtime
