#include "airtime/sim/simulator.h"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "airtime/engine/test_util.h"
#include "airtime/ledger/ledger.h"
#include "airtime/policies/registry.h"
#include "airtime/sim/random_scenario.h"
#include "airtime/sim/report.h"
#include "airtime/sim/value_ceiling.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakeService;

// The ledger's central promise: every installed GPU-second lands in exactly one bucket.
// Checked exactly (integer milli-GPU-ms) on random scenarios under every policy.
TEST(LedgerPropertyTest, BucketsAddUpToInstalledOnRandomScenarios) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SimInput in = RandomScenario(seed);
    for (const char* policy : {"fifo", "static", "bestfit", "slurm", "tiresias", "kai", "lyra",
                               "airtime", "airtime:preemption=off"}) {
      auto r = Simulate(in, policy, SimOptions{seed, kNever, false});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const LedgerTotals& t = r->ledger;
      EXPECT_EQ(t.sum(), t.installed_milli_ms) << "seed " << seed << " " << policy;
      EXPECT_EQ(t.installed_milli_ms, 1000 * static_cast<int64_t>(in.cluster.gpu_count()) * r->end);
      for (int b = 0; b < kBucketCount; ++b)
        EXPECT_GE(t.milli_ms[static_cast<size_t>(b)], 0) << BucketName(static_cast<Bucket>(b));
      // Per GPU type too, and the types add up to the totals bucket by bucket.
      BucketTotals types;
      for (const BucketTotals& bt : t.by_type) {
        EXPECT_EQ(bt.sum(), bt.installed_milli_ms) << "seed " << seed << " " << policy;
        types.Add(bt);
      }
      EXPECT_EQ(types.milli_ms, t.milli_ms) << "seed " << seed << " " << policy;
      EXPECT_EQ(types.installed_milli_ms, t.installed_milli_ms);
      EXPECT_EQ(types.reserved_held_milli_ms, t.reserved_held_milli_ms);
      // Costs: the buckets add up to the total; value by type to no more than the value.
      double bucket_cost = 0;
      for (double c : r->costs.bucket_cost) bucket_cost += c;
      EXPECT_NEAR(bucket_cost, r->costs.cost, 1e-9 * (1 + r->costs.cost));
      EXPECT_NEAR(r->costs.margin, r->metrics.value - r->costs.cost, 1e-9 * (1 + r->costs.cost));
      EXPECT_GE(r->costs.unattributed_value, -1e-9 * (1 + r->metrics.value));
      EXPECT_LE(r->allocation_rate(), 1.0 + 1e-12);
      EXPECT_GE(r->metrics.slo_attainment, 0.0);
      EXPECT_LE(r->metrics.slo_attainment, 1.0 + 1e-12);
    }
  }
}

// GPUs that work outside airtime holds (Engine::SetForeign) land in the `foreign` bucket,
// and the buckets still add up.
TEST(LedgerTest, ForeignGpusHaveTheirOwnLine) {
  Cluster c = MakeCluster({{"H100", 4, 1}});
  auto policy = PolicyRegistry::Builtin().Make("bestfit", c);
  ASSERT_TRUE(policy.ok());
  Engine e(c, std::move(*policy));
  Ledger ledger(e);
  ledger.Observe(e.Handle(Event::Timer(0)));
  e.SetForeign({2, 3});
  ledger.Observe(e.Handle(Event::Timer(0)));
  ledger.Advance(1000);
  const LedgerTotals& t = ledger.totals();
  EXPECT_EQ(t.milli_ms[static_cast<size_t>(Bucket::kForeign)], 2 * 1000 * 1000);
  EXPECT_EQ(t.milli_ms[static_cast<size_t>(Bucket::kFreeNoDemand)], 2 * 1000 * 1000);
  EXPECT_EQ(t.sum(), t.installed_milli_ms);
  EXPECT_STREQ(BucketName(Bucket::kForeign), "foreign");
  // A share of a GPU (Slurm's gres/shard) counts by that share; the rest of the GPU is free.
  e.SetForeignShares({{1, 250}});
  ledger.Observe(e.Handle(Event::Timer(1000)));
  ledger.Advance(2000);
  EXPECT_EQ(t.milli_ms[static_cast<size_t>(Bucket::kForeign)], 2 * 1000 * 1000 + 250 * 1000);
  EXPECT_EQ(t.milli_ms[static_cast<size_t>(Bucket::kFreeNoDemand)], 2 * 1000 * 1000 + 3750 * 1000);
  EXPECT_EQ(t.sum(), t.installed_milli_ms);
  const std::vector<GpuBuckets> gpus = ledger.GpuBucketsNow();
  EXPECT_EQ(gpus[1].milli[static_cast<size_t>(Bucket::kForeign)], 250);
  EXPECT_EQ(gpus[1].milli[static_cast<size_t>(Bucket::kFreeNoDemand)], 750);
}

// Each GPU's buckets now (Ledger::GpuBucketsNow, the dashboard's map) are the ledger's own
// classification handed to GPUs: the GPUs of each type add up to the type's rates exactly.
void ExpectGpusAddUpToTypes(const Engine& e, const Ledger& ledger, const std::string& where) {
  const std::vector<GpuBuckets> gpus = ledger.GpuBucketsNow();
  ASSERT_EQ(gpus.size(), static_cast<size_t>(e.cluster().gpu_count()));
  std::vector<std::array<int64_t, kBucketCount>> by_type(e.cluster().catalog().size());
  std::array<int64_t, kBucketCount> all{};
  for (size_t g = 0; g < gpus.size(); ++g) {
    int64_t sum = 0;
    for (size_t b = 0; b < all.size(); ++b) {
      EXPECT_GE(gpus[g].milli[b], 0) << where << " GPU " << g;
      by_type[static_cast<size_t>(e.cluster().gpu_type(static_cast<GpuIndex>(g)))][b] +=
          gpus[g].milli[b];
      all[b] += gpus[g].milli[b];
      sum += gpus[g].milli[b];
    }
    EXPECT_EQ(sum, 1000) << where << " GPU " << g;
  }
  EXPECT_EQ(all, ledger.rates_now()) << where;
  for (size_t t = 0; t < by_type.size(); ++t)
    EXPECT_EQ(by_type[t], ledger.type_rates_now(static_cast<GpuTypeId>(t)))
        << where << " type " << t;
}

