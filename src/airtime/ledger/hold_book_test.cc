// HoldBook: each call is scored against the demand that came.
#include "airtime/ledger/hold_book.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

// A service of 10 rps per 2-GPU replica, $1 per 1k requests, 5-minute cold start, whose
// waiting work earns $3 per GPU-hour.
HoldDecision Call(TimeMs at, int needed, int held) {
  HoldDecision d;
  d.at = at;
  d.service = 7;
  d.name = "svc";
  d.needed = needed;
  d.held = held;
  d.capacity_rps = 10;
  d.per_request = 0.001;
  d.cold_start = 5 * kMinute;
  d.replica_gpus = 2;
  d.waiting_density = 3;
  return d;
}

TEST(HoldBookTest, AHoldIsCreditedTheFirstColdStartOfEachRise) {
  HoldBook b;
  b.Record(Call(0, 2, 1));  // 2 needed for 20 rps, 1 held
  b.Advance(7, 0, kHour, 20);
  // A rise to 35 rps at 1h for 10 minutes: the held replica serves 10 of the 15 extra rps for
  // the first 5 minutes (3,000 requests).
  b.Advance(7, kHour, kHour + 10 * kMinute, 35);
  b.Advance(7, kHour + 10 * kMinute, 2 * kHour, 20);
  // A second, smaller rise: 4 rps over for 2 minutes (480 requests).
  b.Advance(7, 2 * kHour, 2 * kHour + 2 * kMinute, 24);
  b.Finish(3 * kHour);
  const auto calls = b.Calls();
  ASSERT_EQ(calls.size(), 1u);
  const ScoredHold& s = calls[0];
  EXPECT_TRUE(s.came);
  EXPECT_NEAR(s.protected_requests, 3000 + 480, 1e-6);
  EXPECT_NEAR(s.protected_value, 3.48, 1e-9);
  // It stood for the 2h02m the books saw; its replica of 2 GPUs sat idle all but the 12
  // minutes the rises used it: 1h50m forgone at $3 per GPU-hour.
  EXPECT_NEAR(s.hours, 2 + 2.0 / 60, 1e-9);
  EXPECT_NEAR(s.held_replica_hours, 1 + 50.0 / 60, 1e-9);
  EXPECT_NEAR(s.forgone_value, 2 * 3 * (1 + 50.0 / 60), 1e-9);
  EXPECT_NEAR(s.regret, s.forgone_value - s.protected_value, 1e-9);
  EXPECT_EQ(s.until, 3 * kHour);
}

TEST(HoldBookTest, AHoldWhoseBurstNeverCameRegretsAllItForwent) {
  HoldBook b;
  b.Record(Call(0, 1, 2));
  b.Advance(7, 0, 4 * kHour, 10);  // exactly what the needed replica serves
  b.Finish(4 * kHour);
  const ScoredHold s = b.Calls().at(0);
  EXPECT_FALSE(s.came);
  EXPECT_EQ(s.protected_value, 0);
  EXPECT_NEAR(s.forgone_value, 2 * 2 * 3 * 4.0, 1e-9);
  EXPECT_NEAR(s.regret, s.forgone_value, 1e-9);
  const HoldSummary h = b.Summaries().at("svc");
  EXPECT_EQ(h.holds, 1);
  EXPECT_EQ(h.holds_came, 0);
  EXPECT_NEAR(h.held_gpu_hours, 2 * 2 * 4.0, 1e-9);
  EXPECT_FALSE(h.holds_paid());
}

TEST(HoldBookTest, AHandOffIsChargedWhatAWarmReplicaWouldHaveServed) {
  HoldBook b;
  b.Record(Call(0, 1, 0));
  b.Advance(7, 0, 30 * kMinute, 8);
  // 25 rps against one replica: a warm one more would have served 10 rps for 5 minutes.
  b.Advance(7, 30 * kMinute, kHour, 25);
  b.Finish(kHour);
  const ScoredHold s = b.Calls().at(0);
  EXPECT_TRUE(s.came);
  EXPECT_NEAR(s.lost_value, 10 * 300 * 0.001, 1e-9);
  EXPECT_NEAR(s.earned_value, 2 * 3 * 1.0, 1e-9);  // one replica's GPUs for the hour
  EXPECT_EQ(s.regret, 0);                          // the $6 earned beat the $3 lost
  const HoldSummary h = b.Summaries().at("svc");
  EXPECT_EQ(h.handoffs, 1);
  EXPECT_EQ(h.handoffs_came, 1);
}

