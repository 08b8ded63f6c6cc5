#include "airtime/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "airtime/engine/test_util.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakeService;

Engine MakeEngine(const Cluster& c, const std::string& policy, EngineOptions options) {
  auto p = PolicyRegistry::Builtin().Make(policy, c);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return Engine(c, std::move(*p), options);
}

Engine MakeEngine(const Cluster& c, const std::string& policy, uint64_t seed = 0) {
  return MakeEngine(c, policy, EngineOptions{seed});
}

// An embedding job of `milli` of one GPU, `work` seconds long.
WorkloadSpec Fraction(const std::string& name, int milli, double work) {
  WorkloadSpec s = MakeJob(name, WorkloadKind::kEmbed, 1, work);
  s.shape.mode = ShareMode::kFraction;
  s.shape.gpu_milli = milli;
  return s;
}

int Starts(const CycleResult& r) {
  int n = 0;
  for (const auto& d : r.decisions) n += d.type == DecisionType::kStart;
  return n;
}

// The allocation of the first start among a cycle's decisions.
AllocationId FirstStarted(const CycleResult& r) {
  for (const auto& d : r.decisions)
    if (d.type == DecisionType::kStart) return d.allocation;
  return kNoAllocation;
}

TEST(EngineTest, FifoBlocksBehindHeadBestFitDoesNot) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  for (const char* policy : {"fifo", "bestfit"}) {
    Engine e = MakeEngine(c, policy);
    EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kTraining, 4, 3600)))),
              1);
    EXPECT_EQ(Starts(e.Handle(Event::Arrival(1, MakeJob("b", WorkloadKind::kTraining, 8, 3600)))),
              0);
    const CycleResult& r = e.Handle(Event::Arrival(2, MakeJob("c", WorkloadKind::kBatch, 1, 60)));
    if (std::string(policy) == "fifo") {
      EXPECT_EQ(Starts(r), 0);
      ASSERT_EQ(r.waiting.size(), 2u);
      EXPECT_EQ(r.waiting[0].second.reason, WaitReason::kNoFit);
      EXPECT_EQ(r.waiting[1].second.reason, WaitReason::kBehindHead);
      EXPECT_TRUE(r.waiting[1].second.fits_now);
      EXPECT_NE(e.Explain(2).find("head-of-line"), std::string::npos) << e.Explain(2);
    } else {
      EXPECT_EQ(Starts(r), 1);
    }
  }
}

TEST(EngineTest, CompletionStartsTheNextJob) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  Engine e = MakeEngine(c, "fifo");
  auto& r0 = e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kTraining, 8, 3600)));
  ASSERT_EQ(r0.decisions.size(), 1u);
  AllocationId a = r0.decisions[0].allocation;
  // H100 speed 1.8: 3600 reference-seconds take 2000 s.
  EXPECT_EQ(r0.decisions[0].expected_end, 2000 * kSecond);
  e.Handle(Event::Arrival(10, MakeJob("b", WorkloadKind::kTraining, 8, 3600)));
  const std::string why = e.Explain(1);
  EXPECT_NE(why.find("'a'"), std::string::npos) << why;
  EXPECT_NE(why.find("00:33:20"), std::string::npos) << why;
  auto& r1 = e.Handle(Event::Completion(2000 * kSecond, a));
  EXPECT_EQ(Starts(r1), 1);
  EXPECT_EQ(e.job(0).phase, JobPhase::kDone);
  EXPECT_EQ(e.job(1).phase, JobPhase::kRunning);
  EXPECT_EQ(e.job(1).waited, 2000 * kSecond - 10);
}

// A long-running driver forgets ended jobs: a chunk of ids whose jobs are all forgotten gives
// its memory back and reads an ended stand-in; names go; live work, services and the
// decisions that follow are as they would have been.
TEST(EngineTest, ForgottenJobsGiveTheirMemoryBackAndChangeNoDecision) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  Engine f = MakeEngine(c, "fifo"), g = MakeEngine(c, "fifo");
  const size_t n = 2 * JobTable::kChunk + 2;
  auto both = [&](const Event& e) {
    g.Handle(e);
    return f.Handle(e);
  };
  for (size_t i = 0; i < n; ++i)
    both(Event::Arrival(static_cast<TimeMs>(i),
                        MakeJob("j" + std::to_string(i), WorkloadKind::kBatch, 1, 3600)));
  both(Event::Arrival(static_cast<TimeMs>(n), MakeService("svc", 10, 1)));
  EXPECT_EQ(f.job_chunks_held(), 3u);
  EXPECT_FALSE(f.Forget(0));  // running
  for (size_t i = 0; i + 1 < n; ++i)
    both(Event::Cancel(static_cast<TimeMs>(n + 1), static_cast<WorkloadId>(i)));
  both(Event::Cancel(static_cast<TimeMs>(n + 2), static_cast<WorkloadId>(n)));  // the service
  for (size_t i = 0; i + 1 < n; ++i) EXPECT_TRUE(f.Forget(static_cast<WorkloadId>(i))) << i;
  EXPECT_TRUE(f.Forget(0));                                // again: nothing more to do
  EXPECT_FALSE(f.Forget(static_cast<WorkloadId>(n - 1)));  // not ended
  EXPECT_FALSE(f.Forget(static_cast<WorkloadId>(n)));      // a service stays whole
  EXPECT_EQ(f.job_chunks_held(), 1u);  // the last chunk: j128, j129 and the service
  EXPECT_EQ(f.job(0).phase, JobPhase::kDone);
  EXPECT_EQ(f.job(0).s().name, "");
  EXPECT_FALSE(f.FindByName("j0").has_value());
  EXPECT_EQ(f.FindByName("j" + std::to_string(n - 1)), static_cast<WorkloadId>(n - 1));
  EXPECT_EQ(f.job(static_cast<WorkloadId>(n)).s().name, "svc");
  EXPECT_EQ(f.job_count(), n + 1);
  const CycleResult& r = both(
      Event::Arrival(static_cast<TimeMs>(n + 3), MakeJob("late", WorkloadKind::kBatch, 4, 60)));
  const CycleResult& same = g.last_cycle();
  EXPECT_EQ(r.arrived, static_cast<WorkloadId>(n + 1));
  ASSERT_EQ(r.decisions.size(), same.decisions.size());
  for (size_t i = 0; i < r.decisions.size(); ++i) {
    EXPECT_EQ(r.decisions[i].type, same.decisions[i].type);
    EXPECT_EQ(r.decisions[i].workload, same.decisions[i].workload);
    EXPECT_EQ(r.decisions[i].placement.gpus, same.decisions[i].placement.gpus);
  }
  EXPECT_EQ(Starts(r), 1);
}

