// Services with model variants under the airtime policy and its peers: the mix chosen when
// GPUs are scarce or plentiful, the quality floor, make-before-break switching, no flapping
// under noisy demand, freed GPUs going to waiting work in the same cycle, and a variant a
// quantize job produces: unused before the job completes (or at all if it is cancelled),
// switched to in the cycle of its completion.
#include <gtest/gtest.h>

#include <algorithm>

#include "airtime/base/rng.h"
#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/airtime/forecast_scale.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakeService;

GpuTypeId H100() { return *GpuCatalog::Builtin().Find("H100"); }

// "chat": a generalist `big` (4 GPUs, 4 req/s, quality 1) and a quantized `small` (1 GPU,
// 2 req/s, quality 0.8): the small one needs half the GPUs per request. One class. With
// `produced`, the job "quantize" makes the small one.
WorkloadSpec Chat(double floor = 0, bool produced = false) {
  WorkloadSpec s = MakeService("chat", 1);
  s.realtime.capacity_rps = 0;
  s.realtime.quality_floor = floor;
  s.realtime.classes = {{"all", {}}};
  ModelVariant big;
  big.name = "big";
  big.shape.gpu_count = 4;
  big.shape.allowed_types = {H100()};
  big.throughput_rps = {{H100(), 4.0}};
  big.cold_start = kMinute;
  big.quality = 1.0;
  ModelVariant small = big;
  small.name = "small";
  small.shape.gpu_count = 1;
  small.throughput_rps = {{H100(), 2.0}};
  small.quality = 0.8;
  if (produced) small.produced_by = "quantize";
  s.realtime.variants = {big, small};
  return s;
}

struct Fixture {
  explicit Fixture(int gpus, const std::string& policy = "airtime", double floor = 0,
                   bool produced = false)
      : Fixture(gpus, policy, Chat(floor, produced)) {}
  Fixture(int gpus, const std::string& policy, const WorkloadSpec& service)
      : cluster(MakeCluster({{"H100", gpus, 1}})), engine(cluster, Make(policy)) {
    for (const WorkloadSpec& m : ExpandVariants(service))
      members.push_back(engine.Handle(Event::Arrival(0, m)).arrived);
  }
  // Every policy with warm spares at all times (`variant_spare=0.25`, opt-in): the tests pin
  // the mix's replica counts with them. WarmSparesWhileTheErrorBudgetIsSpent tests the default.
  Policy Make(const std::string& policy) {
    auto p = PolicyRegistry::Builtin().Make(
        policy.find("variant_spare") == std::string::npos ? policy + ":variant_spare=0.25" : policy,
        cluster);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return std::move(*p);
  }
  const CycleResult& Demand(TimeMs at, double rps) {
    for (WorkloadId m : members) engine.Handle(Event::ClassDemand(at, m, 0, rps));
    return engine.last_cycle();
  }
  int Live(int v) const { return engine.job(members[static_cast<size_t>(v)]).live_replicas(); }
  int Ready(int v) const {
    int n = 0;
    for (AllocationId a : engine.job(members[static_cast<size_t>(v)]).allocations)
      n += engine.allocation(a)->ready_at <= engine.now();
    return n;
  }
  const VariantMix::State& State() const {
    auto* scale = dynamic_cast<const ForecastScale*>(engine.policy().scale.get());
    EXPECT_NE(scale, nullptr);
    const VariantMix::State* st = scale->variant_mix().state("chat");
    EXPECT_NE(st, nullptr);
    return *st;
  }
  // Timer cycles every `step` over (from, to]; `check` after each.
  template <typename F>
  void Run(TimeMs from, TimeMs to, DurationMs step, F check) {
    for (TimeMs t = from + step; t <= to; t += step) {
      engine.Handle(Event::Timer(t));
      check();
    }
  }
  // The job "quantize" (2 GPUs, half an hour) that makes the small variant, arrived at `at`.
  WorkloadId Quantize(TimeMs at) {
    WorkloadSpec q = MakeJob("quantize", WorkloadKind::kQuantize, 2, 1800, at);
    q.shape.allowed_types = {H100()};
    return engine.Handle(Event::Arrival(at, q)).arrived;
  }
  // Feeds `event`; `min_ready` keeps the fewest ready replicas of the service seen after it.
  const CycleResult& Feed(const Event& event, int* min_ready) {
    const CycleResult& r = engine.Handle(event);
    *min_ready = std::min(*min_ready, Ready(0) + Ready(1));
    return r;
  }
  Cluster cluster;
  Engine engine;
  std::vector<WorkloadId> members;
};

bool Has(const CycleResult& r, DecisionType type, WorkloadId w) {
  return std::any_of(r.decisions.begin(), r.decisions.end(),
                     [&](const Decision& d) { return d.type == type && d.workload == w; });
}

TEST(VariantMixTest, ScarceGpusMoveToTheCheaperVariant) {
  // 12 req/s: the generalist would need 3 + 1 spare replicas, 16 GPUs; 8 are installed.
  Fixture f(8);
  f.Demand(0, 12);
  EXPECT_EQ(f.Live(0), 0);
  EXPECT_EQ(f.Live(1), 8);  // 6 + 2 spares, 1 GPU each
  EXPECT_TRUE(f.State().figures.floor_ok);
  EXPECT_EQ(f.State().figures.over_milli, 0);
}