TEST(HoldBookTest, AReplacedHoldIsScoredForOneColdStartWhileNewReplicasLoad) {
  HoldBook b;
  b.Record(Call(0, 1, 1));
  b.Advance(7, 0, kHour, 10);
  // Demand jumps at 1h and the scaler answers at once with a new call: 3 needed, none held.
  b.Record(Call(kHour, 3, 0));
  b.Advance(7, kHour, kHour + 20 * kMinute, 30);
  b.Finish(kHour + 20 * kMinute);
  const auto calls = b.Calls();
  ASSERT_EQ(calls.size(), 2u);
  // The first call's held replica served 10 of the 20 extra rps while the new ones loaded.
  EXPECT_TRUE(calls[0].came);
  EXPECT_NEAR(calls[0].protected_requests, 10 * 300, 1e-6);
  EXPECT_EQ(calls[0].until, kHour);
  EXPECT_NEAR(calls[0].hours, 1.0, 1e-9);  // forgone only while it stood
  // The second call's demand is what its needed replicas serve: no burst.
  EXPECT_FALSE(calls[1].came);
}

TEST(HoldBookTest, CallsOfOtherServicesAndDemandBeforeACallAreIgnored) {
  HoldBook b;
  b.Advance(7, 0, kHour, 100);  // no call yet
  b.Record(Call(kHour, 1, 1));
  b.Advance(8, kHour, 2 * kHour, 100);   // another service
  b.Advance(7, 0, 2 * kHour, 10);        // starts before the call: counted from it
  const ScoredHold s = b.Calls().at(0);  // still standing, scored so far
  EXPECT_FALSE(s.came);
  EXPECT_EQ(s.until, kNever);
  EXPECT_NEAR(s.hours, 1.0, 1e-9);
}

TEST(HoldBookTest, AServiceThatEndsClosesItsCallsAndOthersStand) {
  HoldBook b;
  b.Record(Call(0, 1, 1));
  HoldDecision other = Call(0, 1, 1);
  other.service = 8;
  other.name = "other";
  b.Record(other);
  b.Record(Call(kHour, 1, 2));  // replaces the first: scored a cold start longer
  b.Advance(7, 0, 2 * kHour, 5);
  b.End(7, 2 * kHour);
  b.End(9, 2 * kHour);                     // no calls: nothing
  b.Advance(7, 2 * kHour, 3 * kHour, 50);  // after its end: not scored
  const auto calls = b.Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].until, kHour);
  EXPECT_EQ(calls[1].until, kNever);  // the other service's
  EXPECT_EQ(calls[2].until, 2 * kHour);
  EXPECT_FALSE(calls[2].came);
  EXPECT_NEAR(calls[2].hours, 1.0, 1e-9);
}

// Summaries of every call of `b`, all services together.
HoldSummary Total(const HoldBook& b) {
  HoldSummary t;
  for (const auto& [name, h] : b.Summaries()) t.Add(h);
  return t;
}

TEST(HoldBookTest, ACapKeepsTheNewestClosedCallsAndTheSummariesCoverEveryCall) {
  HoldBook capped, full;
  capped.SetMaxClosed(3);
  for (HoldBook* b : {&capped, &full}) {
    // Ten calls an hour apart, alternating hold and hand-off; a burst in every other hour.
    for (int i = 0; i < 10; ++i) {
      const TimeMs t = i * kHour;
      b->Record(Call(t, 1, i % 2 == 0 ? 1 : 0));
      b->Advance(7, t, t + 30 * kMinute, i % 4 < 2 ? 15 : 5);
      b->Advance(7, t + 30 * kMinute, t + kHour, 5);
    }
  }
  const auto calls = capped.Calls();
  // Three closed calls and the standing one.
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(capped.size(), 4u);
  EXPECT_EQ(calls.front().decision.at, 6 * kHour);
  EXPECT_EQ(calls.back().decision.at, 9 * kHour);
  EXPECT_EQ(calls.back().until, kNever);
  const auto all = full.Calls();
  ASSERT_EQ(all.size(), 10u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].decision.at, all[6 + i].decision.at);
    EXPECT_DOUBLE_EQ(calls[i].regret, all[6 + i].regret);
  }
  const HoldSummary a = Total(capped), b = Total(full);
  EXPECT_EQ(a.holds, 5);
  EXPECT_EQ(a.handoffs, 5);
  EXPECT_EQ(a.holds, b.holds);
  EXPECT_EQ(a.holds_came, b.holds_came);
  EXPECT_EQ(a.handoffs_came, b.handoffs_came);
  EXPECT_GT(a.protected_value, 0);
  EXPECT_NEAR(a.protected_value, b.protected_value, 1e-9);
  EXPECT_NEAR(a.forgone_value, b.forgone_value, 1e-9);
  EXPECT_NEAR(a.lost_value, b.lost_value, 1e-9);
  EXPECT_NEAR(a.regret, b.regret, 1e-9);
  EXPECT_NEAR(a.held_gpu_hours, b.held_gpu_hours, 1e-9);
  // Lowering the cap drops more at once.
  capped.SetMaxClosed(0);
  EXPECT_EQ(capped.Calls().size(), 1u);
  EXPECT_NEAR(Total(capped).regret, b.regret, 1e-9);
}