TEST(EngineTest, FractionsShareTheTightestGpu) {
  Cluster c = MakeCluster({{"A100-80GB", 2, 1}});
  Engine e = MakeEngine(c, "bestfit");
  auto frac = [](const std::string& n, int milli) { return Fraction(n, milli, 100); };
  GpuIndex g1 = e.Handle(Event::Arrival(0, frac("x", 500))).decisions[0].placement.gpus[0];
  GpuIndex g2 = e.Handle(Event::Arrival(0, frac("y", 300))).decisions[0].placement.gpus[0];
  EXPECT_EQ(g1, g2);
  // A whole-GPU job still finds the untouched GPU.
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, MakeJob("w", WorkloadKind::kBatch, 1, 100)))), 1);
  EXPECT_EQ(e.state().allocated_milli(), 1800);
}

TEST(EngineTest, MigSlicesPackOnMigNodes) {
  Cluster c = MakeCluster({{"H100", 1, 1, "", "", true}});
  Engine e = MakeEngine(c, "bestfit");
  auto mig = [](const std::string& n, const std::string& profile) {
    WorkloadSpec s = MakeJob(n, WorkloadKind::kEval, 1, 100);
    s.shape.mode = ShareMode::kMig;
    s.shape.mig_profile = profile;
    return s;
  };
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, mig("a", "3g.40gb")))), 1);
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, mig("b", "3g.40gb")))), 1);
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, mig("c", "1g.10gb")))), 0);  // memory is full
}

TEST(EngineTest, PreemptionKeepsCheckpointedWork) {
  RunSegment seg{0, 0, 2.0, 0, {}};
  WorkloadSpec s = MakeJob("t", WorkloadKind::kTraining, 1, 10000);
  s.checkpoint_interval = 10 * kMinute;
  StopOutcome out = StopSegment(s, seg, 25 * kMinute);
  EXPECT_DOUBLE_EQ(out.work_saved, 20 * 60 * 2.0);
  EXPECT_EQ(out.lost_ms, 5 * kMinute);
  s.checkpoint_interval = 0;
  out = StopSegment(s, seg, 25 * kMinute);
  EXPECT_EQ(out.lost_ms, 25 * kMinute);
  EXPECT_DOUBLE_EQ(out.work_saved, 0);
}

// An end no TimeMs holds is never: the cast of such a double once wrapped, and a job of 1e17
// s of work (or slowed 1e-12 times by interference) ended 1 ms after it started.
TEST(EngineTest, AnEndPastAnyTimeIsNever) {
  WorkloadSpec s = MakeJob("t", WorkloadKind::kTraining, 1, 1e12);
  RunSegment slow{0, 0, 1e-12, 0, {}};
  EXPECT_EQ(SegmentEnd(s, slow), kNever);
  // Slow first, then fast enough to end: the end is found after the change.
  RunSegment later{0, 0, 1e-12, 0, {{kHour, 1e9}}};
  EXPECT_EQ(SegmentEnd(s, later), kHour + 1000 * kSecond);
  EXPECT_EQ(SaturatedMs(1e300), kNever);
  EXPECT_EQ(SaturatedMs(-1e300), -kNever);
  EXPECT_EQ(FromSeconds(1e17), kNever);
  EXPECT_EQ(FromSeconds(2.5), 2500);
}

TEST(EngineTest, SpeedChangesMidRunMoveTheEndAndKeepCheckpointedWork) {
  // 5 min of restart overhead, then speed 2 until 00:25, 1 from then on.
  RunSegment seg{0, 5 * kMinute, 2.0, 100, {{25 * kMinute, 1.0}}};
  EXPECT_DOUBLE_EQ(seg.SpeedAt(24 * kMinute), 2.0);
  EXPECT_DOUBLE_EQ(seg.SpeedAt(25 * kMinute), 1.0);
  EXPECT_DOUBLE_EQ(SegmentWork(seg, 3 * kMinute), 0);
  EXPECT_DOUBLE_EQ(SegmentWork(seg, 25 * kMinute), 20 * 60 * 2.0);
  EXPECT_DOUBLE_EQ(SegmentWork(seg, 35 * kMinute), 20 * 60 * 2.0 + 10 * 60);
  WorkloadSpec s = MakeJob("t", WorkloadKind::kTraining, 1, 100 + 2400 + 1800);
  // 2,400 s of work by 00:25, the last 1,800 at speed 1: done at 00:55.
  EXPECT_EQ(SegmentEnd(s, seg), 55 * kMinute);
  // A checkpoint every 15 min of run time: at 00:20 and 00:35 (after the overhead).
  s.checkpoint_interval = 15 * kMinute;
  StopOutcome out = StopSegment(s, seg, 40 * kMinute);
  EXPECT_DOUBLE_EQ(out.work_saved, 100 + 20 * 60 * 2.0 + 10 * 60);
  EXPECT_EQ(out.lost_ms, 5 * kMinute);
  // A change during the overhead applies from the first second of progress.
  RunSegment early{0, 5 * kMinute, 2.0, 0, {{kMinute, 0.5}}};
  EXPECT_DOUBLE_EQ(SegmentWork(early, 15 * kMinute), 10 * 60 * 0.5);
}

// Many shares of one GPU (a placement once cost the square of them): each share is slowed
// by every other, its own family's included, as with a few.
TEST(EngineTest, ManySharesOfOneGpuEachSeeAllTheOthers) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  EngineOptions o{1};
  o.interference = &InterferenceModel::Gavel();
  Engine e = MakeEngine(c, "fifo", o);
  const InterferenceModel& m = InterferenceModel::Gavel();
  const std::string a = "ResNet-50", b = "Recommendation";
  for (int i = 0; i < 40; ++i) {
    WorkloadSpec s = MakeJob("j" + std::to_string(i), WorkloadKind::kTraining, 1, 3600);
    s.shape.mode = ShareMode::kFraction;
    s.shape.gpu_milli = 25;
    s.family = i % 2 ? b : a;
    e.Handle(Event::Arrival(i, s));
  }
  ASSERT_EQ(e.allocations().size(), 40u);
  for (const auto& [id, alloc] : e.allocations()) {
    const bool is_a = e.job(alloc.workload).s().family == a;
    const std::string& mine = is_a ? a : b;
    double want = 1.0;
    for (int k = 0; k < 19; ++k) want *= m.Factor(mine, mine);
    for (int k = 0; k < 20; ++k) want *= m.Factor(mine, is_a ? b : a);
    EXPECT_NEAR(alloc.interference, want, want * 1e-12) << mine;
  }
}