// The GPUs a service can have are counted per type: free L40S are no room for a generalist
// that runs on H100 alone. Here a job that cannot give its GPUs back holds all 8 H100, and
// the small variant runs on L40S: the plan moves to it rather than wait for H100 (counted as
// one pool, the 8 free L40S would have "fitted" the generalist's 2 replicas of 4 GPUs).
TEST(VariantMixTest, TheGpusAServiceCanHaveAreCountedPerType) {
  const GpuTypeId l40s = *GpuCatalog::Builtin().Find("L40S");
  WorkloadSpec chat = Chat();
  ModelVariant& small = chat.realtime.variants[1];
  small.shape.allowed_types = {l40s};
  small.throughput_rps = {{l40s, 2.0}};
  const Cluster cluster = MakeCluster({{"H100", 8, 1}, {"L40S", 8, 1}});
  auto policy = PolicyRegistry::Builtin().Make("airtime:variant_spare=0.25", cluster);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  Engine engine(cluster, std::move(*policy));
  WorkloadSpec train = MakeJob("train", WorkloadKind::kTraining, 8, 10 * 3600);
  train.shape.allowed_types = {H100()};
  train.preemptible = false;
  const WorkloadId job = engine.Handle(Event::Arrival(0, train)).arrived;
  ASSERT_EQ(engine.job(job).phase, JobPhase::kRunning);
  std::vector<WorkloadId> members;
  for (const WorkloadSpec& m : ExpandVariants(chat))
    members.push_back(engine.Handle(Event::Arrival(0, m)).arrived);
  for (WorkloadId m : members) engine.Handle(Event::ClassDemand(kSecond, m, 0, 6));
  // 6 req/s: 3 small replicas and a spare, on L40S; none of the generalist.
  EXPECT_EQ(engine.job(members[0]).live_replicas(), 0);
  EXPECT_EQ(engine.job(members[1]).live_replicas(), 4);
  auto* scale = dynamic_cast<const ForecastScale*>(engine.policy().scale.get());
  ASSERT_NE(scale, nullptr);
  const VariantMix::State* st = scale->variant_mix().state("chat");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->figures.over_milli, 0);
  EXPECT_EQ(st->budget_milli, 8000);  // the free L40S; the job's H100 cannot be had
}

// "chat" with two classes, code and conv: the generalist `big` on H100 serves both, `small`
// (1 GPU, 2 req/s, quality 0.7) on L40S serves conv only; floor 0.85.
WorkloadSpec TwoClassChat() {
  const GpuTypeId l40s = *GpuCatalog::Builtin().Find("L40S");
  WorkloadSpec s = Chat(0.85);
  s.realtime.classes = {{"code", {}}, {"conv", {}}};
  ModelVariant& small = s.realtime.variants[1];
  small.shape.allowed_types = {l40s};
  small.throughput_rps = {{l40s, 2.0}};
  small.quality = 0.7;
  small.classes = {1};
  return s;
}

// Warm spares sit where a request/s costs least to hold. Work waits for H100 and none for
// L40S: the plan is the generalist alone (2 replicas for 8 req/s), and its spare's 4 req/s
// are held by 2 small replicas on L40S, not a third generalist on 4 H100. A burst of code
// beyond the generalist's replicas is then served: conv requests move to the small spares
// and the generalist serves the code. With nothing waiting anywhere the spare stays with the
// generalist (equal costs: nothing moves).
TEST(VariantMixTest, WarmSparesSitWhereTheyCostLeastAndTakeTheBurst) {
  for (const bool waiting : {true, false}) {
    SCOPED_TRACE(waiting ? "work waits for H100" : "nothing waits");
    const Cluster cluster = MakeCluster({{"H100", 16, 1}, {"L40S", 8, 1}});
    auto policy = PolicyRegistry::Builtin().Make("airtime:variant_spare=0.25", cluster);
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    Engine engine(cluster, std::move(*policy));
    std::vector<WorkloadId> m;
    for (const WorkloadSpec& w : ExpandVariants(TwoClassChat()))
      m.push_back(engine.Handle(Event::Arrival(kSecond, w)).arrived);
    for (WorkloadId id : m) {
      engine.Handle(Event::ClassDemand(2 * kSecond, id, 0, 4));
      engine.Handle(Event::ClassDemand(2 * kSecond, id, 1, 4));
    }
    if (waiting) {
      // 16 H100 for 10 hours: it cannot start beside the service, and its value per GPU-hour
      // (0.1) is far below the generalist's (3.6 a request/s).
      WorkloadSpec train = MakeJob("train", WorkloadKind::kTraining, 16, 10 * 3600, 3 * kSecond);
      train.shape.allowed_types = {H100()};
      train.value.on_completion = 16;
      engine.Handle(Event::Arrival(3 * kSecond, train));
    }
    for (TimeMs t = 10 * kSecond; t <= 5 * kMinute; t += 10 * kSecond)
      engine.Handle(Event::Timer(t));
    auto* scale = dynamic_cast<const ForecastScale*>(engine.policy().scale.get());
    ASSERT_NE(scale, nullptr);
    const VariantMix::State* st = scale->variant_mix().state("chat");
    ASSERT_NE(st, nullptr);
    EXPECT_NEAR(st->shares[0][0], 1.0, 1e-9) << st->mix;
    EXPECT_NEAR(st->shares[0][1], 1.0, 1e-9) << st->mix;
    const Job& big = engine.job(m[0]);
    const Job& small = engine.job(m[1]);
    EXPECT_EQ(big.live_replicas(), waiting ? 2 : 3) << st->mix;
    EXPECT_EQ(small.live_replicas(), waiting ? 2 : 0) << st->mix;
    // `describe` says where the spares are and why.
    EXPECT_EQ(st->mix.find("warm spares as 2 x small rather than 1 x big: cost 0.00 an hour to "
                           "hold there against 0.40") != std::string::npos,
              waiting)
        << st->mix;
    if (!waiting) continue;
    // Code bursts to 8 req/s: the generalist's 8 req/s serve all of it, the small spares
    // all of conv.
    for (WorkloadId id : m) engine.Handle(Event::ClassDemand(5 * kMinute + kSecond, id, 0, 8));
    EXPECT_NEAR(big.route_share[0], 1.0, 1e-6);
    EXPECT_NEAR(big.route_share[1], 0.0, 1e-6);
    EXPECT_NEAR(small.route_share[1], 1.0, 1e-6);
  }
}

