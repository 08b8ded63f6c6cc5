// Tests for the engine's Permit extension point, plug-in wake-ups, preemption as a
// transaction (room made for a workload that then does not start is given back, and not made
// again for it before its retry time), and model variants that work produces (no replicas
// before the producer completes, whatever the scale plug-in asks).
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
  std::vector<WorkloadId> forgotten;
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
  void Forget(WorkloadId id) override { calls_->forgotten.push_back(id); }

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

// A workload the engine lets go of (Engine::Forget) is let go of by the policy's plug-ins
// too, once, and only once it has ended.
TEST(EngineHooksTest, PlugInsAreToldOfAWorkloadTheEngineLetsGo) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Calls calls;
  Engine e(c, MakePolicy(&calls));
  e.Handle(Event::Arrival(0, MakeJob("no-thanks", WorkloadKind::kBatch, 2, 60)));
  e.Handle(Event::Arrival(1, MakeJob("yes", WorkloadKind::kBatch, 2, 60)));
  EXPECT_FALSE(e.Forget(0));  // waiting
  EXPECT_FALSE(e.Forget(1));  // running
  EXPECT_TRUE(calls.forgotten.empty());
  e.Handle(Event::Cancel(2, 0));
  EXPECT_TRUE(e.Forget(0));
  EXPECT_TRUE(e.Forget(0));  // again: already let go, nothing more to tell
  EXPECT_EQ(calls.forgotten, (std::vector<WorkloadId>{0}));
}

TEST(EngineHooksTest, WakeAtReportsTheEarliestRequestOfTheCycle) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Calls calls;
  Engine e(c, MakePolicy(&calls, /*wake=*/true));
  EXPECT_EQ(e.Handle(Event::Timer(10 * kHour)).wake_at, 10 * kHour + 1);
  EXPECT_EQ(e.Handle(Event::Timer(11 * kHour)).wake_at, 11 * kHour + 1);
}

// Asks to look again at once in every cycle, and for a cycle an hour on.
class RelookForever : public CyclePlugin {
 public:
  std::string_view name() const override { return "relook"; }
  void AfterAllocate(Engine& engine) override {
    engine.WakeAt(engine.now() + kHour);
    engine.WakeAt(engine.now());
  }
};

TEST(EngineHooksTest, ReLooksInARowAreCappedSoTimeMoves) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Policy p;
  p.name = "relook";
  p.queue_sort = std::make_unique<ArrivalOrder>();
  p.cycle.push_back(std::make_unique<RelookForever>());
  Engine e(c, std::move(p));
  // Each granted re-look is fed back as the driver would: kMaxRelooks in a row, then the
  // hour-later request stands and the chain ends.
  TimeMs at = 10 * kHour;
  int granted = 0;
  for (;;) {
    const TimeMs wake = e.Handle(Event::Timer(at)).wake_at;
    if (wake != at + 1) {
      EXPECT_EQ(wake, at + kHour);
      break;
    }
    ASSERT_LE(++granted, Engine::kMaxRelooks) << "re-looks were granted without end";
    at = wake;
  }
  EXPECT_EQ(granted, Engine::kMaxRelooks);
  // Another event starts a new chain.
  e.Handle(Event::Arrival(at + 5, MakeJob("j", WorkloadKind::kBatch, 1, 60)));
  EXPECT_EQ(e.last_cycle().wake_at, at + 6);
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

// MakePolicy with StopAnything as its preemption plug-in.
Policy StopAnythingPolicy(Calls* calls, int* make_room) {
  Policy p = MakePolicy(calls);
  p.preempt = std::make_unique<StopAnything>(make_room);
  return p;
}