TEST(EngineTest, WorkSharingAGpuSlowsDownAsMeasuredAndSpeedsUpWhenItsNeighbourLeaves) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  EngineOptions o{1};
  o.interference = &InterferenceModel::Gavel();
  Engine e = MakeEngine(c, "fifo", o);
  auto half = [](std::string name, std::string family, double work) {
    WorkloadSpec s = MakeJob(std::move(name), WorkloadKind::kTraining, 1, work);
    s.shape.mode = ShareMode::kFraction;
    s.shape.gpu_milli = 500;
    s.family = std::move(family);
    return s;
  };
  const double f = InterferenceModel::Gavel().Factor("ResNet-50", "Recommendation");
  ASSERT_LT(f, 1.0);
  // Alone: full speed, done in an hour.
  auto& r1 = e.Handle(Event::Arrival(0, half("resnet", "ResNet-50", 3600)));
  ASSERT_EQ(Starts(r1), 1);
  const AllocationId resnet = r1.decisions[0].allocation;
  EXPECT_EQ(r1.decisions[0].expected_end, kHour);
  // A recommendation model joins at 00:30: both run at f from then on.
  auto& r2 = e.Handle(Event::Arrival(30 * kMinute, half("rec", "Recommendation", 3600)));
  ASSERT_EQ(r2.decisions.size(), 2u);
  EXPECT_EQ(r2.decisions[0].type, DecisionType::kStart);
  const AllocationId rec = r2.decisions[0].allocation;
  EXPECT_DOUBLE_EQ(e.allocation(rec)->interference, f);
  EXPECT_EQ(r2.decisions[0].expected_end,
            30 * kMinute + static_cast<TimeMs>(std::ceil(3600 / f * 1000)));
  EXPECT_EQ(r2.decisions[1].type, DecisionType::kRetime);
  EXPECT_EQ(r2.decisions[1].allocation, resnet);
  const TimeMs resnet_end = 30 * kMinute + static_cast<TimeMs>(std::ceil(1800 / f * 1000));
  EXPECT_EQ(r2.decisions[1].expected_end, resnet_end);
  // The ResNet finishes; the recommendation model is alone again and speeds up at once.
  auto& r3 = e.Handle(Event::Completion(resnet_end, resnet));
  ASSERT_EQ(r3.decisions.size(), 1u);
  EXPECT_EQ(r3.decisions[0].type, DecisionType::kRetime);
  EXPECT_EQ(r3.decisions[0].allocation, rec);
  EXPECT_DOUBLE_EQ(e.allocation(rec)->interference, 1.0);
  const double done = ToSeconds(resnet_end - 30 * kMinute) * f;
  EXPECT_NEAR(ToSeconds(r3.decisions[0].expected_end - resnet_end), 3600 - done, 0.002);
  // Pairs Gavel saw fit side by side (ResNet-18 with anything) and work of no known family
  // do not slow down.
  EXPECT_DOUBLE_EQ(InterferenceModel::Gavel().Factor("resnet-18", "LM"), 1.0);
  EXPECT_DOUBLE_EQ(InterferenceModel::Gavel().Factor("", "ResNet-50"),
                   InterferenceModel::Gavel().default_factor());
}

TEST(EngineTest, NodeDownRequeuesWithProgressAndRestartCost) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 2}});
  Engine e = MakeEngine(c, "bestfit");
  WorkloadSpec s = MakeJob("t", WorkloadKind::kTraining, 8, 7200);
  s.checkpoint_interval = 30 * kMinute;
  s.restart_cost = 5 * kMinute;
  auto& r = e.Handle(Event::Arrival(0, s));
  NodeIndex node = c.gpu(r.decisions[0].placement.gpus[0]).node;
  auto& r2 = e.Handle(Event::NodeDown(45 * kMinute, node));
  ASSERT_GE(r2.decisions.size(), 2u);
  EXPECT_EQ(r2.decisions[0].type, DecisionType::kPreempt);
  EXPECT_EQ(r2.decisions[1].type, DecisionType::kStart);
  EXPECT_NE(c.gpu(r2.decisions[1].placement.gpus[0]).node, node);
  // 30 min kept at speed 1.0 = 1800 s; 1.5 h left plus 5 min restart.
  EXPECT_DOUBLE_EQ(e.job(0).work_saved, 1800);
  EXPECT_EQ(r2.decisions[1].expected_end, 45 * kMinute + 5 * kMinute + 5400 * kSecond);
  EXPECT_EQ(e.job(0).failures, 0);
  EXPECT_EQ(e.job(0).preemptions, 1);
}

// A service whose target is 0 (no demand, no minimum; a model variant its mix gives none)
// says so: it read "needs 0 more replica(s) ...; not yet considered by a decision cycle".
TEST(EngineTest, AServiceWithATargetOfZeroSaysSo) {
  Cluster c = MakeCluster({{"L40S", 4, 1}});
  Engine e = MakeEngine(c, "fifo");
  WorkloadSpec svc = MakeService("svc", 10);
  svc.realtime.min_replicas = 0;
  e.Handle(Event::Arrival(0, svc));
  e.Handle(Event::Demand(kMinute, 0, 0));
  EXPECT_EQ(e.job(0).target_replicas, 0);
  EXPECT_EQ(e.Explain(0).rfind("no replica: its target is 0 (demand 0.0 req/s)", 0), 0u)
      << e.Explain(0);
  e.Handle(Event::Demand(2 * kMinute, 0, 15));
  EXPECT_NE(e.Explain(0).find("with 2 replica(s) (target 2)"), std::string::npos) << e.Explain(0);
}

TEST(EngineTest, ServicesScaleWithDemand) {
  Cluster c = MakeCluster({{"L40S", 4, 1}});
  Engine e = MakeEngine(c, "fifo");
  e.Handle(Event::Arrival(0, MakeService("svc", 10)));
  auto& r = e.Handle(Event::Demand(0, 0, 25));
  EXPECT_EQ(Starts(r), 3);
  EXPECT_EQ(e.job(0).live_replicas(), 3);
  EXPECT_EQ(r.decisions[1].ready_at, 60 * kSecond);
  auto& r2 = e.Handle(Event::Demand(kHour, 0, 5));
  int releases = 0;
  for (const auto& d : r2.decisions) releases += d.type == DecisionType::kRelease;
  EXPECT_EQ(releases, 2);
  auto& r3 = e.Handle(Event::Demand(2 * kHour, 0, 100));
  EXPECT_EQ(Starts(r3), 3);  // only 4 GPUs
  EXPECT_EQ(r3.waiting.size(), 1u);
  EXPECT_NE(e.Explain(0).find("more replica"), std::string::npos) << e.Explain(0);
}