// Two services with the same variants, the small one on L40S, floor 0.9 (half their
// requests at least on the generalist, on H100). "chat" came first and holds all 8 H100 with
// two generalist replicas; "chat-b" arrives with the same demand. Planned each alone, chat-b
// saw no H100 it could have (chat's are its own) and served nothing: its small replicas serve
// only beside a generalist. Planned together, the 8 H100 are split, one generalist each,
// the rest on the small model: both serve, at the floor.
TEST(VariantMixTest, TheRestOfAGpuThatFractionsShareIsNoRoomForWholeGpuVariants) {
  // Four jobs of 0.6 GPU each, on four of the 8 GPUs (two cannot share one): 5.6 GPUs of
  // capacity are free, but only 4 whole GPUs, all a replica of either variant can use.
  Fixture f(8);
  for (int i = 0; i < 4; ++i) {
    WorkloadSpec job = MakeJob("frac-" + std::to_string(i), WorkloadKind::kBatch, 1, 86400);
    job.shape.mode = ShareMode::kFraction;
    job.shape.gpu_milli = 600;
    job.preemptible = false;
    f.engine.Handle(Event::Arrival(0, job));
  }
  ASSERT_EQ(f.engine.state().free_whole_of_type(H100()), 4);
  ASSERT_EQ(f.engine.state().free_milli_of_type(H100()), 5600);
  f.Demand(kMinute, 10);
  EXPECT_EQ(f.State().budget_milli, 4000) << f.State().mix;
  EXPECT_EQ(f.Live(0) * 4 + f.Live(1), 4) << f.State().mix;
}

TEST(VariantMixTest, ServicesThatNeedTheSameGpusSplitThem) {
  const GpuTypeId l40s = *GpuCatalog::Builtin().Find("L40S");
  auto service = [&](const std::string& name) {
    WorkloadSpec s = Chat(0.9);
    s.name = name;
    ModelVariant& small = s.realtime.variants[1];
    small.shape.allowed_types = {l40s};
    small.throughput_rps = {{l40s, 2.0}};
    return s;
  };
  const Cluster cluster = MakeCluster({{"H100", 8, 1}, {"L40S", 8, 1}});
  auto policy = PolicyRegistry::Builtin().Make("airtime", cluster);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  Engine engine(cluster, std::move(*policy));
  auto arrive = [&](const WorkloadSpec& s, TimeMs at) {
    std::vector<WorkloadId> members;
    for (const WorkloadSpec& m : ExpandVariants(s))
      members.push_back(engine.Handle(Event::Arrival(at, m)).arrived);
    for (WorkloadId m : members) engine.Handle(Event::ClassDemand(at, m, 0, 8));
    return members;
  };
  const std::vector<WorkloadId> a = arrive(service("chat"), 0);
  for (TimeMs t = 10 * kSecond; t <= 5 * kMinute; t += 10 * kSecond) engine.Handle(Event::Timer(t));
  ASSERT_EQ(engine.job(a[0]).live_replicas(), 2);  // 8 req/s on the generalist alone
  const std::vector<WorkloadId> b = arrive(service("chat-b"), 5 * kMinute);
  for (TimeMs t = 5 * kMinute + 10 * kSecond; t <= 30 * kMinute; t += 10 * kSecond)
    engine.Handle(Event::Timer(t));
  EXPECT_EQ(engine.job(a[0]).live_replicas(), 1);
  EXPECT_EQ(engine.job(b[0]).live_replicas(), 1);
  EXPECT_GT(engine.job(a[1]).live_replicas(), 0);
  EXPECT_GT(engine.job(b[1]).live_replicas(), 0);
  auto* scale = dynamic_cast<const ForecastScale*>(engine.policy().scale.get());
  ASSERT_NE(scale, nullptr);
  for (const char* name : {"chat", "chat-b"}) {
    const VariantMix::State* st = scale->variant_mix().state(name);
    ASSERT_NE(st, nullptr);
    EXPECT_TRUE(st->figures.floor_ok) << st->mix;
    EXPECT_EQ(st->figures.over_milli, 0) << st->mix;
    EXPECT_NE(st->mix.find(
                  "shared with other services, H100: 4.0 of the 8.0 GPUs there (2 services' plans "
                  "alone would need 16.0)"),
              std::string::npos)
        << st->mix;
  }
}