// Preemption is a transaction: room made for a workload a permit then refuses is given back
// (the victim keeps running, untouched: no decision, no stop, no lost work), and the room is
// not made again for it before the retry time.
TEST(EngineHooksTest, RoomAPermitRefusesIsGivenBackAndNotMadeAgainBeforeTheRetryTime) {
  Cluster c = MakeCluster({{"H100", 1, 1}});
  Calls calls;
  int make_room = 0;
  Engine e(c, StopAnythingPolicy(&calls, &make_room));
  e.Handle(Event::Arrival(0, MakeJob("run", WorkloadKind::kTraining, 1, 10 * 3600)));
  ASSERT_EQ(e.job(0).allocations.size(), 1u);
  const AllocationId id = e.job(0).allocations[0];
  const Allocation before = *e.allocation(id);
  // No room: 'run' would be stopped for 'no-room', which the permit then refuses.
  auto& r = e.Handle(Event::Arrival(kMinute, MakeJob("no-room", WorkloadKind::kBatch, 1, 60)));
  EXPECT_EQ(make_room, 1);
  EXPECT_EQ(calls.refused, (std::vector<std::string>{"no-room"}));
  EXPECT_TRUE(r.decisions.empty());
  EXPECT_TRUE(r.stopped.empty());
  ASSERT_NE(e.allocation(id), nullptr);
  EXPECT_EQ(e.allocation(id)->placement.gpus, before.placement.gpus);
  EXPECT_EQ(e.allocation(id)->expected_end, before.expected_end);
  EXPECT_EQ(e.job(0).phase, JobPhase::kRunning);
  EXPECT_EQ(e.job(0).preemptions, 0);
  EXPECT_EQ(e.job(0).lost_gpu_ms, 0);
  EXPECT_FALSE(e.job(0).queued);
  EXPECT_EQ(e.queue(), (std::vector<WorkloadId>{1}));
  EXPECT_EQ(e.state().free_milli_of_type(0), 0);
  EXPECT_EQ(e.job(1).preempt_retry_at, 11 * kMinute);
  // No work is stopped again for 'no-room' until 00:11.
  auto& r2 = e.Handle(Event::Timer(2 * kMinute));
  EXPECT_TRUE(r2.decisions.empty());
  EXPECT_EQ(make_room, 1);
  EXPECT_NE(e.Explain(1).find("no work is stopped for it again before 00:11"), std::string::npos)
      << e.Explain(1);
  e.Handle(Event::Timer(10 * kMinute));
  EXPECT_EQ(make_room, 1);
  e.Handle(Event::Timer(11 * kMinute));
  EXPECT_EQ(make_room, 2);
  EXPECT_EQ(e.job(0).preemptions, 0);
}

// When the workload starts, the statement commits: the victim's stop comes first, then the
// start, and the victim waits in the queue with its progress.
TEST(EngineHooksTest, RoomThatIsUsedStopsTheVictimThenStarts) {
  Cluster c = MakeCluster({{"H100", 1, 1}});
  Calls calls;
  int make_room = 0;
  Engine e(c, StopAnythingPolicy(&calls, &make_room));
  e.Handle(Event::Arrival(0, MakeJob("run", WorkloadKind::kTraining, 1, 10 * 3600)));
  auto& r = e.Handle(Event::Arrival(kMinute, MakeJob("urgent", WorkloadKind::kBatch, 1, 60)));
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].type, DecisionType::kPreempt);
  EXPECT_EQ(r.decisions[0].workload, 0);
  EXPECT_EQ(r.decisions[1].type, DecisionType::kStart);
  EXPECT_EQ(r.decisions[1].workload, 1);
  ASSERT_EQ(r.stopped.size(), 1u);
  EXPECT_EQ(e.job(0).preemptions, 1);
  EXPECT_TRUE(e.job(0).queued);
}

// Room that the placement cannot use (the victim ran on a GPU type the workload may not
// use) is given back too, and the workload's class is not asked again in this pass.
TEST(EngineHooksTest, RoomThePlacementCannotUseIsGivenBack) {
  Cluster c = MakeCluster({{"H100", 1, 1}, {"A100-80GB", 1, 1}});
  Calls calls;
  int make_room = 0;
  Engine e(c, StopAnythingPolicy(&calls, &make_room));
  // 'a' takes the H100 (first fit), 'b' the A100.
  e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kTraining, 1, 10 * 3600)));
  e.Handle(Event::Arrival(0, MakeJob("b", WorkloadKind::kTraining, 1, 10 * 3600)));
  ASSERT_EQ(e.job(0).allocations.size(), 1u);
  ASSERT_EQ(e.job(1).allocations.size(), 1u);
  const GpuTypeId b_type =
      e.cluster().gpu_type(e.allocation(e.job(1).allocations[0])->placement.gpus[0]);
  // A workload that may run only on b's type: StopAnything stops 'a' (the first
  // allocation), which frees nothing it can use.
  WorkloadSpec w = MakeJob("picky", WorkloadKind::kBatch, 1, 60);
  w.shape.allowed_types = {b_type};
  auto& r = e.Handle(Event::Arrival(kMinute, w));
  EXPECT_EQ(make_room, 1);
  EXPECT_TRUE(r.decisions.empty());
  EXPECT_TRUE(r.stopped.empty());
  EXPECT_EQ(e.job(0).phase, JobPhase::kRunning);
  EXPECT_EQ(e.job(0).preemptions, 0);
  EXPECT_EQ(e.job(2).wait.reason, WaitReason::kNoFit);
}

