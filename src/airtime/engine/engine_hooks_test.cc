// Tests for the engine's Permit extension point and plug-in wake-ups.
#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/common_plugins.h"

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

}  // namespace
}  // namespace airtime