TEST(LedgerTest, EachGpusBucketNowIsTheLedgersClassification) {
  Cluster c = MakeCluster({{"H100", 4, 2}});
  auto policy = PolicyRegistry::Builtin().Make("fifo", c);
  ASSERT_TRUE(policy.ok());
  Engine e(c, std::move(*policy));
  Ledger ledger(e);
  ledger.Observe(e.Handle(Event::NodeDown(0, 1)));
  WorkloadSpec small = MakeJob("small", WorkloadKind::kTraining, 1, 3600);
  small.utilization = 0.25;
  ledger.Observe(e.Handle(Event::Arrival(0, small)));
  // Nothing waits: the three free GPUs of the up node have no demand.
  std::vector<GpuBuckets> gpus = ledger.GpuBucketsNow();
  ASSERT_EQ(gpus.size(), 8u);
  int held = -1;
  for (int g = 0; g < 4; ++g)
    if (gpus[static_cast<size_t>(g)].milli[static_cast<size_t>(Bucket::kUseful)] > 0) held = g;
  ASSERT_GE(held, 0);
  for (int g = 0; g < 8; ++g) {
    const GpuBuckets& b = gpus[static_cast<size_t>(g)];
    if (g == held) {
      EXPECT_EQ(b.milli[static_cast<size_t>(Bucket::kUseful)], 250);
      EXPECT_EQ(b.milli[static_cast<size_t>(Bucket::kIdleHeld)], 750);
      EXPECT_EQ(b.main(), Bucket::kIdleHeld);
    } else if (g < 4) {
      EXPECT_EQ(b.main(), Bucket::kFreeNoDemand) << g;
    } else {
      EXPECT_EQ(b.main(), Bucket::kDown) << g;
      EXPECT_EQ(b.milli[static_cast<size_t>(Bucket::kDown)], 1000);
    }
  }
  ExpectGpusAddUpToTypes(e, ledger, "one job");
  // A job of 4 GPUs waits and fits nowhere (3 free): the free GPUs are stranded.
  ledger.Observe(e.Handle(Event::Arrival(0, MakeJob("big", WorkloadKind::kTraining, 4, 3600))));
  gpus = ledger.GpuBucketsNow();
  for (int g = 0; g < 4; ++g) {
    if (g == held) continue;
    EXPECT_EQ(gpus[static_cast<size_t>(g)].main(), Bucket::kStranded) << g;
  }
  EXPECT_EQ(gpus[static_cast<size_t>(held)].main(), Bucket::kIdleHeld);
  ExpectGpusAddUpToTypes(e, ledger, "a job waits");
}

// The same on random scenarios (several GPU types, fractions, MIG, services, gangs) after
// every arrival, under policies that hold headroom and flag low-value work.
TEST(LedgerPropertyTest, GpusAddUpToTheTypesOnRandomScenarios) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SimInput in = RandomScenario(seed);
    for (const char* policy : {"bestfit", "airtime"}) {
      auto p = PolicyRegistry::Builtin().Make(policy, in.cluster);
      ASSERT_TRUE(p.ok());
      Engine e(in.cluster, std::move(*p));
      Ledger ledger(e);
      const size_t n = std::min<size_t>(in.workloads.size(), 40);
      for (size_t i = 0; i < n; ++i) {
        const TimeMs at = std::max(e.now(), in.workloads[i].submit_at);
        ledger.Advance(at);
        ledger.Observe(e.Handle(Event::Arrival(at, in.workloads[i])));
        ExpectGpusAddUpToTypes(
            e, ledger,
            "seed " + std::to_string(seed) + " " + policy + " after " + std::to_string(i + 1));
        if (HasFatalFailure() || HasNonfatalFailure()) return;
      }
    }
  }
}

// The JSON report carries the timeline the HTML report draws: the same points, bounded by
// SimOptions::timeline_points, covering the run.
TEST(SimulatorTest, JsonReportCarriesTheTimeline) {
  SimInput in = RandomScenario(5);
  SimOptions opt{5, kNever, false};
  opt.timeline_points = 16;
  auto r = Simulate(in, "bestfit", opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->timeline.empty());
  const nlohmann::json t = ResultToJson(*r)["timeline"];
  EXPECT_DOUBLE_EQ(t["step_s"].get<double>(), ToSeconds(r->timeline_step));
  const size_t n = r->timeline.size();
  EXPECT_LE(n, 16u);
  for (const char* column : {"start_s", "covered_s", "allocation", "waiting"})
    ASSERT_EQ(t[column].size(), n) << column;
  double covered = 0;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_DOUBLE_EQ(t["start_s"][i].get<double>(), ToSeconds(r->timeline[i].start));
    EXPECT_DOUBLE_EQ(t["allocation"][i].get<double>(), r->timeline[i].allocation);
    EXPECT_DOUBLE_EQ(t["waiting"][i].get<double>(), r->timeline[i].waiting);
    EXPECT_GE(t["allocation"][i].get<double>(), 0);
    EXPECT_LE(t["allocation"][i].get<double>(), 1 + 1e-12);
    covered += t["covered_s"][i].get<double>();
  }
  EXPECT_DOUBLE_EQ(covered, ToSeconds(r->end));
  // Without a timeline (timeline_points 0), empty columns.
  opt.timeline_points = 0;
  auto none = Simulate(in, "bestfit", opt);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(ResultToJson(*none)["timeline"]["start_s"].empty());
}

