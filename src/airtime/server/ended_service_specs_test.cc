#include "airtime/server/ended_service_specs.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

WorkloadSpec Service(const std::string& name) {
  WorkloadSpec s;
  s.name = name;
  s.kind = WorkloadKind::kRealtime;
  s.exec.argv = {"/bin/serve", std::string(1000, 'x')};
  s.exec.env = {{"TOKEN", "secret"}};
  s.realtime.demand = std::vector<DemandPoint>(1000, DemandPoint{});
  s.realtime.classes = {{"code", std::vector<DemandPoint>(500, DemandPoint{})}};
  ModelVariant v;
  v.name = "int8";
  v.command = {"/bin/serve-int8"};
  s.realtime.variants = {v};
  s.realtime.group = "chat";
  return s;
}

TEST(EndedServiceSpecs, KeepsWhatCallsReadTrimmedOfTheRest) {
  EndedServiceSpecs specs(10);
  specs.Keep(7, 1, Service("chat/int8"));
  EXPECT_EQ(specs.Find(7, 0), nullptr);
  EXPECT_EQ(specs.Find(8, 1), nullptr);
  auto kept = specs.Find(7, 1);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->name, "chat/int8");
  EXPECT_TRUE(kept->is_service());
  EXPECT_EQ(kept->realtime.group, "chat");
  ASSERT_EQ(kept->realtime.variants.size(), 1u);
  EXPECT_EQ(kept->realtime.variants[0].name, "int8");
  ASSERT_EQ(kept->realtime.classes.size(), 1u);
  EXPECT_EQ(kept->realtime.classes[0].name, "code");
  // What no call on an ended workload reads is gone: curves, commands, environments.
  EXPECT_TRUE(kept->realtime.demand.empty());
  EXPECT_TRUE(kept->realtime.classes[0].demand.empty());
  EXPECT_TRUE(kept->exec.argv.empty());
  EXPECT_TRUE(kept->exec.env.empty());
  EXPECT_TRUE(kept->realtime.variants[0].command.empty());
}

TEST(EndedServiceSpecs, TheLeastRecentlyUsedGoFirst) {
  EndedServiceSpecs specs(2);
  specs.Keep(1, 0, Service("a"));
  specs.Keep(2, 0, Service("b"));
  ASSERT_NE(specs.Find(1, 0), nullptr);  // a is used: b is now the least recent
  auto b = specs.Find(2, 0);
  specs.Find(1, 0);
  specs.Keep(3, 0, Service("c"));
  EXPECT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs.Find(2, 0), nullptr);
  EXPECT_NE(specs.Find(1, 0), nullptr);
  EXPECT_NE(specs.Find(3, 0), nullptr);
  EXPECT_EQ(b->name, "b");          // a caller's copy outlives its entry
  specs.Keep(3, 0, Service("c2"));  // kept again: replaced, not doubled
  EXPECT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs.Find(3, 0)->name, "c2");
}

}  // namespace
}  // namespace airtime