TEST(EngineTest, CancelReleasesAndDequeues) {
  Cluster c = MakeCluster({{"T4", 1, 1}});
  Engine e = MakeEngine(c, "fifo");
  e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kBatch, 1, 1000)));
  e.Handle(Event::Arrival(0, MakeJob("b", WorkloadKind::kBatch, 1, 1000)));
  auto& r = e.Handle(Event::Cancel(5, 0));
  EXPECT_EQ(r.decisions[0].type, DecisionType::kRelease);
  EXPECT_EQ(Starts(r), 1);
  EXPECT_EQ(e.job(0).phase, JobPhase::kCancelled);
  EXPECT_TRUE(e.Handle(Event::Cancel(6, 1)).decisions[0].type == DecisionType::kRelease);
  EXPECT_FALSE(e.Handle(Event::Cancel(7, 99)).event_status.ok());
}

// A job that fits nowhere because the nodes with its GPUs free lack host CPU or memory is
// told so, not that the GPUs are fragmented; a job short of GPUs in one place still is.
TEST(EngineTest, AJobShortOfHostCpuOrMemoryIsToldSoNotFragmentation) {
  std::vector<Node> nodes(2);
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].name = "n" + std::to_string(i);
    nodes[i].gpu_type = *GpuCatalog::Builtin().Find("H100");
    nodes[i].gpu_count = 4;
    nodes[i].cpu_milli = 16000;
    nodes[i].memory_mib = 64 * 1024;
  }
  Cluster c = *Cluster::Build("test", nodes);
  Engine e = MakeEngine(c, "bestfit");  // no head-of-line blocking: each waits for itself
  for (const char* name : {"a", "b"}) {
    WorkloadSpec s = MakeJob(name, WorkloadKind::kTraining, 1, 3600);
    s.shape.cpu_milli = 12000;
    s.shape.memory_mib = 8 * 1024;
    e.Handle(Event::Arrival(0, s));
  }
  ASSERT_EQ(e.job(1).phase, JobPhase::kRunning);
  WorkloadSpec cpu = MakeJob("cpu", WorkloadKind::kBatch, 2, 600);
  cpu.shape.cpu_milli = 8000;
  e.Handle(Event::Arrival(1, cpu));
  std::string why = e.Explain(2);
  EXPECT_NE(why.find("the GPUs it asks for are free, but not the host resources: on n0, 4 of "
                     "the 8 CPUs it asks are free, and so on 1 other node(s) (host CPU or "
                     "memory, not GPUs, keeps it waiting)"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("fragmentation"), std::string::npos) << why;

  WorkloadSpec memory = MakeJob("memory", WorkloadKind::kBatch, 1, 600);
  memory.shape.memory_mib = 60 * 1024;
  e.Handle(Event::Arrival(2, memory));
  why = e.Explain(3);
  EXPECT_NE(why.find("56 of the 60 GiB of memory it asks are free"), std::string::npos) << why;

  // A host-only task (no GPU) short of CPU everywhere.
  WorkloadSpec host = MakeJob("host", WorkloadKind::kBatch, 0, 600);
  host.shape.cpu_milli = 6000;
  e.Handle(Event::Arrival(3, host));
  why = e.Explain(4);
  EXPECT_NE(why.find("it needs no GPU, and no node it may use has the host resources it asks "
                     "free: on n0, 4 of the 6 CPUs it asks are free"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("fragmentation"), std::string::npos) << why;
  EXPECT_EQ(why.find("GPU(s) of an allowed type free"), std::string::npos) << why;
  EXPECT_NE(why.find("2 allocation(s) hold host CPU or memory; the next to free up is 'a' "
                     "(training, priority 0) on n0"),
            std::string::npos)
      << why;

  // Six GPUs are free, three on each node: four in one place are fragmentation.
  e.Handle(Event::Arrival(4, MakeJob("gpus", WorkloadKind::kBatch, 4, 600)));
  why = e.Explain(5);
  EXPECT_NE(why.find("(fragmentation)"), std::string::npos) << why;
  EXPECT_EQ(why.find("host CPU"), std::string::npos) << why;
}

TEST(EngineTest, ImpossibleShapesSayWhy) {
  Cluster c = MakeCluster({{"T4", 4, 2}});
  Engine e = MakeEngine(c, "bestfit");
  WorkloadSpec h = MakeJob("h", WorkloadKind::kTraining, 1, 10);
  h.shape.allowed_types = {*GpuCatalog::Builtin().Find("H100")};
  auto& r = e.Handle(Event::Arrival(0, h));
  EXPECT_EQ(r.waiting[0].second.reason, WaitReason::kNoSuchHardware);
  EXPECT_NE(e.Explain(0).find("T4"), std::string::npos);
  auto& r2 = e.Handle(Event::Arrival(0, MakeJob("big", WorkloadKind::kTraining, 6, 10)));
  EXPECT_EQ(r2.waiting[1].second.reason, WaitReason::kTooLarge);
  WorkloadSpec any = MakeJob("any", WorkloadKind::kTraining, 6, 10);
  any.shape.locality = Locality::kAny;
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, any))), 1);
}

// A type whose GPUs could never take the shape is no hardware for it: more memory than its
// GPUs have, or a MIG profile on a cluster without MIG nodes of a type that has it.
TEST(EngineTest, ShapesNoInstalledGpuCanTakeAreNeverFits) {
  Cluster c = MakeCluster({{"H100", 4, 1}, {"A100-80GB", 4, 1}});
  Engine e = MakeEngine(c, "bestfit");
  WorkloadSpec memory = MakeJob("memory", WorkloadKind::kTraining, 1, 10);
  memory.shape.memory_gb = 100;
  e.Handle(Event::Arrival(0, memory));
  EXPECT_TRUE(e.job(0).never_fits);
  EXPECT_EQ(e.job(0).wait.reason, WaitReason::kNoSuchHardware);
  EXPECT_NE(e.Explain(0).find("no installed GPU can ever take it"), std::string::npos)
      << e.Explain(0);
  WorkloadSpec mig = MakeJob("mig", WorkloadKind::kEval, 1, 10);
  mig.shape.mode = ShareMode::kMig;
  mig.shape.mig_profile = "1g.10gb";
  e.Handle(Event::Arrival(0, mig));
  EXPECT_EQ(e.job(1).wait.reason, WaitReason::kNoSuchHardware);

  // With MIG enabled on the A100s the slice fits; 80 GB fits an 80 GB GPU.
  Cluster m = MakeCluster({{"H100", 4, 1}, {"A100-80GB", 4, 1, "", "", true}});
  Engine f = MakeEngine(m, "bestfit");
  EXPECT_EQ(Starts(f.Handle(Event::Arrival(0, mig))), 1);
  memory.shape.memory_gb = 80;
  EXPECT_EQ(Starts(f.Handle(Event::Arrival(0, memory))), 1);
}