TEST(SimulatorTest, SameInputSameReport) {
  SimInput in = RandomScenario(11);
  auto a = Simulate(in, "bestfit", SimOptions{3, kNever, false});
  auto b = Simulate(in, "bestfit", SimOptions{3, kNever, false});
  ASSERT_TRUE(a.ok() && b.ok());
  auto ja = ResultToJson(*a), jb = ResultToJson(*b);
  ja.erase("wall_seconds");
  jb.erase("wall_seconds");
  EXPECT_EQ(ja.dump(), jb.dump());
}

// The ledger counts milli-GPU-milliseconds in 64 bits: a horizon past what it can count for
// the cluster is refused, and without one a replay stops before it (a job slowed 1e-12 times
// once made the installed GPU-hours negative).
TEST(SimulatorTest, AReplayStaysWithinWhatTheLedgerCanCount) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  WorkloadSpec slow = MakeJob("slow", WorkloadKind::kTraining, 1, 3600);
  slow.speed_overrides = {{c.gpu_type(0), 1e-12}};
  auto r = Simulate(MakeSimInput(c, {slow, MakeJob("a", WorkloadKind::kBatch, 1, 60)}), "fifo");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(r->ledger.installed_gpu_hours(), 0);
  ASSERT_FALSE(r->event_errors.empty());
  EXPECT_NE(r->event_errors.back().find("past what the ledger can count for 8 GPUs"),
            std::string::npos)
      << r->event_errors.back();
  SimOptions o;
  o.horizon = 1'000'000'000'000'000;  // 1e12 s, as --horizon allows
  auto far = Simulate(MakeSimInput(c, {slow}), "fifo", o);
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.status().message().find("past what the ledger can count exactly for 8 GPUs"),
            std::string::npos)
      << far.status().message();
}

TEST(SimulatorTest, JobsRunToCompletionAndEarnTheirValue) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});
  std::vector<WorkloadSpec> ws = {MakeJob("a", WorkloadKind::kTraining, 4, 3600),
                                  MakeJob("b", WorkloadKind::kBatch, 2, 1800, 10 * kSecond)};
  ws[1].deadline = 2 * kHour;
  ws[0].value.on_completion = 100;  // denser than b: its GPUs are not low-value-busy
  SimInput in = MakeSimInput(c, ws);
  auto r = Simulate(in, "fifo");
  ASSERT_TRUE(r.ok());
  // a: 0..1h on 4 GPUs; b waits until 1h, runs 30 min on 2 GPUs.
  EXPECT_EQ(r->end, kHour + 30 * kMinute);
  EXPECT_DOUBLE_EQ(r->metrics.value, 110);
  EXPECT_DOUBLE_EQ(r->metrics.deadline_hit_rate, 1.0);
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kUseful), 5.0, 1e-9);
  // While b waited, nothing else could run: 0 free GPUs; afterwards 2 GPUs free, no demand.
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kFreeNoDemand), 1.0, 1e-9);
  const auto& batch = r->metrics.kinds[static_cast<size_t>(WorkloadKind::kBatch)];
  ASSERT_EQ(batch.queue_delay_s.size(), 1u);
  EXPECT_DOUBLE_EQ(batch.queue_delay_s[0], 3590);
}

TEST(SimulatorTest, LowerValueWorkHoldingAWantedShapeIsLowValueBusy) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});
  std::vector<WorkloadSpec> ws = {MakeJob("cheap", WorkloadKind::kBatch, 4, 3600),
                                  MakeJob("dear", WorkloadKind::kTraining, 2, 1800, 0)};
  ws[0].value.on_completion = 1;
  ws[1].value.on_completion = 100;
  auto r = Simulate(MakeSimInput(c, ws), "fifo");
  ASSERT_TRUE(r.ok());
  // cheap holds all 4 GPUs for an hour while dear waits: 4 GPU-hours low-value-busy.
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kLowValueBusy), 4.0, 1e-9);
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kUseful), 1.0, 1e-9);
}

TEST(SimulatorTest, HeadOfLineBlockingShowsAsBlocked) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  std::vector<WorkloadSpec> ws = {MakeJob("a", WorkloadKind::kTraining, 4, 3600 * 1.8),
                                  MakeJob("big", WorkloadKind::kTraining, 8, 3600 * 1.8, 1),
                                  MakeJob("small", WorkloadKind::kBatch, 1, 3600 * 1.8, 2)};
  SimInput in = MakeSimInput(c, ws);
  auto fifo = Simulate(in, "fifo");
  ASSERT_TRUE(fifo.ok());
  // For the first hour 4 GPUs are free while 'small' could use one and waits behind 'big':
  // 1 GPU-hour blocked (small's demand), 3 stranded for 'big' (enough by count, not by place).
  EXPECT_NEAR(fifo->ledger.gpu_hours(Bucket::kBlocked), 1.0, 1e-6);
  EXPECT_NEAR(fifo->ledger.gpu_hours(Bucket::kStranded), 3.0, 1e-6);
  auto bestfit = Simulate(in, "bestfit");
  EXPECT_NEAR(bestfit->ledger.gpu_hours(Bucket::kBlocked), 0.0, 1e-9);
}

TEST(SimulatorTest, CapacityAPoolSplitKeepsFromWaitingWorkIsBlockedNotStranded) {
  Cluster c = MakeCluster({{"H100", 8, 1, "", "inference"}, {"H100", 8, 1, "", "training"}});
  std::vector<WorkloadSpec> ws = {MakeJob("t1", WorkloadKind::kTraining, 8, 3600 * 1.8),
                                  MakeJob("t2", WorkloadKind::kTraining, 8, 3600 * 1.8)};
  auto r = Simulate(MakeSimInput(c, ws), "static");
  ASSERT_TRUE(r.ok());
  // For the first hour t2 waits while the inference node is empty: the split, not
  // fragmentation, keeps it waiting.
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kBlocked), 8.0, 1e-6);
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kStranded), 0.0, 1e-9);
}

