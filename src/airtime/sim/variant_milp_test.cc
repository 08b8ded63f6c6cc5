// The variant MILP against brute force: on tiny instances (one service, one class, two
// variants, one GPU type, two or three slots, at most one waiting job) every assignment of
// replicas is enumerated, each slot's routing solved exactly (a two-variable LP, by its
// vertices), and the best total compared with CBC's optimum.
#include "airtime/sim/variant_milp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "airtime/base/rng.h"
#include "airtime/model/cluster.h"

namespace airtime {
namespace {

using Instance = VariantMilpInstance;

// One service "chat", one class, variants `big` and `small` on one type of `gpus` GPUs.
Instance Tiny(double gpus, int slots, std::vector<double> demand) {
  Instance in;
  in.slots = slots;
  in.types = {"H100"};
  in.gpus = {gpus};
  Instance::Service svc;
  svc.name = "chat";
  svc.value_per_request = 0.001;
  svc.classes = {"all"};
  Instance::Variant big{"big", 4, {4.0}, 1.0, {true}, 0, 1 << 20};
  Instance::Variant small{"small", 1, {2.0}, 0.8, {true}, 0, 1 << 20};
  svc.variants = {big, small};
  for (double d : demand) svc.demand.push_back({d});
  in.services = {svc};
  return in;
}

// The best value of serving `demand` with capacities cap[0], cap[1] at qualities q and the
// floor: max q0 r0 + q1 r1 over the polygon r >= 0, r_v <= cap_v, r0 + r1 <= demand,
// (q0 - f) r0 + (q1 - f) r1 >= 0, at its vertices.
double BestRouting(const double cap[2], const double q[2], double floor, double demand) {
  // Lines a0 r0 + a1 r1 = b.
  struct Line {
    double a0, a1, b;
  };
  const std::vector<Line> lines = {{1, 0, 0},      {0, 1, 0},      {1, 0, cap[0]},
                                   {0, 1, cap[1]}, {1, 1, demand}, {q[0] - floor, q[1] - floor, 0}};
  auto feasible = [&](double r0, double r1) {
    const double e = 1e-9;
    return r0 >= -e && r1 >= -e && r0 <= cap[0] + e && r1 <= cap[1] + e && r0 + r1 <= demand + e &&
           (q[0] - floor) * r0 + (q[1] - floor) * r1 >= -e;
  };
  double best = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    for (size_t j = i + 1; j < lines.size(); ++j) {
      const Line& l = lines[i];
      const Line& m = lines[j];
      const double det = l.a0 * m.a1 - l.a1 * m.a0;
      if (std::abs(det) < 1e-12) continue;
      const double r0 = (l.b * m.a1 - l.a1 * m.b) / det, r1 = (l.a0 * m.b - l.b * m.a0) / det;
      if (feasible(r0, r1)) best = std::max(best, q[0] * r0 + q[1] * r1);
    }
  return best;
}

// Enumerates replicas 0..most of each variant in each slot.
double BruteForce(const Instance& in, int most) {
  const auto& svc = in.services[0];
  const size_t ns = static_cast<size_t>(in.slots), cells = 2 * ns;
  const double h = in.slot_hours;
  std::vector<int> x(cells, 0);
  double best = -1;
  for (bool more = true; more;) {
    bool ok = true;
    double value = 0, free_work = 0;
    for (size_t s = 0; s < ns && ok; ++s) {
      double used = 0, cap[2], q[2];
      int total = 0;
      for (size_t v = 0; v < 2; ++v) {
        const auto& var = svc.variants[v];
        const int n = x[2 * s + v], before = s > 0 ? x[2 * (s - 1) + v] : 0;
        used += n * var.gpus;
        total += n;
        ok = ok && n <= var.max_replicas;
        cap[v] = n * var.rps[0] -
                 std::max(0, n - before) * var.rps[0] * std::min(var.cold_start_hours, h) / h;
        q[v] = var.quality;
      }
      ok = ok && used <= in.gpus[0] + 1e-9 && total >= svc.min_replicas;
      value += svc.value_per_request * 3600 * h *
               BestRouting(cap, q, svc.quality_floor, svc.demand[s][0]);
      for (const auto& job : in.jobs)
        if (static_cast<int>(s) >= job.first_slot)
          free_work += in.gpus[0] - used >= job.gpus - 1e-9 ? h / job.hours[0] : 0;
    }
    for (const auto& job : in.jobs)
      if (job.gpus <= in.gpus[0] && free_work >= 1 - 1e-9) value += job.value;
    if (ok) best = std::max(best, value);
    more = false;
    for (size_t k = 0; k < cells; ++k) {
      if (++x[k] <= most) {
        more = true;
        break;
      }
      x[k] = 0;
    }
  }
  return best;
}

TEST(VariantMilpTest, OneSlotByHand) {
  // 6 req/s on 4 GPUs: one `big` replica serves 4 at quality 1 (4 x 3,600 x 0.001 = 14.4);
  // four `small` ones serve all 6 at 0.8 (17.28), the optimum.
  const VariantMilpResult r = SolveVariantMilp(Tiny(4, 1, {6}));
  ASSERT_EQ(r.status, "optimal");
  EXPECT_NEAR(r.value, 17.28, 1e-6);
  EXPECT_EQ(r.replicas[0][0][0][0], 0);
  EXPECT_GE(r.replicas[0][1][0][0], 3);
  // A floor of 0.9 keeps half the requests on `big`: 1 big + 0 small serves 4 (14.4); the
  // GPUs hold no more.
  Instance floor = Tiny(4, 1, {6});
  floor.services[0].quality_floor = 0.9;
  EXPECT_NEAR(SolveVariantMilp(floor).value, 14.4, 1e-6);
}

TEST(VariantMilpTest, MatchesBruteForceWithColdStartsFloorAndAJob) {
  // Two and three slots of half an hour; the cold start costs a share of a new replica's
  // first slot; a waiting job competes for the GPUs.
  Instance in = Tiny(6, 3, {3, 9, 2});
  in.slot_hours = 0.5;
  in.services[0].variants[0].cold_start_hours = 0.25;
  in.services[0].variants[1].cold_start_hours = 0.1;
  in.services[0].quality_floor = 0.85;
  in.services[0].min_replicas = 1;
  const VariantMilpResult r = SolveVariantMilp(in);
  ASSERT_EQ(r.status, "optimal");
  EXPECT_NEAR(r.value, BruteForce(in, 6), 1e-6);
  in.jobs.push_back({"train", 3.0, 2, {1.0}, 0, {}});
  const VariantMilpResult rj = SolveVariantMilp(in);
  ASSERT_EQ(rj.status, "optimal");
  EXPECT_NEAR(rj.value, BruteForce(in, 6), 1e-6);
  EXPECT_NEAR(rj.realtime_value + rj.job_value, rj.value, 1e-6);
  // A gang at part width can only do better.
  VariantMilpOptions part;
  part.whole_gangs = false;
  EXPECT_GE(SolveVariantMilp(in, part).value, rj.value - 1e-6);
}

TEST(VariantMilpTest, MatchesBruteForceOnRandomTinyInstances) {
  Rng rng(22);
  for (int k = 0; k < 12; ++k) {
    const int slots = 2 + static_cast<int>(rng.Below(2));
    std::vector<double> demand;
    for (int s = 0; s < slots; ++s) demand.push_back(12 * rng.Uniform());
    Instance in = Tiny(2 + static_cast<double>(rng.Below(5)), slots, demand);
    auto& svc = in.services[0];
    svc.variants[0].gpus = 1 + static_cast<double>(rng.Below(3));
    svc.variants[0].rps = {1 + 5 * rng.Uniform()};
    svc.variants[1].rps = {1 + 3 * rng.Uniform()};
    svc.variants[1].quality = 0.5 + 0.5 * rng.Uniform();
    svc.variants[0].cold_start_hours = 0.5 * rng.Uniform();
    svc.variants[1].cold_start_hours = 0.5 * rng.Uniform();
    svc.variants[1].max_replicas = 2 + static_cast<int>(rng.Below(3));
    svc.quality_floor = rng.Uniform() < 0.5 ? 0 : 0.6 + 0.3 * rng.Uniform();
    if (rng.Uniform() < 0.6)
      in.jobs.push_back({"job",
                         20 * rng.Uniform(),
                         1 + static_cast<double>(rng.Below(2)),
                         {0.5 + 2 * rng.Uniform()},
                         static_cast<int>(rng.Below(2)),
                         {}});
    const VariantMilpResult r = SolveVariantMilp(in);
    ASSERT_EQ(r.status, "optimal") << k;
    EXPECT_NEAR(r.value, BruteForce(in, 6), 1e-6) << "instance " << k;
  }
}

TEST(VariantMilpTest, ReplicasAreWholeAndTheFloorHoldsInTheSolution) {
  // The LP relaxation would run 1.5 `big` replicas for 6 req/s; the MILP runs whole ones
  // and its value is what the brute force finds.
  Instance in = Tiny(6, 2, {6, 6});
  in.services[0].quality_floor = 1.0;  // only `big` may serve
  const VariantMilpResult r = SolveVariantMilp(in);
  ASSERT_EQ(r.status, "optimal");
  EXPECT_EQ(r.replicas[0][1][0][0] + r.replicas[0][1][0][1], 0);
  EXPECT_EQ(r.replicas[0][0][0][0], 1);  // 2 would need 8 GPUs
  EXPECT_NEAR(r.value, 2 * 4 * 3600 * 0.001, 1e-6);
  EXPECT_NEAR(r.value, BruteForce(in, 6), 1e-6);
}

// Deadline decay: two 4-GPU jobs of an hour on 4 GPUs over two hourly slots, one at a time.
// `due` is worth 10 in the first slot and nothing after its deadline; `late` 12, then 11 in
// the second slot. Full values would take 12 + 10 in either order; with the decay, `due`
// runs first (10 + 11 = 21 against 12 + 0), and the solution says in which slot each
// completed.
TEST(VariantMilpTest, ACompletionEarnsItsValueDecayedAtTheEndOfItsSlot) {
  Instance in;
  in.slots = 2;
  in.types = {"H100"};
  in.gpus = {4};
  Instance::Job due{"due", 10, 4, {1.0}, 0, {10, 0}};
  Instance::Job late{"late", 12, 4, {1.0}, 0, {12, 11}};
  in.jobs = {late, due};
  const VariantMilpResult r = SolveVariantMilp(in);
  ASSERT_TRUE(r.ok()) << r.status;
  EXPECT_NEAR(r.value, 21, 1e-6);
  EXPECT_NEAR(r.job_value, 21, 1e-6);
  EXPECT_EQ(r.job_slot, (std::vector<int>{1, 0}));
  // Without values by slot, each job is worth its value wherever it completes.
  in.jobs[0].value_by_slot.clear();
  in.jobs[1].value_by_slot.clear();
  const VariantMilpResult flat = SolveVariantMilp(in);
  ASSERT_TRUE(flat.ok()) << flat.status;
  EXPECT_NEAR(flat.value, 22, 1e-6);
  // 2 GPUs for 4-GPU gangs: nothing runs.
  in.gpus = {2};
  EXPECT_NEAR(SolveVariantMilp(in).value, 0, 1e-9);
}

TEST(VariantMilpTest, InstanceOfASimulationInput) {
  // A service with two variants and one class, a job, on 8 H100: the instance carries the
  // GPUs, the variants' figures, the class's mean demand per slot and the job's run time.
  const GpuTypeId h100 = *GpuCatalog::Builtin().Find("H100");
  Node node;
  node.name = "n";
  node.gpu_type = h100;
  node.gpu_count = 8;
  auto cluster = Cluster::Build("c", {node});
  ASSERT_TRUE(cluster.ok());
  WorkloadSpec chat;
  chat.name = "chat";
  chat.kind = WorkloadKind::kRealtime;
  chat.value.per_1k_requests = 2;
  chat.realtime.latency_slo_ms = 100;
  chat.realtime.min_replicas = 1;
  chat.realtime.quality_floor = 0.5;
  chat.realtime.classes = {{"all", {{0, 2}, {30 * kMinute, 6}}}};
  ModelVariant big;
  big.name = "big";
  big.shape.gpu_count = 2;
  big.shape.allowed_types = {h100};
  big.throughput_rps = {{h100, 4.0}};
  big.cold_start = 6 * kMinute;
  ModelVariant small = big;
  small.name = "small";
  small.shape.gpu_count = 1;
  small.quality = 0.7;
  chat.realtime.variants = {big, small};
  WorkloadSpec job;
  job.name = "train";
  job.kind = WorkloadKind::kTraining;
  job.shape.gpu_count = 4;
  job.shape.allowed_types = {h100};
  job.work_seconds = 3600;
  job.value.on_completion = 50;
  job.deadline = 90 * kMinute;
  job.value.decay_after_deadline = kHour;
  std::vector<WorkloadSpec> all = ExpandVariants(chat);
  all.push_back(job);
  const SimInput input = MakeSimInput(*cluster, all);
  const Instance in = VariantMilpInstanceOf(input, 2 * kHour, kHour);
  ASSERT_EQ(in.slots, 2);
  ASSERT_EQ(in.gpus, std::vector<double>{8});
  ASSERT_EQ(in.services.size(), 1u);
  const auto& svc = in.services[0];
  EXPECT_EQ(svc.min_replicas, 1);
  EXPECT_DOUBLE_EQ(svc.value_per_request, 0.002);
  EXPECT_DOUBLE_EQ(svc.demand[0][0], 4);  // half an hour at 2, half at 6
  EXPECT_DOUBLE_EQ(svc.demand[1][0], 6);
  ASSERT_EQ(svc.variants.size(), 2u);
  EXPECT_DOUBLE_EQ(svc.variants[0].gpus, 2);
  EXPECT_DOUBLE_EQ(svc.variants[0].cold_start_hours, 0.1);
  EXPECT_DOUBLE_EQ(svc.variants[1].quality, 0.7);
  ASSERT_EQ(in.jobs.size(), 1u);
  EXPECT_DOUBLE_EQ(in.jobs[0].gpus, 4);
  EXPECT_NEAR(in.jobs[0].hours[0], 1 / job.SpeedOn(h100, GpuCatalog::Builtin()), 1e-3);
  // Its value at each slot's end: in full by 01:00, half at 02:00 (30 of 60 minutes late).
  EXPECT_EQ(in.jobs[0].value_by_slot, (std::vector<double>{50, 25}));
}

}  // namespace
}  // namespace airtime