TEST(EngineTest, GangStaysInOneNvlinkDomain) {
  Cluster c = MakeCluster({{"H100", 4, 2, "nvl-a"}, {"H100", 4, 2, "nvl-b"}});
  Engine e = MakeEngine(c, "bestfit");
  e.Handle(Event::Arrival(0, MakeJob("x", WorkloadKind::kTraining, 2, 100)));  // on nvl-a
  WorkloadSpec g = MakeJob("g", WorkloadKind::kTraining, 8, 100);
  g.shape.locality = Locality::kNvlinkDomain;
  auto& r = e.Handle(Event::Arrival(0, g));
  ASSERT_EQ(Starts(r), 1);
  const auto& gpus = r.decisions[0].placement.gpus;
  ASSERT_EQ(gpus.size(), 8u);
  for (GpuIndex gi : gpus) EXPECT_EQ(c.domain_of(c.gpu(gi).node), c.domain_of(c.gpu(gpus[0]).node));
}

TEST(EngineTest, ElasticGangStartsSmallAndResizesUp) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  Engine e = MakeEngine(c, "bestfit");
  auto& r0 = e.Handle(Event::Arrival(0, MakeJob("busy", WorkloadKind::kBatch, 4, 3600)));
  const AllocationId busy = r0.decisions[0].allocation;
  WorkloadSpec el = MakeJob("elastic", WorkloadKind::kTraining, 8, 8 * 3600);
  el.shape.min_gpus = 2;
  el.restart_cost = kMinute;
  auto& r1 = e.Handle(Event::Arrival(0, el));
  ASSERT_EQ(Starts(r1), 1);
  EXPECT_EQ(r1.decisions[0].placement.gpus.size(), 4u);  // what is free, at half speed
  EXPECT_EQ(r1.decisions[0].expected_end, 2 * 8 * kHour);
  const AllocationId small = r1.decisions[0].allocation;
  // After an hour the 4 GPUs free up: it resizes to 8, keeping the hour's progress.
  auto& r2 = e.Handle(Event::Completion(kHour, busy));
  ASSERT_EQ(r2.decisions.size(), 1u);
  const Decision& d = r2.decisions[0];
  EXPECT_EQ(d.type, DecisionType::kResize);
  EXPECT_EQ(d.resized_from, small);
  EXPECT_EQ(d.placement.gpus.size(), 8u);
  EXPECT_DOUBLE_EQ(e.job(1).work_saved, 1800);  // 1 h at half speed
  EXPECT_EQ(d.expected_end, kHour + kMinute + (8 * 3600 - 1800) * kSecond);
  EXPECT_EQ(e.allocation(small), nullptr);
  // A rigid 8-GPU job behind it would have waited instead.
  WorkloadSpec rigid = MakeJob("rigid", WorkloadKind::kTraining, 8, 10);
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(kHour, rigid))), 0);
}

TEST(EngineTest, SameEventsSameDecisions) {
  Cluster c = MakeCluster({{"H100", 8, 4}, {"A100-80GB", 8, 2}});
  auto run = [&](uint64_t seed) {
    Engine e = MakeEngine(c, "bestfit", seed);
    std::string log;
    Rng rng(7);
    TimeMs t = 0;
    std::vector<AllocationId> live;
    for (int i = 0; i < 300; ++i) {
      t += static_cast<TimeMs>(rng.Below(60000));
      const CycleResult* r;
      if (!live.empty() && rng.Below(3) == 0) {
        size_t k = rng.Below(live.size());
        r = &e.Handle(Event::Completion(t, live[k]));
        live.erase(live.begin() + static_cast<long>(k));
      } else {
        int gpus = static_cast<int>(1 + rng.Below(8));
        r = &e.Handle(Event::Arrival(
            t, MakeJob("j" + std::to_string(i), WorkloadKind::kTraining, gpus, 600)));
      }
      for (const auto& d : r->decisions) {
        log += std::to_string(d.allocation) + ":";
        for (GpuIndex g : d.placement.gpus) log += std::to_string(g) + ",";
        if (d.type == DecisionType::kStart) live.push_back(d.allocation);
      }
      for (const auto& [id, w] : r->waiting)
        log += "w" + std::to_string(id) + WaitReasonName(w.reason);
    }
    return log;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_EQ(run(0), run(0));
  EXPECT_NE(run(5), run(6));
}

// Ties between equally scored nodes follow one seeded order of the nodes, drawn when the
// engine is built (the FGD reference ranks nodes by a seeded permutation of their names): the
// node that wins a tie wins the same tie again, rather than a fresh draw per decision.
// Dynamic keys that change for some workloads only ("m..." gain 10 a key unit an hour):
// only theirs are computed again, and the queue follows them.
class ShiftingKeys : public QueueSortPlugin {
 public:
  explicit ShiftingKeys(std::map<std::string, int>* calls) : calls_(calls) {}
  std::string_view name() const override { return "shifting"; }
  bool dynamic() const override { return true; }
  bool KeyChanges(const Job& job) const override { return job.s().name[0] == 'm'; }
  QueueKey Key(const Job& job, const Engine& engine) const override {
    ++(*calls_)[job.s().name];
    if (KeyChanges(job)) return {0, 100 - 10 * ToHours(engine.now())};
    return {0, job.s().work_seconds / 60};
  }

 private:
  std::map<std::string, int>* calls_;
};

TEST(EngineTest, DynamicKeysMoveOnlyTheWorkloadsWhoseKeysChange) {
  Cluster c = MakeCluster({{"H100", 1, 1}});
  std::map<std::string, int> calls;
  Policy p;
  p.name = "shifting";
  p.queue_sort = std::make_unique<ShiftingKeys>(&calls);
  Engine e(c, std::move(p), EngineOptions{0});
  e.Handle(Event::Arrival(0, MakeJob("hog", WorkloadKind::kTraining, 1, 1e6)));
  e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kTraining, 1, 50 * 60)));
  e.Handle(Event::Arrival(0, MakeJob("b", WorkloadKind::kTraining, 1, 60 * 60)));
  e.Handle(Event::Arrival(0, MakeJob("m", WorkloadKind::kTraining, 1, 60)));
  auto order = [&] {
    std::string out;
    for (WorkloadId id : e.queue()) out += e.job(id).s().name;
    return out;
  };
  EXPECT_EQ(order(), "abm");  // keys 50, 60, 100
  e.Handle(Event::Timer(4 * kHour + 30 * kMinute));
  EXPECT_EQ(order(), "amb");  // m: 55
  e.Handle(Event::Timer(6 * kHour));
  EXPECT_EQ(order(), "mab");  // m: 40
  EXPECT_EQ(calls["a"], 1);   // computed once, when it joined the queue
  EXPECT_EQ(calls["b"], 1);
  EXPECT_GT(calls["m"], 2);
}