TEST(SimulatorTest, DeadlinesAfterTheEndAreNotCounted) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  std::vector<WorkloadSpec> ws = {MakeJob("early", WorkloadKind::kBatch, 1, 600),
                                  MakeJob("late", WorkloadKind::kBatch, 1, 3600, 23 * kHour)};
  ws[0].deadline = kHour;
  ws[1].deadline = 30 * kHour;
  auto r = Simulate(MakeSimInput(c, ws), "fifo", SimOptions{1, 23 * kHour + 30 * kMinute, false});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->metrics.with_deadline, 1u);
  EXPECT_DOUBLE_EQ(r->metrics.deadline_hit_rate, 1.0);
}

// A horizon that cuts a long job short counts none of its value in the return; what it
// saved is reported beside it, pro rata, and work that kept nothing is not.
TEST(SimulatorTest, SavedProgressOfWorkTheEndCutsShortIsReportedApart) {
  Cluster c = MakeCluster({{"A100-80GB", 2, 1}});
  WorkloadSpec saved = MakeJob("saved", WorkloadKind::kTraining, 1, 10 * 3600);
  saved.checkpoint_interval = kHour;
  saved.value.on_completion = 100;
  WorkloadSpec unsaved = MakeJob("unsaved", WorkloadKind::kTraining, 1, 10 * 3600);
  unsaved.value.on_completion = 100;  // no checkpoints: a stop keeps nothing
  auto r = Simulate(MakeSimInput(c, {saved, unsaved}), "fifo",
                    SimOptions{1, 4 * kHour + 30 * kMinute, false});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->metrics.value, 0);
  EXPECT_EQ(r->metrics.in_progress_jobs, 1u);
  EXPECT_NEAR(r->metrics.in_progress_value, 100 * 4.0 / 10.0, 1e-9);  // 4 of 10 h saved
  const auto j = ResultToJson(*r);
  EXPECT_EQ(j["in_progress"]["jobs"], 1);
  EXPECT_NEAR(j["in_progress"]["value"].get<double>(), 40, 1e-9);
  EXPECT_NE(ResultsTable({*r}).find("in progress at end: value"), std::string::npos);
}

// The decision log says what completed when and what it earned, beside the decisions.
TEST(SimulatorTest, TheDecisionLogListsEachCompletionWithItsValue) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  WorkloadSpec a = MakeJob("a", WorkloadKind::kBatch, 1, 1800);
  a.value.on_completion = 7;
  WorkloadSpec b = MakeJob("b", WorkloadKind::kBatch, 1, 3600, kMinute);
  b.value.on_completion = 5;
  std::ostringstream log;
  SimOptions o;
  o.horizon = kHour;
  o.decision_log = &log;
  auto r = Simulate(MakeSimInput(c, {a, b}), "fifo", o);
  ASSERT_TRUE(r.ok());
  std::vector<nlohmann::json> done;
  std::istringstream lines(log.str());
  for (std::string line; std::getline(lines, line);) {
    const auto d = nlohmann::json::parse(line);
    if (d.contains("completed")) done.push_back(d);
  }
  ASSERT_EQ(done.size(), 1u) << log.str();  // b is still running at the horizon
  EXPECT_EQ(done[0]["completed"], "a");
  EXPECT_DOUBLE_EQ(done[0]["t_s"].get<double>(), 1800);
  EXPECT_DOUBLE_EQ(done[0]["value"].get<double>(), 7);
}

TEST(SimulatorTest, ServiceDemandDrivesReplicasAndSlo) {
  Cluster c = MakeCluster({{"L40S", 2, 1}});
  WorkloadSpec svc = MakeService("svc", 10);
  svc.realtime.cold_start = 0;
  svc.realtime.demand = {{0, 10}, {kHour, 40}, {2 * kHour, 0}};
  SimInput in = MakeSimInput(c, {svc});
  auto r = Simulate(in, "fifo");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end, 2 * kHour);
  // Hour 1: 10 rps served by one replica. Hour 2: 40 rps, only 2 replicas fit: 20 served.
  EXPECT_NEAR(r->metrics.requests, 3600 * 50, 1e-6);
  EXPECT_NEAR(r->metrics.requests_in_slo, 3600 * 30, 1e-6);
  EXPECT_NEAR(r->metrics.value, 108, 1e-9);
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kUseful), 3.0, 1e-6);
}

// A replica a service's target keeps beyond what its demand needs (airtime's warm spare) is
// held on purpose: its idle capacity is reserved headroom, not idle_held. Under fifo the
// replicas follow demand and there is none.
TEST(SimulatorTest, ReplicasHeldBeyondTheDemandAreReservedHeadroom) {
  Cluster c = MakeCluster({{"L40S", 8, 1}});
  WorkloadSpec svc = MakeService("svc", 10);
  svc.realtime.cold_start = 0;
  svc.realtime.demand = {{0, 30}, {2 * kHour, 0}};
  SimInput in = MakeSimInput(c, {svc});
  auto fifo = Simulate(in, "fifo");
  ASSERT_TRUE(fifo.ok());
  EXPECT_NEAR(fifo->ledger.gpu_hours(Bucket::kUseful), 6.0, 1e-6);
  EXPECT_NEAR(fifo->ledger.gpu_hours(Bucket::kReservedHeadroom), 0.0, 1e-9);
  EXPECT_NEAR(fifo->ledger.gpu_hours(Bucket::kIdleHeld), 0.0, 1e-9);
  // airtime keeps round(3 x 0.25) = 1 spare for a target of 3: one idle GPU for 2 hours.
  auto airtime = Simulate(in, "airtime:spare=0.25", SimOptions{1, 2 * kHour, false});
  ASSERT_TRUE(airtime.ok());
  EXPECT_NEAR(airtime->ledger.gpu_hours(Bucket::kUseful), 6.0, 1e-6);
  EXPECT_NEAR(airtime->ledger.gpu_hours(Bucket::kReservedHeadroom), 2.0, 1e-6);
  EXPECT_NEAR(airtime->ledger.gpu_hours(Bucket::kIdleHeld), 0.0, 1e-6);
  // Without a horizon its scale-down window (keep, 1 h) holds all four replicas for an hour
  // after the demand ends: 4 GPU-hours more, held on purpose too.
  auto whole = Simulate(in, "airtime:spare=0.25");
  ASSERT_TRUE(whole.ok());
  EXPECT_NEAR(whole->ledger.gpu_hours(Bucket::kReservedHeadroom), 6.0, 1e-6);
  EXPECT_NEAR(whole->ledger.gpu_hours(Bucket::kIdleHeld), 0.0, 1e-6);
}