// The plan is sized for the peak of its scale-down window; below that peak the generalist's
// replicas have room, and the requests the plan sends to the small model move up into it:
// as many served, of more worth.
TEST(VariantMixTest, BelowThePlansPeakRequestsMoveUpToTheBetterVariant) {
  // As in TheSearchMovesToTheFloorWhereSmallStepsFreeNothing: 8 req/s, floor 0.9, 7 of 12
  // GPUs free: half on each variant, one generalist replica (4 req/s) and small ones.
  Fixture f(12, "airtime", 0.9);
  WorkloadSpec block = MakeJob("block", WorkloadKind::kBatch, 5, 3 * 3600);
  block.shape.allowed_types = {H100()};
  f.engine.Handle(Event::Arrival(0, block));
  f.Demand(1000, 8);
  f.Run(1000, 5 * kMinute, 10 * kSecond, [] {});
  ASSERT_EQ(f.Ready(0), 1);
  ASSERT_GT(f.Ready(1), 0);
  const Job& big = f.engine.job(f.members[0]);
  const Job& small = f.engine.job(f.members[1]);
  EXPECT_NEAR(big.route_share[0], 0.5, 1e-6);
  EXPECT_NEAR(small.route_share[0], 0.5, 1e-6);
  // Demand falls to 3 req/s; the window keeps the plan and its replicas, and the generalist's
  // replica serves all 3.
  f.Demand(6 * kMinute, 3);
  f.Run(6 * kMinute, 8 * kMinute, 10 * kSecond, [] {});
  EXPECT_EQ(f.Live(0), 1);
  EXPECT_GT(f.Live(1), 0);
  EXPECT_NEAR(f.State().shares[0][0], 0.5, 1e-6);
  EXPECT_NEAR(big.route_share[0], 1.0, 1e-6);
  EXPECT_NEAR(small.route_share[0], 0.0, 1e-6);
  // At 6 req/s the generalist serves 4, the small model the rest.
  f.Demand(9 * kMinute, 6);
  EXPECT_NEAR(big.route_share[0], 4.0 / 6, 1e-6);
  EXPECT_NEAR(small.route_share[0], 2.0 / 6, 1e-6);
}

TEST(VariantMixTest, PlentifulGpusServeWithTheBestVariant) {
  Fixture f(32);
  f.Demand(0, 12);
  EXPECT_EQ(f.Live(0), 4);
  EXPECT_EQ(f.Live(1), 0);
  EXPECT_DOUBLE_EQ(f.State().figures.quality, 1.0);
}

TEST(VariantMixTest, TheQualityFloorHolds) {
  // The same scarcity with a floor of 0.9: at least half the requests stay on the generalist.
  for (double floor : {0.0, 0.9}) {
    Fixture f(8, "airtime", floor);
    f.Demand(0, 12);
    const VariantMix::State& st = f.State();
    EXPECT_GE(st.figures.quality, floor - 1e-9) << floor;
    EXPECT_TRUE(st.figures.floor_ok);
    if (floor == 0) {
      EXPECT_DOUBLE_EQ(st.figures.quality, 0.8);
    } else {
      EXPECT_GT(f.Live(0), 0);
    }
  }
}

TEST(VariantMixTest, TheSearchMovesToTheFloorWhereSmallStepsFreeNothing) {
  // Floor 0.9, 8 req/s, 7 of 12 GPUs free (a job that cannot give GPUs back holds 5). All on
  // the generalist needs 2 replicas and a spare, 12 GPUs; a tenth of the class on the small
  // model frees no generalist replica, so steps alone stayed there. Half on each (the mean
  // at the floor) is one generalist replica and 2 small ones, plus spares: within the 7.
  Fixture f(12, "airtime", 0.9);
  WorkloadSpec block = MakeJob("block", WorkloadKind::kBatch, 5, 3600);
  block.shape.allowed_types = {H100()};
  f.engine.Handle(Event::Arrival(0, block));
  f.Demand(1000, 8);
  const VariantMix::State& st = f.State();
  EXPECT_EQ(st.figures.over_milli, 0) << st.mix;
  EXPECT_TRUE(st.figures.floor_ok) << st.mix;
  EXPECT_GT(st.figures.replicas[1], 0) << st.mix;
  EXPECT_GT(f.Live(0), 0);
  EXPECT_GT(f.Live(1), 0);
}

TEST(VariantMixTest, ReplicasBelowTheFloorWaitForTheBetterOnesTheyServeBeside) {
  // Floor 0.9: a small replica (0.8) serves only beside the generalist's. `held` GPUs of 12
  // go to a job that cannot give them back.
  auto blocked = [](int held) {
    auto f = std::make_unique<Fixture>(12, "airtime", 0.9);
    WorkloadSpec block = MakeJob("block", WorkloadKind::kBatch, held, 3600);
    block.shape.allowed_types = {H100()};
    const WorkloadId b = f->engine.Handle(Event::Arrival(0, block)).arrived;
    EXPECT_EQ(f->engine.job(b).allocations.size(), 1u);
    f->Demand(1000, 4.2);
    return f;
  };
  // 4.2 req/s: the plan puts one generalist replica and one small replica beside it. 3 GPUs
  // free: the generalist's does not fit, and a small one there would serve nothing.
  auto none = blocked(9);
  EXPECT_EQ(none->Live(0), 0);
  EXPECT_EQ(none->Live(1), 0) << none->State().mix;
  EXPECT_GT(none->State().figures.replicas[1], 0) << none->State().mix;  // the plan has them
  EXPECT_EQ(none->engine.state().free_milli_of_type(H100()), 3000);
  // 7 free: the plan's generalist replica (4 req/s) fits, and the small one for the rest of
  // the 4.2 req/s runs beside it.
  auto one = blocked(5);
  EXPECT_EQ(one->Live(0), 1);
  EXPECT_EQ(one->Live(1), 1) << one->State().mix;
  EXPECT_GE(one->State().figures.quality, 0.9 - 1e-9);
}