TEST(EngineTest, TiesFollowOneSeededNodeOrder) {
  Cluster c = MakeCluster({{"H100", 8, 6}});
  auto first_choice = [&](uint64_t seed, int repeats) {
    Engine e = MakeEngine(c, "bestfit", seed);
    NodeIndex node = -1;
    for (int i = 0; i < repeats; ++i) {
      const auto& r = e.Handle(
          Event::Arrival(i, MakeJob("j" + std::to_string(i), WorkloadKind::kBatch, 1, 60)));
      EXPECT_EQ(r.decisions.size(), 1u);
      const NodeIndex n = c.gpu(r.decisions[0].placement.gpus[0]).node;
      if (node >= 0) {
        EXPECT_EQ(n, node) << "seed " << seed << " repeat " << i;
      }
      node = n;
      e.Handle(Event::Cancel(i, r.arrived));  // all nodes empty again: the same tie
    }
    return node;
  };
  EXPECT_EQ(first_choice(0, 3), 0);  // no seed: the lowest index
  std::set<NodeIndex> chosen;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const NodeIndex n = first_choice(seed, 4);
    EXPECT_EQ(first_choice(seed, 1), n);
    chosen.insert(n);
  }
  EXPECT_GE(chosen.size(), 4u);
}

// A backend that picks GPU indices itself (Slurm) reports where allocations really are: two
// may trade GPUs; a move onto a GPU another allocation keeps is refused and changes nothing.
TEST(EngineTest, MovesAllocationsOntoTheGpusTheyReallyHold) {
  Cluster c = MakeCluster({{"H100", 4, 2}});
  Engine e = MakeEngine(c, "bestfit");
  const CycleResult& ra =
      e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kTraining, 2, 3600)));
  ASSERT_EQ(Starts(ra), 1);
  const AllocationId a = ra.decisions[0].allocation;
  const std::vector<GpuIndex> a_gpus = ra.decisions[0].placement.gpus;
  const CycleResult& rb = e.Handle(Event::Arrival(1, MakeJob("b", WorkloadKind::kBatch, 2, 600)));
  ASSERT_EQ(Starts(rb), 1);
  const AllocationId b = rb.decisions[0].allocation;
  const std::vector<GpuIndex> b_gpus = rb.decisions[0].placement.gpus;
  ASSERT_EQ(c.gpu(a_gpus[0]).node, c.gpu(b_gpus[0]).node);  // bestfit packs one node
  // a onto b's GPUs alone: refused, nothing moved.
  Status st = e.Move({{a, b_gpus}});
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_EQ(e.allocation(a)->placement.gpus, a_gpus);
  // Traded together: accepted.
  ASSERT_TRUE(e.Move({{a, b_gpus}, {b, a_gpus}}).ok());
  EXPECT_EQ(e.allocation(a)->placement.gpus, b_gpus);
  EXPECT_EQ(e.allocation(b)->placement.gpus, a_gpus);
  // Onto the other node's free GPUs: its host node follows.
  const GpuIndex other = c.gpu(a_gpus[0]).node == 0 ? 4 : 0;
  ASSERT_TRUE(e.Move({{a, {other, other + 1}}}).ok());
  EXPECT_EQ(e.allocation(a)->placement.host_node, c.gpu(other).node);
  // Wrong count, unknown GPU, unknown allocation.
  EXPECT_EQ(e.Move({{a, {other}}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Move({{a, {other, 99}}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Move({{12345, {0}}}).code(), StatusCode::kNotFound);
  // The freed GPUs are free: a third 2-GPU job fits beside b.
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(2, MakeJob("c", WorkloadKind::kBatch, 2, 600)))), 1);
  e.Handle(Event::Completion(3, a));
  EXPECT_EQ(e.job(0).phase, JobPhase::kDone);
}

// A fraction moves its share (Slurm's gres/shard picks a fraction's GPU itself): onto a GPU
// with room beside another fraction, never onto one a whole GPU holds or one without room,
// and the GPU it left is whole again for a whole-GPU job.
TEST(EngineTest, MovesAFractionOntoTheGpuItReallyShares) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Engine e = MakeEngine(c, "bestfit");
  auto frac = [](const std::string& n, int milli) { return Fraction(n, milli, 3600); };
  const CycleResult& rx = e.Handle(Event::Arrival(0, frac("x", 600)));
  ASSERT_EQ(Starts(rx), 1);
  const AllocationId x = rx.decisions[0].allocation;
  const GpuIndex gx = rx.decisions[0].placement.gpus[0];
  const CycleResult& rw = e.Handle(Event::Arrival(1, MakeJob("w", WorkloadKind::kBatch, 1, 600)));
  ASSERT_EQ(Starts(rw), 1);
  const GpuIndex gw = rw.decisions[0].placement.gpus[0];
  const CycleResult& ry = e.Handle(Event::Arrival(2, frac("y", 300)));
  ASSERT_EQ(Starts(ry), 1);
  const AllocationId y = ry.decisions[0].allocation;
  ASSERT_EQ(ry.decisions[0].placement.gpus[0], gx);  // best fit: beside x
  GpuIndex free_gpu = 0;
  while (free_gpu == gx || free_gpu == gw) ++free_gpu;
  // Onto the whole job's GPU: refused, nothing moved.
  EXPECT_EQ(e.Move({{y, {gw}}}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(e.allocation(y)->placement.gpus[0], gx);
  // Onto a free GPU: accepted, x's GPU has 400 free again.
  ASSERT_TRUE(e.Move({{y, {free_gpu}}}).ok());
  EXPECT_EQ(e.allocation(y)->placement.gpus[0], free_gpu);
  EXPECT_EQ(e.allocation(y)->placement.milli, 300);
  // x onto y's GPU: 600 + 300 fits.
  ASSERT_TRUE(e.Move({{x, {free_gpu}}}).ok());
  EXPECT_EQ(e.allocation(x)->placement.gpus[0], free_gpu);
  // gx is whole again: a 2-GPU job takes it and the last free GPU.
  const CycleResult& rv = e.Handle(Event::Arrival(3, MakeJob("v", WorkloadKind::kBatch, 2, 600)));
  ASSERT_EQ(Starts(rv), 1);
  const std::vector<GpuIndex>& gv = rv.decisions[0].placement.gpus;
  EXPECT_NE(std::find(gv.begin(), gv.end(), gx), gv.end());
  // 900 + 200 > 1000 on the shared GPU, the others whole: no room for z.
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(4, frac("z", 200)))), 0);
}