// The 3 a.m. report: airtime records its holds and hand-offs, each scored against the demand
// that came; a policy that prices no headroom records none.
TEST(SimulatorTest, TheThreeAmReportScoresEveryHoldAgainstWhatCame) {
  Cluster c = MakeCluster({{"L40S", 4, 1}});
  WorkloadSpec svc = MakeService("svc", 10);
  svc.realtime.cold_start = 2 * kMinute;
  svc.realtime.max_replicas = 4;
  svc.value.per_1k_requests = 1;
  // 12 rps with a 30 rps burst for 3 minutes every 4 hours, for two days.
  for (TimeMs t = 0; t < 2 * kDay; t += 4 * kHour) {
    svc.realtime.demand.push_back({t, 12});
    svc.realtime.demand.push_back({t + 2 * kHour, 30});
    svc.realtime.demand.push_back({t + 2 * kHour + 3 * kMinute, 12});
  }
  SimInput in = MakeSimInput(c, {svc});
  auto fifo = Simulate(in, "fifo", SimOptions{1, 2 * kDay, false});
  ASSERT_TRUE(fifo.ok());
  EXPECT_TRUE(fifo->metrics.holds.empty());
  // Warm spares (opt-in) are held while nothing waits: by default nothing would be.
  auto r = Simulate(in, "airtime:spare=0.25", SimOptions{1, 2 * kDay, false});
  ASSERT_TRUE(r.ok());
  const MetricsSummary& m = r->metrics;
  ASSERT_FALSE(m.holds.empty());
  ASSERT_EQ(m.hold_summaries.count("svc"), 1u);
  const HoldSummary& h = m.hold_summaries.at("svc");
  // The summary adds up the calls, each scored from its time to the next one's.
  int holds = 0, came = 0;
  double protected_value = 0, regret = 0;
  TimeMs last = -1;
  for (const ScoredHold& s : m.holds) {
    EXPECT_EQ(s.decision.name, "svc");
    EXPECT_GE(s.decision.at, last);
    last = s.decision.at;
    EXPECT_NE(s.until, kNever);
    EXPECT_GE(s.regret, 0);
    EXPECT_FALSE(s.decision.why.empty());
    holds += s.decision.hold() ? 1 : 0;
    came += s.decision.hold() && s.came ? 1 : 0;
    protected_value += s.protected_value;
    regret += s.regret;
  }
  EXPECT_EQ(h.holds, holds);
  EXPECT_EQ(h.holds_came, came);
  EXPECT_NEAR(h.protected_value, protected_value, 1e-9);
  EXPECT_NEAR(h.regret, regret, 1e-9);
  // Bursts came while replicas were held, and the held ones served some of them.
  EXPECT_GT(h.holds_came, 0);
  EXPECT_GT(h.protected_requests, 0);
  // Nothing waits for the GPUs: holding forgoes nothing.
  EXPECT_EQ(h.forgone_value, 0);
}

// Each service's own attainment: the aggregate can hide one that misses its target.
TEST(SimulatorTest, EachServiceHasItsOwnAttainmentAndStartMisses) {
  Cluster c = MakeCluster({{"L40S", 3, 1}});
  WorkloadSpec small = MakeService("small", 10);  // cold start 1 min
  small.realtime.demand = {{0, 10}};
  WorkloadSpec big = MakeService("big", 10);
  big.realtime.demand = {{0, 10}, {kHour, 40}};  // needs 4 replicas; 2 GPUs left for it
  SimInput in = MakeSimInput(c, {small, big});
  auto r = Simulate(in, "fifo", SimOptions{1, 2 * kHour, false});
  ASSERT_TRUE(r.ok());
  const auto& sv = r->metrics.services;
  ASSERT_EQ(sv.size(), 2u);
  const ServiceMetrics& s = sv.at("small");
  const ServiceMetrics& b = sv.at("big");
  // Both miss their first minute (600 requests), before a replica can be ready.
  EXPECT_NEAR(s.missed_at_start, 600, 1e-6);
  EXPECT_NEAR(b.missed_at_start, 600, 1e-6);
  EXPECT_NEAR(s.requests, 72000, 1e-6);
  EXPECT_NEAR(s.requests_in_slo, 72000 - 600, 1e-6);
  // The second hour `big` gets 2 GPUs for 40 rps (its second replica ready after a minute):
  // about half its requests miss.
  EXPECT_NEAR(b.requests, 36000 + 144000, 1e-6);
  EXPECT_NEAR(b.requests_in_slo, (36000 - 600) + (600 + 20 * 3540), 1e-6);
  EXPECT_NEAR(s.value + b.value, r->metrics.value, 1e-9);
  EXPECT_NEAR(s.requests + b.requests, r->metrics.requests, 1e-6);
  EXPECT_GT(s.slo_attainment(), 0.99);
  EXPECT_LT(b.slo_attainment(), 0.6);
  EXPECT_NEAR(s.gpu_ms / 3.6e6, 2.0, 1e-6);  // one GPU for both hours
  EXPECT_EQ(s.replica_starts, 1u);
  EXPECT_EQ(b.replica_starts, 2u);
  // The ceiling counts the same start misses, whatever the policy.
  const ValueCeiling ceiling = ComputeValueCeiling(in, 2 * kHour);
  EXPECT_NEAR(ceiling.missed_at_start, s.missed_at_start + b.missed_at_start, 1e-6);
  EXPECT_NEAR(ceiling.requests, r->metrics.requests, 1e-6);
}