TEST(HoldBookTest, ASavedBookIsCarriedOnAsClosedCalls) {
  HoldBook b;
  for (int i = 0; i < 4; ++i) {
    b.Record(Call(i * kHour, 1, 1));
    b.Advance(7, i * kHour, (i + 1) * kHour, i == 1 ? 15 : 5);
  }
  const HoldBookState saved = b.Save(2);  // the newest two calls, the rest in summaries
  ASSERT_EQ(saved.calls.size(), 2u);
  EXPECT_EQ(saved.calls[0].decision.at, 2 * kHour);
  EXPECT_EQ(saved.calls[1].until, kNever);  // standing when saved
  ASSERT_EQ(saved.base.count("svc"), 1u);
  EXPECT_EQ(saved.base.at("svc").holds, 2);
  // The first call is scored for a cold start after its replacement, in the second's burst.
  EXPECT_EQ(saved.base.at("svc").holds_came, 2);

  HoldBook next;
  next.SetMaxClosed(10);
  next.Carry(saved, 4 * kHour + 5 * kMinute);
  next.Record(Call(5 * kHour, 2, 1));
  next.Advance(7, 5 * kHour, 6 * kHour, 5);
  const auto calls = next.Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].decision.at, 2 * kHour);
  EXPECT_EQ(calls[1].until, 4 * kHour + 5 * kMinute);  // closed when the old book stopped
  EXPECT_NEAR(calls[1].hours, 1.0, 1e-9);              // as scored when saved
  EXPECT_EQ(calls[2].decision.at, 5 * kHour);
  EXPECT_EQ(calls[2].until, kNever);
  const HoldSummary h = next.Summaries().at("svc");
  EXPECT_EQ(h.holds, 5);
  EXPECT_EQ(h.holds_came, 2);
  EXPECT_NEAR(h.forgone_value, Total(b).forgone_value + 2 * 3 * 1.0, 1e-9);
}

}  // namespace
}  // namespace airtime

namespace airtime {
namespace {

// What a call keeps beyond the need follows the demand: when it falls, more of the kept
// replicas idle (the scaler's window keeps them), and forgo more.
TEST(HoldBookTest, HeldReplicasFollowTheDemandWhileTheCallStands) {
  HoldBook b;
  HoldDecision d = Call(0, 2, 1);  // 20 rps needs 2 replicas; 3 kept
  d.demand_rps = 20;
  b.Record(d);
  b.Advance(7, 0, kHour, 20);             // 1 idle replica for an hour
  b.Advance(7, kHour, 2 * kHour, 5);      // demand falls: 2 idle for an hour
  b.Advance(7, 2 * kHour, 3 * kHour, 0);  // none: all 3 idle (no minimum above the need)
  b.Finish(3 * kHour);
  const ScoredHold s = b.Calls().at(0);
  EXPECT_NEAR(s.held_replica_hours, 1 + 2 + 3, 1e-9);
  EXPECT_NEAR(s.forgone_value, 6 * 2 * 3, 1e-9);
  EXPECT_NEAR(b.Summaries().at("svc").held_gpu_hours, 6 * 2, 1e-9);
}

}  // namespace
}  // namespace airtime