TEST(VariantMixTest, PeersRunTheGeneralistOrTheCheapestMeetingTheFloor) {
  Fixture g(32, "fixed-generalist");
  g.Demand(0, 12);
  EXPECT_EQ(g.Live(0), 4);
  EXPECT_EQ(g.Live(1), 0);
  Fixture c(32, "cheapest-meeting-quality", 0.75);
  c.Demand(0, 12);
  EXPECT_EQ(c.Live(0), 0);
  EXPECT_EQ(c.Live(1), 8);
  // With a floor the small variant does not meet, the cheapest that does is the generalist.
  Fixture c9(32, "cheapest-meeting-quality", 0.9);
  c9.Demand(0, 12);
  EXPECT_EQ(c9.Live(0), 4);
  EXPECT_EQ(c9.Live(1), 0);
}

TEST(VariantMixTest, StaticSplitKeepsThePeakReplicasAllDay) {
  // 12 req/s, then 2 for hours: airtime scales the generalist down once the peak has left its
  // window; the static split keeps the replicas it was sized with for 12 (3 + 1 spare).
  Fixture st(32, "static-split");
  Fixture mix(32);
  for (Fixture* f : {&st, &mix}) {
    f->Demand(0, 12);
    EXPECT_EQ(f->Live(0), 4);
    EXPECT_EQ(f->Live(1), 0);
    f->Demand(10 * kMinute, 2);
    f->Run(10 * kMinute, 4 * kHour, kMinute, [] {});
  }
  EXPECT_EQ(st.Live(0), 4);
  EXPECT_EQ(st.Live(1), 0);
  EXPECT_LT(mix.Live(0), 4);
  EXPECT_EQ(st.State().switches, 0);
  // Demand through the API above the peak it was sized for: sized again (4 + 1 spare), the
  // same mix.
  st.Demand(4 * kHour + kMinute, 16);
  EXPECT_EQ(st.Live(0), 5);
  EXPECT_EQ(st.State().switches, 0);
  EXPECT_NE(st.State().why.find("sized again"), std::string::npos) << st.State().why;
}

TEST(VariantMixTest, StaticSplitIsSizedForTheDeclaredPeakFromTheStart) {
  // A declared curve: 2 req/s now, 12 from 06:00, on 8 GPUs. Sized for the peak at once, where
  // the generalist does not fit: the small variant, 6 replicas + 2 spares, from 00:00, while
  // airtime serves the 2 req/s of now with one generalist replica.
  WorkloadSpec chat = Chat();
  chat.realtime.classes[0].demand = {{0, 2}, {6 * kHour, 12}};
  Fixture st(8, "static-split", chat);
  Fixture mix(8, "airtime", chat);
  for (Fixture* f : {&st, &mix}) {
    f->Demand(0, 2);
    f->Run(0, 2 * kHour, kMinute, [] {});
  }
  EXPECT_EQ(st.Live(0), 0);
  EXPECT_EQ(st.Live(1), 8);
  EXPECT_EQ(mix.Live(0), 1);
  EXPECT_EQ(mix.Live(1), 0);
  EXPECT_NE(st.State().mix.find("8 x small"), std::string::npos) << st.State().mix;
}

TEST(VariantMixTest, SwitchesAreMakeBeforeBreakAndComeBackWhenGpusFree) {
  Fixture f(8);
  f.Demand(0, 4);  // one generalist replica, 4 GPUs
  f.Run(0, 5 * kMinute, 10 * kSecond, [] {});
  ASSERT_EQ(f.Ready(0), 1);
  // Demand triples: the generalist no longer fits; the mix moves to the small variant while
  // the generalist keeps serving until the small replicas are up.
  f.Demand(5 * kMinute, 12);
  EXPECT_EQ(f.State().switches, 1);
  EXPECT_EQ(f.Live(0), 1);
  int min_ready = 1 << 20;
  f.Run(5 * kMinute, 30 * kMinute, 10 * kSecond,
        [&] { min_ready = std::min(min_ready, f.Ready(0) + f.Ready(1)); });
  EXPECT_GE(min_ready, 1);  // never zero replicas serving
  EXPECT_EQ(f.Live(0), 0);
  EXPECT_EQ(f.Live(1), 8);
  // Demand falls back: once the peak has left the last hour (the payback window a switch by
  // choice must hold for), the generalist fits again and is worth more (quality); it comes
  // back, again before the small replicas go.
  f.Demand(30 * kMinute, 3);
  f.Run(30 * kMinute, 89 * kMinute, 10 * kSecond,
        [&] { min_ready = std::min(min_ready, f.Ready(0) + f.Ready(1)); });
  EXPECT_EQ(f.State().switches, 1);
  EXPECT_EQ(f.Live(0), 0);
  f.Run(89 * kMinute, 100 * kMinute, 10 * kSecond,
        [&] { min_ready = std::min(min_ready, f.Ready(0) + f.Ready(1)); });
  EXPECT_GE(min_ready, 1);
  EXPECT_EQ(f.State().switches, 2);
  EXPECT_EQ(f.Live(0), 1);
  EXPECT_EQ(f.Live(1), 0);
}