TEST(SimulatorTest, PreemptedWorkIsLost) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  WorkloadSpec t = MakeJob("t", WorkloadKind::kTraining, 8, 4 * 3600);
  t.checkpoint_interval = kHour;
  std::vector<ScenarioEvent> ev = {{90 * kMinute, ScenarioEvent::kNodeDown, "A100-80GB-0", 0, "x"},
                                   {2 * kHour, ScenarioEvent::kNodeUp, "A100-80GB-0", 0, "x"}};
  SimInput in = MakeSimInput(c, {t}, ev);
  auto r = Simulate(in, "fifo");
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kLost), 8 * 0.5, 1e-6);
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kDown), 8 * 0.5, 1e-6);
  // 1 h kept + 3 h more after the node returns at 2 h.
  EXPECT_EQ(r->end, 5 * kHour);
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kUseful), 8 * 4.0, 1e-6);
}

TEST(SimulatorTest, ElasticJobFinishesWhenItsResizedWorkIsDone) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  std::vector<WorkloadSpec> ws = {MakeJob("busy", WorkloadKind::kBatch, 4, 3600),
                                  MakeJob("elastic", WorkloadKind::kTraining, 8, 8 * 3600)};
  ws[1].shape.min_gpus = 2;
  auto r = Simulate(MakeSimInput(c, ws), "bestfit");
  ASSERT_TRUE(r.ok());
  // 1 h on 4 GPUs (half speed: 1800 s of work), then 8 GPUs for the remaining 27000 s.
  EXPECT_EQ(r->end, kHour + 27000 * kSecond);
  EXPECT_NEAR(r->ledger.gpu_hours(Bucket::kUseful), 4 + 4 + 8 * 7.5, 1e-6);
  EXPECT_EQ(r->metrics.kinds[static_cast<size_t>(WorkloadKind::kTraining)].completed, 1u);
}

TEST(SimulatorTest, PoliciesShareAHorizon) {
  SimInput in = RandomScenario(5);
  auto rs = SimulatePolicies(in, {"fifo", "bestfit"});
  ASSERT_TRUE(rs.ok());
  EXPECT_EQ((*rs)[0].end, (*rs)[1].end);
  EXPECT_FALSE(SimulatePolicies(in, {"fifo", "nope"}).ok());
}

TEST(SimulatorTest, PoliciesReplayedSideBySideGiveTheSameResultsAsOneAtATime) {
  // Without a horizon (the runs that end early are replayed again to the latest end) and
  // with one; the first policy's error is reported whatever the thread count.
  const std::vector<std::string> policies = {"fifo", "bestfit", "kai", "lyra", "airtime"};
  for (TimeMs horizon : {kNever, 6 * kHour}) {
    SimInput in = RandomScenario(7);
    SimOptions one;
    one.horizon = horizon;
    SimOptions four = one;
    four.threads = 4;
    auto a = SimulatePolicies(in, policies, one);
    auto b = SimulatePolicies(in, policies, four);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->size(), policies.size());
    ASSERT_EQ(b->size(), policies.size());
    for (size_t i = 0; i < policies.size(); ++i) {
      SCOPED_TRACE(policies[i]);
      const SimResult& x = (*a)[i];
      const SimResult& y = (*b)[i];
      EXPECT_EQ(x.policy, y.policy);
      EXPECT_EQ(x.end, y.end);
      EXPECT_EQ(x.events, y.events);
      EXPECT_EQ(x.metrics.value, y.metrics.value);
      EXPECT_EQ(x.metrics.slo_attainment, y.metrics.slo_attainment);
      EXPECT_EQ(x.ledger.milli_ms, y.ledger.milli_ms);
      EXPECT_EQ(x.waiting_at_end, y.waiting_at_end);
    }
  }
  SimOptions four;
  four.threads = 4;
  auto bad = SimulatePolicies(RandomScenario(7), {"fifo", "nope", "nor-this"}, four);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nope"), std::string::npos) << bad.status().message();
}

TEST(SimulatorTest, WithoutAHorizonTheMixedDayEndsUnderEveryPolicy) {
  // After its day the mixed day leaves services whose forecast repeats the day's curve
  // (replica changes and wake-ups for ever) and two jobs that never start: the replay
  // must still end, two days after the last job event.
  const std::string dir = std::string(AIRTIME_SOURCE_DIR) + "/examples/mixed-day/";
  auto in = LoadSimInput(dir + "cluster.yaml", {dir + "workloads.yaml"});
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  for (const char* policy : {"fifo", "lyra", "airtime"}) {
    auto r = Simulate(*in, policy);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_LT(r->end, 10 * kDay) << policy;
  }
}

}  // namespace
}  // namespace airtime