// Scores a node by a table (node index -> score); counts its calls.
class TableScore : public ScorePlugin {
 public:
  TableScore(std::vector<double> by_node, int* calls)
      : by_node_(std::move(by_node)), calls_(calls) {}
  std::string_view name() const override { return "table"; }
  double Score(const Job&, NodeIndex node, const Engine&) const override {
    ++*calls_;
    return by_node_[static_cast<size_t>(node)];
  }

 private:
  std::vector<double> by_node_;
  int* calls_;
};

// Score tiers are a lexicographic order: a later tier only breaks an earlier one's ties,
// however large its own differences, and is not computed where an earlier tier decided.
TEST(EngineHooksTest, ScoreTiersCompareLexicographically) {
  Cluster c = MakeCluster({{"H100", 1, 3}});  // three nodes of one GPU
  auto place = [&](std::vector<double> first, std::vector<double> second, int* calls) {
    Policy p;
    p.name = "tiers";
    p.queue_sort = std::make_unique<ArrivalOrder>();
    p.scores.emplace_back(std::make_unique<TableScore>(std::move(second), calls), 1e9, 1);
    p.scores.emplace_back(std::make_unique<TableScore>(std::move(first), calls), 1.0, 0);
    Engine e(c, std::move(p));
    const auto& r = e.Handle(Event::Arrival(0, MakeJob("j", WorkloadKind::kBatch, 1, 60)));
    EXPECT_EQ(r.decisions.size(), 1u);
    return r.decisions.empty() ? -1 : r.decisions[0].placement.host_node;
  };
  int calls = 0;
  // Tier 0 prefers node 1 by a little; tier 1 (weighted a billion times more) prefers node
  // 2 by a lot: tier 0 decides, and tier 1 is never asked.
  EXPECT_EQ(place({0.0, 0.001, 0.0}, {0.0, 0.0, 1000.0}, &calls), 1);
  EXPECT_EQ(calls, 3);  // tier 0, once per node
  // A tie on tier 0 between nodes 0 and 2: tier 1 decides between them.
  calls = 0;
  EXPECT_EQ(place({5.0, 1.0, 5.0}, {0.0, 9.0, 1.0}, &calls), 2);
  // Tier 0 for the three nodes; tier 1 for nodes 0 and 2 only.
  EXPECT_EQ(calls, 5);
}

}  // namespace
}  // namespace airtime

namespace airtime {
namespace {

// A view one plug-in publishes and another reads within the same cycle (CycleState).
struct Limit {
  int gpus = 0;
};

class PublishLimit : public CyclePlugin {
 public:
  explicit PublishLimit(bool* on) : on_(on) {}
  std::string_view name() const override { return "publish-limit"; }
  void BeforeAllocate(Engine& engine) override {
    if (*on_) engine.cycle_state().Publish<Limit>(&limit_);
  }

 private:
  bool* on_;
  Limit limit_{1};
};

class ReadLimit : public PermitPlugin {
 public:
  std::string_view name() const override { return "read-limit"; }
  bool Permit(const Job& job, const Placement&, const Engine& engine) override {
    const Limit* limit = engine.cycle_state().Find<Limit>();
    return limit == nullptr || job.s().shape.gpu_count <= limit->gpus;
  }
};

TEST(EngineHooksTest, PlugInsShareViewsThroughTheCycleStateForOneCycle) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  bool publish = true;
  Policy p;
  p.name = "views";
  p.queue_sort = std::make_unique<ArrivalOrder>();
  p.cycle.push_back(std::make_unique<PublishLimit>(&publish));
  p.permits.push_back(std::make_unique<ReadLimit>());
  Engine e(c, std::move(p));
  // Published: a 2-GPU job exceeds the limit of 1 and waits.
  e.Handle(Event::Arrival(0, MakeJob("two", WorkloadKind::kBatch, 2, 3600)));
  EXPECT_EQ(e.job(0).phase, JobPhase::kPending);
  ASSERT_NE(e.cycle_state().Find<Limit>(), nullptr);
  // Not published in the next cycle: the last cycle's view is gone, and the job starts.
  publish = false;
  e.Handle(Event::Timer(kMinute));
  EXPECT_EQ(e.cycle_state().Find<Limit>(), nullptr);
  EXPECT_EQ(e.job(0).phase, JobPhase::kRunning);
}

}  // namespace
}  // namespace airtime