// GPUs that work outside airtime holds are not offered to placement until they are free.
TEST(EngineTest, ForeignGpusAreNotPlacedOn) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Engine e = MakeEngine(c, "bestfit");
  e.SetForeign({0, 1, 2});
  EXPECT_EQ(e.state().free_whole_of_type(c.node(0).gpu_type), 1);
  EXPECT_EQ(e.state().foreign_milli_of_type(c.node(0).gpu_type), 3000);
  const CycleResult& r = e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kBatch, 2, 600)));
  EXPECT_EQ(Starts(r), 0);  // one GPU left
  e.SetForeign({0});        // the foreign job on 1 and 2 ended
  const CycleResult& r2 = e.Handle(Event::Timer(1));
  ASSERT_EQ(Starts(r2), 1);
  for (GpuIndex g : r2.decisions[0].placement.gpus) EXPECT_NE(g, 0);
  EXPECT_EQ(e.foreign(), (std::vector<GpuIndex>{0}));
}

// A share of a GPU that outside work holds (Slurm's gres/shard) leaves the rest of that GPU
// to fractions, never to whole-GPU work; shares of one GPU add up, to the whole GPU at most.
TEST(EngineTest, AForeignShareLeavesTheRestOfItsGpuToFractions) {
  Cluster c = MakeCluster({{"H100", 2, 1}});
  const GpuTypeId h100 = c.node(0).gpu_type;
  Engine e = MakeEngine(c, "bestfit");
  e.SetForeignShares({{0, 300}, {0, 200}});
  EXPECT_EQ(e.foreign(), (std::vector<GpuIndex>{0}));
  EXPECT_EQ(e.state().gpu(0).foreign_milli, 500);
  EXPECT_EQ(e.state().free_whole_of_type(h100), 1);
  EXPECT_EQ(e.state().free_milli_of_type(h100), 1500);
  EXPECT_EQ(e.state().foreign_milli_of_type(h100), 500);
  // Two whole GPUs: only one is whole.
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, MakeJob("w2", WorkloadKind::kBatch, 2, 600)))), 0);
  auto frac = [](const std::string& n, int milli) { return Fraction(n, milli, 600); };
  // A 400 share fits beside the foreign 500 (the tighter GPU first); then 200 no longer does.
  const CycleResult& a = e.Handle(Event::Arrival(1, frac("a", 400)));
  ASSERT_EQ(Starts(a), 1);
  EXPECT_EQ(a.decisions.back().placement.gpus, (std::vector<GpuIndex>{0}));
  const CycleResult& b = e.Handle(Event::Arrival(2, frac("b", 200)));
  ASSERT_EQ(Starts(b), 1);
  EXPECT_EQ(b.decisions.back().placement.gpus, (std::vector<GpuIndex>{1}));
  // The foreign job grows to the whole GPU: nothing more goes there, and `a` keeps its share.
  e.SetForeignShares({{0, 700}, {0, 700}});
  EXPECT_TRUE(e.state().gpu(0).foreign_whole());
  EXPECT_EQ(e.state().foreign_milli_of_type(h100), 600);              // the GPU less what `a` holds
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(3, frac("c", 100)))), 1);  // on GPU 1
  // A share never counts beyond what the engine's allocations leave of its GPU: GPU 0 holds
  // a (400), GPU 1 b and c (300), so shares of 700 and 900 count 600 and 700.
  e.SetForeignShares({{0, 700}, {1, 900}});
  EXPECT_EQ(e.state().foreign_milli_of_type(h100), 600 + 700);
  e.SetForeignShares({});
  EXPECT_TRUE(e.foreign().empty());
  EXPECT_EQ(e.state().gpu(0).foreign_milli, 0);
  EXPECT_EQ(e.state().foreign_milli_of_type(h100), 0);
}

TEST(EngineTest, PausedEngineAdoptsRunningWorkOnItsGpus) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  Engine e = MakeEngine(c, "bestfit");
  e.SetPaused(true);
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kTraining, 2, 3600)))), 0);
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, MakeJob("b", WorkloadKind::kBatch, 2, 600)))), 0);
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(0, MakeService("svc", 10)))), 0);
  auto a = e.Adopt(0, {2, 3});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_FALSE(e.Adopt(1, {3}).ok());  // GPU 3 is taken now
  EXPECT_FALSE(e.Adopt(0, {0}).ok());  // already running, not waiting
  e.SetPaused(false);
  const CycleResult& r = e.Handle(Event::Timer(1));
  // b takes the two GPUs a does not hold; the service waits (no demand yet keeps 0 replicas
  // or finds no room).
  ASSERT_EQ(Starts(r), 1);
  EXPECT_EQ(r.decisions[0].workload, 1);
  EXPECT_EQ(r.decisions[0].placement.gpus, (std::vector<GpuIndex>{0, 1}));
  EXPECT_EQ(e.job(0).phase, JobPhase::kRunning);
  EXPECT_EQ(e.allocation(*a)->placement.gpus, (std::vector<GpuIndex>{2, 3}));
  e.Handle(Event::Completion(2, *a));
  EXPECT_EQ(e.job(0).phase, JobPhase::kDone);
}

TEST(EngineTest, PlacementVisitsOnlyOpenNodesAndTheyFollowTheState) {
  // 70 nodes, so that the open set spans two words of its bitset.
  Cluster c = MakeCluster({{"H100", 2, 70}});
  ClusterState st(c);
  auto open_nodes = [&] {
    std::vector<NodeIndex> out;
    st.ForEachOpenNode([&](NodeIndex n) {
      out.push_back(n);
      return false;
    });
    return out;
  };
  EXPECT_EQ(open_nodes().size(), 70u);
  Placement whole;  // both GPUs of node 66
  whole.gpus = {c.first_gpu(66), static_cast<GpuIndex>(c.first_gpu(66) + 1)};
  whole.host_node = 66;
  whole.mode = ShareMode::kWhole;
  whole.milli = 1000;
  st.Apply(whole);
  EXPECT_FALSE(st.open(66));
  Placement share;  // most of one GPU of node 3
  share.gpus = {c.first_gpu(3)};
  share.host_node = 3;
  share.mode = ShareMode::kFraction;
  share.milli = 900;
  st.Apply(share);
  EXPECT_TRUE(st.open(3));  // the other GPU, and a tenth of this one
  st.SetReserved(static_cast<GpuIndex>(c.first_gpu(3) + 1), true);
  EXPECT_TRUE(st.open(3));  // a tenth is still free for a small share
  st.SetNodeUp(5, false);
  EXPECT_FALSE(st.open(5));
  std::vector<NodeIndex> expected;
  for (NodeIndex n = 0; n < 70; ++n)
    if (n != 5 && n != 66) expected.push_back(n);
  EXPECT_EQ(open_nodes(), expected);
  // Stops at the first node the callback takes.
  NodeIndex first = -1;
  EXPECT_TRUE(st.ForEachOpenNode([&](NodeIndex n) { return (first = n) >= 64; }));
  EXPECT_EQ(first, 64);
  st.Release(whole);
  st.SetNodeUp(5, true);
  EXPECT_TRUE(st.open(66));
  EXPECT_TRUE(st.open(5));
}