namespace airtime {
namespace {

// The policies below keep a quarter of each variant's replicas warm at all times
// (`variant_spare=0.25`, opt-in since the SLO-first spares): the figures count them.
//
// A service with a generalist (4 x H100, 4 req/s, quality 1) and a small variant (1 x H100,
// 2 req/s, quality 0.8), 6 req/s of one class for two hours on 16 H100: the simulator
// serves each class with the ready variants, earns value x quality, and counts the GPUs
// variant choice freed against the generalist serving the same requests.
// "chat" with one class of demand `curve` and two variants: `big` (4 x H100, 4 req/s,
// quality 1) and `small` (1 x H100, 2 req/s, quality 0.8).
WorkloadSpec BigAndSmall(std::vector<DemandPoint> curve) {
  const GpuTypeId h100 = *GpuCatalog::Builtin().Find("H100");
  WorkloadSpec s = MakeService("chat", 1);
  s.realtime.capacity_rps = 0;
  s.realtime.classes = {{"all", std::move(curve)}};
  ModelVariant big;
  big.name = "big";
  big.shape.gpu_count = 4;
  big.shape.allowed_types = {h100};
  big.throughput_rps = {{h100, 4.0}};
  big.cold_start = kMinute;
  ModelVariant small = big;
  small.name = "small";
  small.shape.gpu_count = 1;
  small.throughput_rps = {{h100, 2.0}};
  small.quality = 0.8;
  s.realtime.variants = {big, small};
  return s;
}

TEST(SimulatorVariantsTest, ValueTimesQualityAndGpuHoursFreed) {
  const WorkloadSpec s = BigAndSmall({{0, 6.0}});
  SimInput in = MakeSimInput(MakeCluster({{"H100", 8, 2}}), {s});
  ASSERT_EQ(in.workloads.size(), 2u);  // one member per variant
  SimOptions o;
  o.horizon = 2 * kHour;
  auto gen = Simulate(in, "fixed-generalist:variant_spare=0.25", o);
  auto cheap = Simulate(in, "cheapest-meeting-quality:variant_spare=0.25", o);
  ASSERT_TRUE(gen.ok() && cheap.ok());
  const ServiceMetrics& g = gen->metrics.services.at("chat");
  const ServiceMetrics& c = cheap->metrics.services.at("chat");
  EXPECT_TRUE(g.variants);
  EXPECT_EQ(gen->metrics.services.count("chat/big"), 0u);  // figures under the service's name
  // Both serve every request after the first cold start.
  EXPECT_NEAR(g.requests, 6.0 * 7200, 1e-6);
  EXPECT_NEAR(g.requests_in_slo, 6.0 * (7200 - 60), 1e-6);
  EXPECT_NEAR(c.requests_in_slo, g.requests_in_slo, 1e-6);
  EXPECT_DOUBLE_EQ(g.mean_quality(), 1.0);
  EXPECT_NEAR(c.mean_quality(), 0.8, 1e-9);
  EXPECT_NEAR(c.value, 0.8 * g.value, 1e-6);
  EXPECT_DOUBLE_EQ(g.gpu_ms_freed, 0);
  // The small variant held 3 + 1 spare replicas (4 GPUs) from its start: once ready, 4 for
  // the 3 its load needs. The generalist needs 2 replicas for 6 req/s, with spares alike
  // 2 x 4 / 3 (32 / 3 GPUs): 20 / 3 GPUs freed once ready, 4 GPUs held for nothing during
  // the cold start.
  EXPECT_NEAR(c.gpu_ms_freed / 3.6e6, (20.0 / 3 * (7200 - 60) - 4.0 * 60) / 3600, 1e-6);
  // The ledger counts a member's replicas useful by the share of their capacity that serves
  // requests: 6 of 12 req/s on 3 generalist replicas (12 GPUs), 6 of 8 on 4 small ones (4).
  const auto useful = [](const SimResult& r) {
    return static_cast<double>(r.ledger.milli_ms[static_cast<size_t>(Bucket::kUseful)]) / 3.6e9;
  };
  EXPECT_NEAR(useful(*gen), 12 * 0.5 * (7200 - 60) / 3600.0, 0.01);
  EXPECT_NEAR(useful(*cheap), 4 * 0.75 * (7200 - 60) / 3600.0, 0.01);
  EXPECT_EQ(cheap->ledger.sum(), cheap->ledger.installed_milli_ms);
}

// Where the freed GPUs went: 6 req/s on the small variant (4 replicas of 1 GPU, a spare
// included) beside three 4-GPU jobs on 16 H100, so that nothing is free. The generalist
// would have needed 20 / 3 GPUs more (2 replicas of 4 GPUs, with spares alike 32 / 3 GPUs,
// less the 4 held): they would have come from the least dense running jobs, the batch one
// (its 4 GPUs), then a training one (the 8 / 3 left).
TEST(SimulatorVariantsTest, TheGpusFreedByVariantChoiceGoToTheLeastDenseRunningWork) {
  const WorkloadSpec s = BigAndSmall({{0, 6.0}});
  WorkloadSpec batch = MakeJob("batch", WorkloadKind::kBatch, 4, 10 * 3600);
  WorkloadSpec train1 = MakeJob("train1", WorkloadKind::kTraining, 4, 10 * 3600);
  WorkloadSpec train2 = MakeJob("train2", WorkloadKind::kTraining, 4, 10 * 3600);
  train1.value.on_completion = train2.value.on_completion = 1000;  // batch keeps 10
  SimInput in = MakeSimInput(MakeCluster({{"H100", 8, 2}}), {s, batch, train1, train2});
  SimOptions o;
  o.horizon = 2 * kHour;
  auto cheap = Simulate(in, "cheapest-meeting-quality:variant_spare=0.25", o);
  auto gen = Simulate(in, "fixed-generalist:variant_spare=0.25", o);
  ASSERT_TRUE(cheap.ok() && gen.ok());
  const VariantFreedUse& f = cheap->metrics.freed_use;
  const auto kind = [](WorkloadKind k) { return static_cast<size_t>(k); };
  // Every job ran the whole replay: nothing was free once the replicas were ready.
  EXPECT_NEAR(f.freed_ms / 3.6e6, 20.0 / 3 * (7200 - 60) / 3600, 1e-6);
  EXPECT_NEAR(f.taken_ms[kind(WorkloadKind::kBatch)] / 3.6e6, 4.0 * (7200 - 60) / 3600, 1e-6);
  EXPECT_NEAR(f.taken_ms[kind(WorkloadKind::kTraining)] / 3.6e6, 8.0 / 3 * (7200 - 60) / 3600,
              1e-6);
  EXPECT_DOUBLE_EQ(f.left_free_ms, 0);
  EXPECT_DOUBLE_EQ(f.beyond_ms, 0);
  // What the service's own figure nets out: its first cold start, when its replicas held
  // GPUs and served nothing.
  EXPECT_NEAR(cheap->metrics.services.at("chat").gpu_ms_freed, f.freed_ms - 4.0 * 60000, 1e-6);
  // The generalist frees nothing.
  EXPECT_DOUBLE_EQ(gen->metrics.freed_use.freed_ms, 0);
  // The JSON report carries it.
  const nlohmann::json j = ResultToJson(*cheap)["variant_freed"];
  EXPECT_NEAR(j["gpu_hours"].get<double>(), f.freed_ms / 3.6e6, 1e-9);
  EXPECT_NEAR(j["taken_by"]["batch"].get<double>(), 4.0 * (7200 - 60) / 3600, 1e-9);
  EXPECT_NEAR(j["taken_by"]["training"].get<double>(), 8.0 / 3 * (7200 - 60) / 3600, 1e-9);
  EXPECT_FALSE(j["taken_by"].contains("eval")) << j.dump();
  EXPECT_DOUBLE_EQ(j["left_free_gpu_hours"].get<double>(), 0);
}

// The freed capacity is on the best variant's types: free L40S do not take what a generalist
// on H100 would have needed. 8 H100 hold the small variant's 4 replicas and a 4-GPU batch
// job; the 8 L40S are free.
TEST(SimulatorVariantsTest, TheGpusFreedByVariantChoiceAreOnTheBestVariantsTypes) {
  const GpuTypeId h100 = *GpuCatalog::Builtin().Find("H100");
  WorkloadSpec batch = MakeJob("batch", WorkloadKind::kBatch, 4, 10 * 3600);
  batch.shape.allowed_types = {h100};
  SimInput in =
      MakeSimInput(MakeCluster({{"H100", 8, 1}, {"L40S", 8, 1}}), {BigAndSmall({{0, 6.0}}), batch});
  SimOptions o;
  o.horizon = 2 * kHour;
  auto cheap = Simulate(in, "cheapest-meeting-quality:variant_spare=0.25", o);
  ASSERT_TRUE(cheap.ok());
  const VariantFreedUse& f = cheap->metrics.freed_use;
  EXPECT_NEAR(f.freed_ms / 3.6e6, 20.0 / 3 * (7200 - 60) / 3600, 1e-6);
  EXPECT_NEAR(f.taken_ms[static_cast<size_t>(WorkloadKind::kBatch)] / 3.6e6,
              4.0 * (7200 - 60) / 3600, 1e-6);
  EXPECT_DOUBLE_EQ(f.left_free_ms, 0);
  // The 8 / 3 GPUs left: no other job on H100 to take them; the generalist alone could not
  // have served those requests.
  EXPECT_NEAR(f.beyond_ms / 3.6e6, 8.0 / 3 * (7200 - 60) / 3600, 1e-6);
}

// Without the jobs the freed GPUs lie free.
TEST(SimulatorVariantsTest, TheGpusFreedByVariantChoiceLieFreeWhenNothingWaits) {
  SimInput in = MakeSimInput(MakeCluster({{"H100", 8, 2}}), {BigAndSmall({{0, 6.0}})});
  SimOptions o;
  o.horizon = 2 * kHour;
  auto cheap = Simulate(in, "cheapest-meeting-quality:variant_spare=0.25", o);
  ASSERT_TRUE(cheap.ok());
  const VariantFreedUse& f = cheap->metrics.freed_use;
  EXPECT_GT(f.freed_ms, 0);
  EXPECT_NEAR(f.left_free_ms, f.freed_ms, 1e-6);
  for (double taken : f.taken_ms) EXPECT_DOUBLE_EQ(taken, 0);
}

// static-split in a replay: a declared curve of 2 req/s, then 6 from 01:00. Sized for the
// peak from the start (ceil(6 / 4) = 2 generalist replicas + round(2 x 0.25) = 1 spare: 12
// GPUs of 16), it holds them for the whole two hours; airtime runs what the demand of the
// moment needs, so it holds less for the same requests served.
TEST(SimulatorVariantsTest, StaticSplitHoldsItsPeakReplicasAllDay) {
  const WorkloadSpec s = BigAndSmall({{0, 2.0}, {kHour, 6.0}});
  SimInput in = MakeSimInput(MakeCluster({{"H100", 8, 2}}), {s});
  SimOptions o;
  o.horizon = 2 * kHour;
  auto st = Simulate(in, "static-split:variant_spare=0.25", o);
  auto air = Simulate(in, "airtime:variant_spare=0.25", o);
  ASSERT_TRUE(st.ok() && air.ok());
  const ServiceMetrics& a = st->metrics.services.at("chat");
  const ServiceMetrics& b = air->metrics.services.at("chat");
  EXPECT_NEAR(a.gpu_ms / 3.6e6, 12 * 2.0, 1e-6);
  EXPECT_EQ(a.replica_starts, 3u);
  EXPECT_DOUBLE_EQ(a.mean_quality(), 1.0);
  EXPECT_LT(b.gpu_ms, a.gpu_ms);
  // Both serve every request after the first cold start (airtime's rise at 01:00 is met by
  // its forecast headroom or costs it at most one cold start of the added requests).
  EXPECT_NEAR(a.requests_in_slo, 2.0 * (3600 - 60) + 6.0 * 3600, 1e-6);
  EXPECT_GE(b.requests_in_slo, a.requests_in_slo - 4.0 * 60 - 1e-6);
}

}  // namespace
}  // namespace airtime