// SLOs first, the default (no `variant_spare`): a service with variants keeps warm spares
// while its error budget beyond the reserve is spent, none once it has recovered, and spares
// again after a rise whose cold start it missed. 6 req/s on the generalist (4 req/s per
// replica): 2 replicas, a spare is round(2 x 0.25) = 1. The first cold start (1 minute)
// misses 360 requests; at the 99.935% the budget keeps (99.9% and 35% of the allowance in
// reserve) 6 req/s earn them back in about 25.6 hours.
TEST(VariantMixTest, WarmSparesWhileTheErrorBudgetIsSpent) {
  Fixture f(24, "airtime:variant_spare=0");
  auto spares = [&] {
    const VariantMix::Figures& fig = f.State().figures;
    int n = 0;
    for (size_t v = 0; v < fig.replicas.size(); ++v) n += fig.replicas[v] - fig.firm[v];
    return n;
  };
  f.Demand(0, 6.0);
  f.engine.Handle(Event::Timer(kMinute));  // the replicas are ready
  f.engine.Handle(Event::Timer(2 * kMinute));
  EXPECT_EQ(spares(), 1) << f.State().mix;
  EXPECT_NE(f.State().mix.find("SLOs first, its error budget for the 99.90% target is spent"),
            std::string::npos)
      << f.State().mix;
  EXPECT_EQ(f.Live(0), 3);
  f.Run(2 * kMinute, 24 * kHour, kHour, [] {});
  EXPECT_EQ(spares(), 1) << "not yet recovered at 24 h";
  f.Run(24 * kHour, 30 * kHour, kHour, [] {});
  EXPECT_EQ(spares(), 0) << f.State().mix;
  EXPECT_EQ(f.State().mix.find("warm spares"), std::string::npos) << f.State().mix;
  EXPECT_EQ(f.Live(0), 2);
  // 6 -> 14 req/s: 2 replicas serve 8 while 2 more load, 360 requests missed; the budget's
  // 300 or so (6 x (0.00065 x 30 h - 60)) do not cover them: spares again.
  f.Demand(30 * kHour + kMinute, 14.0);
  f.engine.Handle(Event::Timer(30 * kHour + 3 * kMinute));
  EXPECT_GT(spares(), 0) << f.State().mix;
}

TEST(VariantMixTest, NoisyDemandDoesNotFlapTheMix) {
  // Demand jumps between 3 req/s (the generalist fits in 8 GPUs) and 5 (it does not) every
  // two minutes for 12 hours: the mix follows the peak of the last cold start + lead, so it
  // switches once and stays.
  Fixture f(8);
  Rng rng(7);
  TimeMs t = 0;
  int demand_changes = 0;
  for (; t < 12 * kHour; t += 2 * kMinute) {
    f.Demand(t, rng.Uniform() < 0.5 ? 3 : 5);
    ++demand_changes;
    f.engine.Handle(Event::Timer(t + kMinute));
  }
  EXPECT_GT(demand_changes, 300);
  EXPECT_LE(f.State().switches, 2) << f.State().why;
}

TEST(VariantMixTest, ARiseTheForecastExpectsIsServedFromItsStart) {
  // 2 req/s, and 12 from 09:00 to 17:00, each day. On the first day nothing forecasts the
  // rise: at 08:55 the plan is for 2. Once a day is known, the class's seasonal forecast
  // expects it a cold start and lead ahead: at 08:55 on the second day the plan is for 12,
  // and the replicas that serve it are ready when it comes.
  Fixture f(32);
  auto day = [&](TimeMs d) {
    f.Demand(d, 2);
    f.Run(d, d + 8 * kHour + 55 * kMinute, 5 * kMinute, [] {});
  };
  day(0);
  EXPECT_DOUBLE_EQ(f.State().demand[0], 2.0) << f.State().mix;
  EXPECT_EQ(f.State().mix.find("forecast"), std::string::npos) << f.State().mix;
  f.Demand(9 * kHour, 12);
  f.Run(9 * kHour, 17 * kHour, 5 * kMinute, [] {});
  f.Demand(17 * kHour, 2);
  f.Run(17 * kHour, kDay - 5 * kMinute, 5 * kMinute, [] {});
  day(kDay);
  EXPECT_NEAR(f.State().demand[0], 12.0, 0.5) << f.State().mix;
  EXPECT_NE(f.State().mix.find("all planned for the 12.0 req/s its forecast expects"),
            std::string::npos)
      << f.State().mix;
  f.engine.Handle(Event::Timer(kDay + 9 * kHour));
  EXPECT_GE(f.Ready(0) * 4 + f.Ready(1) * 2, 12) << f.State().mix;
}

// The 3 a.m. calls of a service with variants, under its name: replicas its window keeps
// beyond what the demand now needs are a hold, released when the window lets them go; with
// dense work waiting, the shorter window that gives them back is a hand-off.
std::vector<HoldDecision> ChatCalls(const CycleResult& r) {
  std::vector<HoldDecision> out;
  for (const HoldDecision& d : r.holds)
    if (d.name == "chat") out.push_back(d);
  return out;
}