namespace airtime {
namespace {

// Asks two replicas for every service, variants produced or not: what keeps an unproduced
// variant from running must be the engine.
class TwoEach : public ScalePlugin {
 public:
  std::string_view name() const override { return "two-each"; }
  int TargetReplicas(const Job&, const Engine&) const override { return 2; }
};

struct Produced {
  // `arrive`: the service's members arrive at 0 (else call Arrive).
  explicit Produced(bool arrive = true)
      : cluster(testing::MakeCluster({{"H100", 8, 1}})), engine(cluster, MakePolicy()) {
    if (arrive) Arrive(0);
  }
  // `producer`, `awaits`: the small variant's ModelVariant::produced_by and awaits_producer.
  void Arrive(TimeMs at, const std::string& producer = "quantize", bool awaits = false) {
    const GpuTypeId h100 = *GpuCatalog::Builtin().Find("H100");
    WorkloadSpec s = testing::MakeService("chat", 0);
    s.realtime.classes = {{"all", {{0, 1.0}}}};
    ModelVariant big;
    big.name = "big";
    big.shape.gpu_count = 2;
    big.throughput_rps = {{h100, 4.0}};
    ModelVariant small = big;
    small.name = "small";
    small.shape.gpu_count = 1;
    small.quality = 0.8;
    small.produced_by = producer;
    small.awaits_producer = awaits;
    s.realtime.variants = {big, small};
    EXPECT_TRUE(ValidateSpec(s, GpuCatalog::Builtin()).ok());
    for (const WorkloadSpec& m : ExpandVariants(s))
      members.push_back(engine.Handle(Event::Arrival(at, m)).arrived);
  }
  static Policy MakePolicy() {
    Policy p;
    p.name = "two-each";
    p.queue_sort = std::make_unique<ArrivalOrder>();
    p.scale = std::make_unique<TwoEach>();
    return p;
  }
  // The quantize job (2 GPUs), arrived at `at`; its allocation once it runs.
  WorkloadId Quantize(TimeMs at) {
    producer = engine
                   .Handle(Event::Arrival(
                       at, testing::MakeJob("quantize", WorkloadKind::kQuantize, 2, 600, at)))
                   .arrived;
    return producer;
  }
  AllocationId ProducerAllocation() const {
    const auto& a = engine.job(producer).allocations;
    return a.empty() ? kNoAllocation : a.front();
  }
  int Live(size_t v) const { return engine.job(members[v]).live_replicas(); }
  const Job& Small() const { return engine.job(members[1]); }

