// Tests for the engine's Permit extension point, plug-in wake-ups, and the wait before room
// made by preemption is made again for a workload a permit refused.
#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/plugins/common_plugins.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

struct Calls {
  std::vector<std::string> unplaced, permitted, refused;
};

// Refuses workloads whose name starts with "no"; records every call.
class RecordingPermit : public PermitPlugin {
 public:
  explicit RecordingPermit(Calls* calls) : calls_(calls) {}
  std::string_view name() const override { return "recording"; }
  bool Permit(const Job& job, const Placement& p, const Engine&) override {
    EXPECT_EQ(static_cast<int>(p.gpus.size()), job.s().shape.gpu_count);
    const bool ok = job.s().name.rfind("no", 0) != 0;
    (ok ? calls_->permitted : calls_->refused).push_back(job.s().name);
    return ok;
  }
  void Unplaced(const Job& job, const Engine&) override {
    calls_->unplaced.push_back(job.s().name);
  }
  std::string WhyHeld(const Job& job, const Engine&) const override {
    return "'" + job.s().name + "' is on the refusal list";
  }

 private:
  Calls* calls_;
};

class WakeEveryHour : public CyclePlugin {
 public:
  std::string_view name() const override { return "wake"; }
  void AfterAllocate(Engine& engine) override {
    engine.WakeAt(engine.now() + 2 * kHour);
    engine.WakeAt(engine.now() + kHour);  // the earliest request wins
    engine.WakeAt(engine.now() - kHour);  // the past means "as soon as possible"
  }
};

Policy MakePolicy(Calls* calls, bool wake = false) {
  Policy p;
  p.name = "hooks";
  p.queue_sort = std::make_unique<ArrivalOrder>();
  p.permits.push_back(std::make_unique<RecordingPermit>(calls));
  if (wake) p.cycle.push_back(std::make_unique<WakeEveryHour>());
  return p;
}

TEST(EngineHooksTest, PermitRefusalKeepsTheWorkloadWaitingWithoutCachingTheShape) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Calls calls;
  Engine e(c, MakePolicy(&calls));
  auto& r = e.Handle(Event::Arrival(0, MakeJob("no-thanks", WorkloadKind::kBatch, 2, 60)));
  EXPECT_TRUE(r.decisions.empty());
  ASSERT_EQ(r.waiting.size(), 1u);
  EXPECT_EQ(r.waiting[0].second.reason, WaitReason::kPolicy);
  EXPECT_TRUE(r.waiting[0].second.fits_now);  // the policy, not the hardware, holds it
  EXPECT_NE(e.Explain(0).find("'no-thanks' is on the refusal list"), std::string::npos)
      << e.Explain(0);
  // The same shape is still tried for the next workload in the same pass.
  auto& r2 = e.Handle(Event::Arrival(1, MakeJob("yes", WorkloadKind::kBatch, 2, 60)));
  ASSERT_EQ(r2.decisions.size(), 1u);
  EXPECT_EQ(r2.decisions[0].type, DecisionType::kStart);
  EXPECT_EQ(calls.refused, (std::vector<std::string>{"no-thanks", "no-thanks"}));
  EXPECT_EQ(calls.permitted, (std::vector<std::string>{"yes"}));
  EXPECT_TRUE(calls.unplaced.empty());
  // Only 2 GPUs are left: a 4-GPU workload is unplaced (not asked to permit).
  e.Handle(Event::Arrival(2, MakeJob("big", WorkloadKind::kTraining, 4, 60)));
  EXPECT_EQ(calls.unplaced, (std::vector<std::string>{"big"}));
  EXPECT_EQ(e.job(2).wait.reason, WaitReason::kNoFit);
  EXPECT_EQ(e.last_cycle().wake_at, kNever);
}

TEST(EngineHooksTest, WakeAtReportsTheEarliestRequestOfTheCycle) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Calls calls;
  Engine e(c, MakePolicy(&calls, /*wake=*/true));
  EXPECT_EQ(e.Handle(Event::Timer(10 * kHour)).wake_at, 10 * kHour + 1);
  EXPECT_EQ(e.Handle(Event::Timer(11 * kHour)).wake_at, 11 * kHour + 1);
}

// Stops the first running allocation whenever asked to make room; asks to be tried again
// after 10 minutes when that room went unused.
class StopAnything : public PreemptPlugin {
 public:
  explicit StopAnything(int* calls) : calls_(calls) {}
  std::string_view name() const override { return "stop-anything"; }
  bool MakeRoom(const Job&, Engine& engine) override {
    ++*calls_;
    if (engine.allocations().empty()) return false;
    engine.Preempt(engine.allocations().begin()->first, "asked to");
    return true;
  }
  DurationMs RetryAfterRefusal(const Job&) const override { return 10 * kMinute; }

 private:
  int* calls_;
};

TEST(EngineHooksTest, RoomAPermitRefusesIsNotMadeAgainBeforeTheRetryTime) {
  Cluster c = MakeCluster({{"H100", 1, 1}});
  Calls calls;
  int make_room = 0;
  Policy p = MakePolicy(&calls);
  p.preempt = std::make_unique<StopAnything>(&make_room);
  Engine e(c, std::move(p));
  e.Handle(Event::Arrival(0, MakeJob("run", WorkloadKind::kTraining, 1, 10 * 3600)));
  // No room: 'run' is stopped for 'no-room', which the permit then refuses.
  auto& r = e.Handle(Event::Arrival(kMinute, MakeJob("no-room", WorkloadKind::kBatch, 1, 60)));
  EXPECT_EQ(make_room, 1);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].type, DecisionType::kPreempt);
  EXPECT_EQ(e.job(1).preempt_retry_at, 11 * kMinute);
  // 'run' takes its GPU back; no work is stopped again for 'no-room' until 00:11.
  auto& r2 = e.Handle(Event::Timer(2 * kMinute));
  ASSERT_EQ(r2.decisions.size(), 1u);
  EXPECT_EQ(r2.decisions[0].type, DecisionType::kStart);
  EXPECT_EQ(make_room, 1);
  EXPECT_NE(e.Explain(1).find("no work is stopped for it again before 00:11"), std::string::npos)
      << e.Explain(1);
  e.Handle(Event::Timer(10 * kMinute));
  EXPECT_EQ(make_room, 1);
  e.Handle(Event::Timer(11 * kMinute));
  EXPECT_EQ(make_room, 2);
}

}  // namespace
}  // namespace airtime