TEST(VariantMixTest, HoldsAndHandOffsAreRecordedForTheService) {
  WorkloadSpec solo = Chat();
  solo.realtime.variants.resize(1);  // the generalist alone: 4 req/s on 4 GPUs
  {
    Fixture f(32, "airtime:variant_spare=0:slo_target=0", solo);
    f.Demand(0, 12);  // three replicas
    f.engine.Handle(Event::Timer(kMinute));
    std::vector<HoldDecision> calls = ChatCalls(f.Demand(10 * kMinute, 4));
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].service, f.members[0]);
    EXPECT_EQ(calls[0].needed, 1);
    EXPECT_EQ(calls[0].held, 2);
    EXPECT_DOUBLE_EQ(calls[0].capacity_rps, 4.0);
    EXPECT_DOUBLE_EQ(calls[0].replica_gpus, 4.0);
    EXPECT_DOUBLE_EQ(calls[0].forecast_rps, 12.0);
    EXPECT_NE(calls[0].why.find("3 replicas kept (1 needed now)"), std::string::npos)
        << calls[0].why;
    EXPECT_TRUE(ChatCalls(f.engine.Handle(Event::Timer(20 * kMinute))).empty());  // it stands
    calls = ChatCalls(f.engine.Handle(Event::Timer(10 * kMinute + kHour + kMinute)));
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].held, 0);
    EXPECT_EQ(calls[0].why, "released: the current demand needs every replica kept");
  }
  Fixture f(12, "airtime:variant_spare=0:slo_target=0", solo);
  f.Demand(0, 12);  // three replicas: every GPU
  f.engine.Handle(Event::Timer(kMinute));
  WorkloadSpec job = MakeJob("train", WorkloadKind::kTraining, 8, 3600, 2 * kMinute);
  job.shape.allowed_types = {H100()};
  job.value.on_completion = 1000;
  const WorkloadId train = f.engine.Handle(Event::Arrival(2 * kMinute, job)).arrived;
  std::vector<HoldDecision> calls = ChatCalls(f.Demand(3 * kMinute, 4));
  f.Run(3 * kMinute, 30 * kMinute, kMinute, [&] {
    for (const HoldDecision& d : ChatCalls(f.engine.last_cycle())) calls.push_back(d);
  });
  // The hold while the window keeps the peak's replicas, then the hand-off that lets the
  // job start.
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls[0].held, 2);
  const HoldDecision& handoff = calls[1];
  EXPECT_EQ(handoff.held, 0);
  EXPECT_EQ(handoff.needed, 1);
  EXPECT_DOUBLE_EQ(handoff.waiting_density, 125.0);  // 1,000 over 8 GPU-hours
  EXPECT_NE(handoff.why.find("handed off: the 12.0 req/s peak of the last 1h00m would keep 3"),
            std::string::npos)
      << handoff.why;
  EXPECT_NE(f.engine.job(train).phase, JobPhase::kPending);
}

TEST(VariantMixTest, FreedGpusStartWaitingWorkInTheSameCycle) {
  Fixture f(8);
  f.Demand(0, 3);  // one generalist replica, 4 GPUs; a small mix would need 3
  ASSERT_EQ(f.Live(0), 1);
  ASSERT_EQ(f.Live(1), 0);
  f.engine.Handle(Event::Timer(kMinute));  // ready
  // Dense work arrives that needs 5 GPUs: only 4 are free.
  WorkloadSpec job = MakeJob("train", WorkloadKind::kTraining, 5, 3600, 2 * kMinute);
  job.shape.allowed_types = {H100()};
  job.value.on_completion = 1000;
  const WorkloadId train = f.engine.Handle(Event::Arrival(2 * kMinute, job)).arrived;
  // The re-look the mix asks for (its opportunity value changed) switches to the small
  // variant: 3 replicas start on the free GPUs; the generalist keeps serving meanwhile.
  const CycleResult& relook = f.engine.Handle(Event::Timer(2 * kMinute + 1));
  EXPECT_EQ(f.State().switches, 1) << f.State().mix;
  EXPECT_EQ(f.Live(1), 3);
  EXPECT_EQ(f.Live(0), 1);
  EXPECT_EQ(f.engine.job(train).phase, JobPhase::kPending);
  TimeMs ready = kNever;
  for (const Decision& d : relook.decisions)
    if (d.type == DecisionType::kStart) ready = std::min(ready, d.ready_at);
  ASSERT_NE(ready, kNever);
  // When they are ready the generalist's replica goes and the job takes its GPUs, in one cycle.
  const CycleResult& r = f.engine.Handle(Event::Timer(ready));
  bool released = false, started = false;
  for (const Decision& d : r.decisions) {
    released |= d.type == DecisionType::kRelease && d.workload == f.members[0];
    started |= d.type == DecisionType::kStart && d.workload == train;
  }
  EXPECT_TRUE(released);
  EXPECT_TRUE(started);
  EXPECT_EQ(f.Live(0), 0);
}