  Cluster cluster;
  Engine engine;
  std::vector<WorkloadId> members;
  WorkloadId producer = kNoWorkload;
};

TEST(ProducedVariantTest, NoReplicasUntilTheProducerCompletesThenInTheSameCycle) {
  Produced f;
  // The producer has not arrived: the plug-in's two replicas of `small` are refused.
  EXPECT_EQ(f.Live(0), 2);
  EXPECT_EQ(f.Live(1), 0);
  EXPECT_EQ(f.Small().target_replicas, 0);
  EXPECT_FALSE(f.Small().queued);
  EXPECT_NE(f.engine.Explain(f.members[1]).find("has not arrived"), std::string::npos)
      << f.engine.Explain(f.members[1]);
  f.Quantize(kMinute);
  ASSERT_NE(f.ProducerAllocation(), kNoAllocation);
  EXPECT_EQ(f.Live(1), 0);
  EXPECT_NE(f.engine.Explain(f.members[1]).find("job 'quantize'"), std::string::npos);
  EXPECT_NE(f.engine.Explain(f.members[1]).find("is running"), std::string::npos);
  // Adopting a process for it is refused as well.
  EXPECT_FALSE(f.engine.Adopt(f.members[1], {7}).ok());
  f.engine.Handle(Event::Timer(5 * kMinute));
  EXPECT_EQ(f.Live(1), 0);
  // Completion: the variant runs from the cycle of that event.
  const CycleResult& done =
      f.engine.Handle(Event::Completion(11 * kMinute, f.ProducerAllocation()));
  int started = 0;
  for (const Decision& d : done.decisions)
    started += d.type == DecisionType::kStart && d.workload == f.members[1];
  EXPECT_EQ(started, 2);
  EXPECT_EQ(f.Live(1), 2);
  EXPECT_TRUE(f.engine.VariantAvailable(f.Small().s().realtime, 1));
}

TEST(ProducedVariantTest, AVariantProducedBeforeItsServiceArrivesRunsFromTheArrival) {
  Produced f(/*arrive=*/false);
  f.Quantize(0);
  f.engine.Handle(Event::Completion(10 * kMinute, f.ProducerAllocation()));
  EXPECT_EQ(f.engine.job(f.producer).phase, JobPhase::kDone);
  f.Arrive(20 * kMinute);
  EXPECT_EQ(f.Live(0), 2);
  EXPECT_EQ(f.Live(1), 2);
}

TEST(ProducedVariantTest, AFailedOrCancelledProducerLeavesTheVariantUnavailable) {
  Produced f;
  f.Quantize(0);
  ASSERT_NE(f.ProducerAllocation(), kNoAllocation);
  // A failed run: the job waits to run again (it does at once here), the variant waits too.
  f.engine.Handle(Event::Failure(5 * kMinute, f.ProducerAllocation()));
  EXPECT_EQ(f.Live(1), 0);
  EXPECT_EQ(f.engine.job(f.producer).failures, 1);
  EXPECT_FALSE(f.engine.VariantAvailable(f.Small().s().realtime, 1));
  // Given up (as the daemon does after its last attempt): cancelled, for good.
  f.engine.Handle(Event::Cancel(6 * kMinute, f.producer));
  for (TimeMs t = 7 * kMinute; t < 2 * kHour; t += 10 * kMinute) {
    f.engine.Handle(Event::Timer(t));
    EXPECT_EQ(f.Live(1), 0);
  }
  EXPECT_FALSE(f.engine.VariantAvailable(f.Small().s().realtime, 1));
  EXPECT_NE(f.engine.Explain(f.members[1]).find("cancelled: the variant will not run"),
            std::string::npos)
      << f.engine.Explain(f.members[1]);
  EXPECT_EQ(f.Live(0), 2);  // the variants available from the start are unaffected
}

// A variant that awaits a producer no one has named yet runs nothing; once a job is named
// (a later submission's, the daemon's Engine::SetVariantProducer on every member) and
// completes, it runs from that cycle.
TEST(ProducedVariantTest, AnAwaitedVariantRunsOnceTheProducerNamedLaterCompletes) {
  Produced f(/*arrive=*/false);
  f.Arrive(0, "", /*awaits=*/true);
  EXPECT_EQ(f.Live(0), 2);
  EXPECT_EQ(f.Live(1), 0);
  EXPECT_FALSE(f.engine.VariantAvailable(f.Small().s().realtime, 1));
  EXPECT_NE(f.engine.Explain(f.members[1]).find("none names it yet"), std::string::npos)
      << f.engine.Explain(f.members[1]);
  f.Quantize(kMinute);
  ASSERT_NE(f.ProducerAllocation(), kNoAllocation);
  EXPECT_EQ(f.Live(1), 0);  // a job that names no variant is not its producer
  for (WorkloadId m : f.members) {
    auto spec = f.engine.SetVariantProducer(m, 1, "quantize");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    EXPECT_EQ((*spec)->realtime.variants[1].produced_by, "quantize");
    EXPECT_EQ(&f.engine.job(m).s(), spec->get());
  }
  EXPECT_FALSE(f.engine.SetVariantProducer(f.members[0], 2, "quantize").ok());
  EXPECT_FALSE(f.engine.SetVariantProducer(f.producer, 1, "quantize").ok());  // not a member
  EXPECT_NE(f.engine.Explain(f.members[1]).find("job 'quantize'"), std::string::npos);
  f.engine.Handle(Event::Completion(11 * kMinute, f.ProducerAllocation()));
  EXPECT_EQ(f.Live(1), 2);
  EXPECT_TRUE(f.engine.VariantAvailable(f.Small().s().realtime, 1));
}

}  // namespace
}  // namespace airtime
