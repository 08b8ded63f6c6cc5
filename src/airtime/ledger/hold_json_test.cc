// hold_json: the 3 a.m. report's JSON reads back what it wrote; the table sums the services.
#include "airtime/ledger/hold_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

ScoredHold Scored(bool hold) {
  ScoredHold s;
  HoldDecision& d = s.decision;
  d.at = 1796016031693;  // a wall-clock time: the daemon's
  d.name = "chat";
  d.demand_rps = 5;
  d.forecast_rps = 7.5;
  d.needed = 1;
  d.held = hold ? 2 : 0;
  d.hold_value = 1.25;
  d.handoff_value = 0.5;
  d.waiting_density = 3;
  d.why = "kept for the keep window";
  s.until = hold ? kNever : d.at + 60000;
  s.came = hold;
  s.protected_requests = 80;
  s.protected_value = 0.08;
  s.forgone_value = 0.5;
  s.regret = 0.42;
  return s;
}

TEST(HoldJsonTest, ACallAndASummaryReadBackAsWritten) {
  for (bool hold : {true, false}) {
    const ScoredHold s = Scored(hold);
    const json j = HoldToJson(s);
    EXPECT_EQ(j["choice"], hold ? "hold" : "hand-off");
    EXPECT_EQ(j["forecast_error_p90"], nullptr);
    auto back = HoldFromJson(json::parse(j.dump()));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->decision.at, s.decision.at);
    EXPECT_EQ(back->until, s.until);
    EXPECT_EQ(back->decision.held, s.decision.held);
    EXPECT_EQ(back->decision.why, s.decision.why);
    EXPECT_EQ(back->came, s.came);
    EXPECT_DOUBLE_EQ(back->regret, s.regret);
    EXPECT_EQ(HoldToJson(*back), j);
  }
  HoldSummary h;
  h.Add(Scored(true));
  h.Add(Scored(false));
  auto back = HoldSummaryFromJson(HoldSummaryToJson(h));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(HoldSummaryToJson(*back), HoldSummaryToJson(h));
}

TEST(HoldJsonTest, BadFieldsAreNamed) {
  json j = HoldToJson(Scored(true));
  j.erase("why");
  EXPECT_THAT(HoldFromJson(j).status().message(), HasSubstr("'why' is missing"));
  j = HoldToJson(Scored(true));
  j["replicas_held"] = -1;
  EXPECT_THAT(HoldFromJson(j).status().message(), HasSubstr("'replicas_held' is not a count"));
  j = HoldToJson(Scored(true));
  j["choice"] = "hand-off";
  EXPECT_THAT(HoldFromJson(j).status().message(), HasSubstr("'choice'"));
  EXPECT_FALSE(HoldSummaryFromJson(json::array()).ok());
  EXPECT_THAT(HoldSummaryFromJson(json{{"holds", 1}}).status().message(),
              HasSubstr("'holds_burst_came' is missing"));
}

TEST(HoldJsonTest, TheTableHasALinePerServiceAndTheirTotal) {
  EXPECT_EQ(HoldsTable({}), "");
  HoldSummary a, b;
  a.Add(Scored(true));
  b.Add(Scored(false));
  const std::string one = HoldsTable({{"chat", a}});
  EXPECT_THAT(one, HasSubstr("chat"));
  EXPECT_THAT(one, ::testing::Not(HasSubstr("all services")));
  EXPECT_THAT(one, HasSubstr("the holds protected less value"));
  const std::string two = HoldsTable({{"chat", a}, {"search", b}});
  EXPECT_THAT(two, HasSubstr("all services"));
  EXPECT_THAT(two, HasSubstr("1 (1)"));
}

}  // namespace
}  // namespace airtime