TEST(EngineTest, AFullClusterPlacesNothingUntilSomethingFrees) {
  Cluster c = MakeCluster({{"H100", 8, 3}});
  Engine e = MakeEngine(c, "airtime");
  std::vector<AllocationId> running;
  std::vector<NodeIndex> hosts;
  for (int i = 0; i < 3; ++i) {
    const auto& r = e.Handle(
        Event::Arrival(i, MakeJob("full" + std::to_string(i), WorkloadKind::kTraining, 8, 3600)));
    ASSERT_EQ(Starts(r), 1);
    running.push_back(r.decisions.back().allocation);
    hosts.push_back(r.decisions.back().placement.host_node);
  }
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(10, MakeJob("one", WorkloadKind::kBatch, 1, 60)))), 0);
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(11, MakeJob("four", WorkloadKind::kBatch, 4, 60)))), 0);
  // One node frees: both start there.
  const CycleResult& r = e.Handle(Event::Completion(20, running[1]));
  ASSERT_EQ(Starts(r), 2);
  for (const auto& d : r.decisions) {
    if (d.type == DecisionType::kStart) {
      EXPECT_EQ(d.placement.host_node, hosts[1]);
    }
  }
}

Engine MakeBackoffEngine(const Cluster& c, const std::string& policy) {
  EngineOptions o;
  o.restart_backoff = 1000;
  o.restart_backoff_max = 4000;
  o.restart_backoff_reset = 60000;
  return MakeEngine(c, policy, o);
}

// A run that fails on its own (a crash loop: its command fails at once) is started again
// only after a backoff that doubles with each failure in a row up to the cap, and a run that
// lasted the reset time before it failed starts a new count.
TEST(EngineTest, AFailedRunStartsAgainAfterABackoffThatDoubles) {
  Cluster c = MakeCluster({{"H100", 1, 1}});
  Engine e = MakeBackoffEngine(c, "fifo");
  const CycleResult& r0 =
      e.Handle(Event::Arrival(0, MakeJob("crashy", WorkloadKind::kBatch, 1, 3600)));
  ASSERT_EQ(Starts(r0), 1);
  AllocationId a = FirstStarted(r0);
  TimeMs t = 100;
  std::vector<DurationMs> waits;
  for (int i = 0; i < 4; ++i) {
    const CycleResult& f = e.Handle(Event::Failure(t, a));
    EXPECT_EQ(Starts(f), 0) << "failure " << i + 1;
    const TimeMs wake = f.wake_at;
    waits.push_back(wake - t);
    EXPECT_EQ(e.job(0).wait.reason, WaitReason::kBackoff);
    EXPECT_NE(e.Explain(0).find("failed (" + std::to_string(i + 1) +
                                " time(s) in a row): not "
                                "started again before"),
              std::string::npos)
        << e.Explain(0);
    EXPECT_EQ(Starts(e.Handle(Event::Timer(wake - 1))), 0) << "failure " << i + 1;
    const CycleResult& s = e.Handle(Event::Timer(wake));
    ASSERT_EQ(Starts(s), 1) << "failure " << i + 1;
    a = FirstStarted(s);
    t = wake + 100;
  }
  EXPECT_EQ(waits, (std::vector<DurationMs>{1000, 2000, 4000, 4000}));
  // A run of a minute that then fails: the count starts again, one second.
  const CycleResult& f = e.Handle(Event::Failure(t + 60000, a));
  EXPECT_EQ(f.wake_at - (t + 60000), 1000);
  // A clean end clears the count.
  const CycleResult& s = e.Handle(Event::Timer(f.wake_at));
  ASSERT_EQ(Starts(s), 1);
  EXPECT_EQ(e.job(0).failed_in_a_row, 1);
  e.Handle(Event::Completion(t + 70000, FirstStarted(s)));
  EXPECT_EQ(e.job(0).failed_in_a_row, 0);
}

// While a workload waits out its backoff it holds no GPU and blocks no one, even under fifo;
// a service's missing replica waits the same way and says why.
TEST(EngineTest, AWorkloadBackingOffBlocksNoOneAndAServiceSaysWhy) {
  Cluster c = MakeCluster({{"H100", 1, 2}});
  Engine e = MakeBackoffEngine(c, "fifo");
  WorkloadSpec svc = MakeService("chat", 10);
  svc.realtime.min_replicas = 1;
  svc.realtime.cold_start = 0;
  const CycleResult& r0 = e.Handle(Event::Arrival(0, svc));
  ASSERT_EQ(Starts(r0), 1);
  const AllocationId replica = FirstStarted(r0);
  const CycleResult& r1 =
      e.Handle(Event::Arrival(10, MakeJob("crashy", WorkloadKind::kBatch, 1, 3600)));
  ASSERT_EQ(Starts(r1), 1);
  e.Handle(Event::Failure(20, FirstStarted(r1)));
  EXPECT_EQ(e.job(1).wait.reason, WaitReason::kBackoff);
  // Behind crashy in fifo order, and it starts on the GPU crashy left.
  EXPECT_EQ(Starts(e.Handle(Event::Arrival(30, MakeJob("next", WorkloadKind::kBatch, 1, 60)))), 1);
  e.Handle(Event::Failure(40, replica));
  EXPECT_EQ(e.job(0).live_replicas(), 0);
  EXPECT_EQ(e.job(0).wait.reason, WaitReason::kBackoff);
  EXPECT_NE(e.Explain(0).find("needs 1 more replica(s)"), std::string::npos) << e.Explain(0);
  EXPECT_NE(e.Explain(0).find("its replicas' last run failed"), std::string::npos) << e.Explain(0);
  // crashy, ahead of it in fifo order, is cancelled; when the replica's backoff ends
  // (1,040 ms) it takes the free GPU.
  e.Handle(Event::Cancel(50, 1));
  EXPECT_EQ(Starts(e.Handle(Event::Timer(1039))), 0);
  EXPECT_EQ(Starts(e.Handle(Event::Timer(1040))), 1);
  EXPECT_EQ(e.job(0).live_replicas(), 1);
}

}  // namespace
}  // namespace airtime