TEST(VariantMixTest, AQuantizeJobsVariantIsSwitchedToInTheCycleItCompletes) {
  Fixture f(8, "airtime", 0, /*produced=*/true);
  f.Demand(0, 3);  // one generalist replica, 4 GPUs
  const WorkloadId quantize = f.Quantize(0);
  ASSERT_EQ(f.engine.job(quantize).phase, JobPhase::kRunning);  // 2 GPUs
  f.engine.Handle(Event::Timer(kMinute));                       // the generalist is ready
  // Dense work arrives that needs 5 GPUs: 2 are free. The small variant would make room,
  // but it is not produced yet: the mix keeps the generalist.
  WorkloadSpec job = MakeJob("train", WorkloadKind::kTraining, 5, 3600, 2 * kMinute);
  job.shape.allowed_types = {H100()};
  job.value.on_completion = 1000;
  const WorkloadId train = f.engine.Handle(Event::Arrival(2 * kMinute, job)).arrived;
  int min_ready = 1 << 20;
  for (TimeMs t = 2 * kMinute + 1; t < 20 * kMinute; t += kMinute)
    f.Feed(Event::Timer(t), &min_ready);
  EXPECT_EQ(f.State().switches, 0);
  EXPECT_EQ(f.Live(1), 0);
  EXPECT_NE(f.State().mix.find("small not yet produced (job 'quantize')"), std::string::npos)
      << f.State().mix;
  EXPECT_EQ(f.engine.job(train).phase, JobPhase::kPending);
  // The quantize job completes: in that cycle the mix switches to the small variant, whose
  // replicas start on the GPUs the job held and the free ones; the generalist keeps serving.
  const Allocation* q = f.engine.allocation(f.engine.job(quantize).allocations.front());
  ASSERT_NE(q, nullptr);
  const TimeMs end = q->expected_end;  // the allocation is gone once it completes
  const CycleResult& done = f.Feed(Event::Completion(end, q->id), &min_ready);
  EXPECT_EQ(f.engine.job(quantize).phase, JobPhase::kDone);
  EXPECT_EQ(f.State().switches, 1) << f.State().mix;
  EXPECT_TRUE(Has(done, DecisionType::kStart, f.members[1]));
  EXPECT_EQ(f.Live(1), 3);  // 2 for 3 req/s and a spare, 1 GPU each
  EXPECT_EQ(f.Live(0), 1);
  EXPECT_EQ(f.engine.job(train).phase, JobPhase::kPending);  // 1 GPU free
  // Once they are ready the generalist goes and the waiting job takes its GPUs, in one cycle.
  TimeMs ready = kNever;
  for (const Decision& d : done.decisions)
    if (d.type == DecisionType::kStart && d.workload == f.members[1])
      ready = std::min(ready, d.ready_at);
  ASSERT_NE(ready, kNever);
  const CycleResult& up = f.Feed(Event::Timer(ready), &min_ready);
  EXPECT_TRUE(Has(up, DecisionType::kRelease, f.members[0]));
  EXPECT_TRUE(Has(up, DecisionType::kStart, train));
  EXPECT_EQ(f.Live(0), 0);
  for (TimeMs t = ready + kMinute; t < ready + 30 * kMinute; t += kMinute)
    f.Feed(Event::Timer(t), &min_ready);
  EXPECT_GE(min_ready, 1);  // never zero replicas serving across the switch
  EXPECT_EQ(f.State().switches, 1);
  EXPECT_EQ(f.Live(1), 3);
}

TEST(VariantMixTest, AVariantWhoseProducerIsCancelledIsNeverUsed) {
  // 12 req/s: the generalist would need 16 GPUs of the 8; the small variant would fit. Its
  // producer is cancelled: the mix keeps what it has (the generalist, short of demand).
  Fixture f(8, "airtime", 0, /*produced=*/true);
  const WorkloadId quantize = f.Quantize(0);
  f.Demand(0, 12);
  f.engine.Handle(Event::Cancel(5 * kMinute, quantize));
  f.Run(5 * kMinute, 3 * kHour, 5 * kMinute, [&] { EXPECT_EQ(f.Live(1), 0); });
  EXPECT_EQ(f.State().switches, 0);
  EXPECT_EQ(f.Live(0), 2);
  EXPECT_GT(f.State().figures.unserved_rps + f.State().figures.over_milli, 0);
  EXPECT_EQ(f.State().figures.replicas[1], 0);
}

TEST(VariantMixTest, PeersConsiderOnlyProducedVariants) {
  // cheapest-meeting-quality runs the generalist until the quantized variant exists, then
  // the cheaper one; fixed-generalist never does.
  for (const char* policy : {"cheapest-meeting-quality", "fixed-generalist"}) {
    Fixture f(32, policy, 0.75, /*produced=*/true);
    const WorkloadId quantize = f.Quantize(0);
    f.Demand(0, 12);
    EXPECT_EQ(f.Live(0), 4) << policy;
    EXPECT_EQ(f.Live(1), 0) << policy;
    const Allocation* q = f.engine.allocation(f.engine.job(quantize).allocations.front());
    ASSERT_NE(q, nullptr);
    const TimeMs end = q->expected_end;  // the allocation is gone once it completes
    f.engine.Handle(Event::Completion(end, q->id));
    f.Run(end, end + 2 * kHour, 5 * kMinute, [] {});
    const bool cheapest = std::string(policy) == "cheapest-meeting-quality";
    EXPECT_EQ(f.Live(1), cheapest ? 8 : 0) << policy;
    EXPECT_EQ(f.Live(0), cheapest ? 0 : 4) << policy;
  }
}

}  // namespace
}  // namespace airtime
