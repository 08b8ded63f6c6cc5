#include "airtime/fgd/fgd_protocol.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "airtime/base/parallel.h"
#include "airtime/base/rng.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t Requested(const OpenbPod& p) {
  return static_cast<int64_t>(p.num_gpu) * static_cast<int64_t>(p.gpu_milli);
}

// The reference's Random baseline: every feasible node equally likely, drawn per pod, and
// a shared pod on a uniformly random GPU that can take it.
class RandomScore : public ScorePlugin {
 public:
  explicit RandomScore(uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "random"; }
  double Score(const Job&, NodeIndex, const Engine&) const override { return rng_.Uniform(); }
  bool SelectGpus(const Job& job, NodeIndex node, const Engine& engine,
                  std::vector<GpuIndex>* out) const override {
    const Shape& shape = job.s().shape;
    if (shape.gpu_count != 1 || shape.mode != ShareMode::kFraction) return false;
    const GpuIndex first = engine.cluster().first_gpu(node);
    GpuIndex chosen = -1;
    uint64_t seen = 0;
    for (int i = 0; i < engine.cluster().node(node).gpu_count; ++i)
      if (engine.state().GpuTakes(shape, first + i) && rng_.Below(++seen) == 0) chosen = first + i;
    if (chosen < 0) return false;
    out->push_back(chosen);
    return true;
  }

 private:
  mutable Rng rng_;
};

StatusOr<Policy> MakePolicy(const std::string& spec, const Cluster& cluster, uint64_t seed) {
  const PolicyRegistry& registry = PolicyRegistry::Builtin();
  const auto names = registry.names();
  if (spec == "random" && std::find(names.begin(), names.end(), spec) == names.end()) {
    Policy p;
    p.name = "random";
    p.description = "arrival order with skipping, uniformly random feasible node";
    p.queue_sort = std::make_unique<ArrivalOrder>();
    p.scores.emplace_back(std::make_unique<RandomScore>(seed ^ 0x5eed5eed5eedULL), 1.0);
    return p;
  }
  return registry.Make(spec, cluster);
}

}  // namespace

const FgdPolicyReport* FgdReport::Find(const std::string& policy) const {
  for (const auto& p : policies)
    if (p.policy == policy) return &p;
  return nullptr;
}

std::vector<OpenbPod> FgdArrivals(std::vector<OpenbPod> pods, int64_t capacity_milli, double tune,
                                  uint64_t seed, int64_t* cloned) {
  std::sort(pods.begin(), pods.end(),
            [](const OpenbPod& a, const OpenbPod& b) { return a.name < b.name; });
  int64_t total = 0;
  for (const OpenbPod& p : pods) total += Requested(p);
  Rng rng(seed);
  std::vector<OpenbPod> out = pods;
  rng.Shuffle(out);
  const double target = tune * static_cast<double>(capacity_milli);
  int64_t k = 0;
  if (total > 0) {
    while (static_cast<double>(total) < target) {
      OpenbPod clone = pods[rng.Below(pods.size())];
      clone.name += "#" + std::to_string(++k);
      total += Requested(clone);
      out.push_back(std::move(clone));
    }
  }
  if (cloned) *cloned = k;
  return out;
}

std::vector<FgdTask> FgdTypicalTasks(const std::vector<OpenbPod>& pods) {
  std::vector<Shape> shapes;
  shapes.reserve(pods.size());
  for (const OpenbPod& p : pods) shapes.push_back(ToWorkloadSpec(p).shape);
  return TypicalTasks(shapes, 0.95);
}

StatusOr<FgdSeedRun> RunFgdSeed(const Cluster& cluster, const std::vector<OpenbPod>& arrivals,
                                const std::string& policy_spec, uint64_t seed,
                                const std::vector<FgdTask>* typical) {
  const auto start = std::chrono::steady_clock::now();
  auto policy = MakePolicy(policy_spec, cluster, seed);
  if (!policy.ok()) return policy.status();
  if (typical)
    if (FgdScore* fgd = FindFgdScore(*policy)) fgd->SetTypicalTasks(*typical);
  Engine engine(cluster, std::move(*policy), EngineOptions{seed});
  const double capacity = 1000.0 * static_cast<double>(cluster.gpu_count());
  FgdSeedRun run;
  run.seed = seed;
  std::vector<double> sum(kFgdBins, 0.0);
  TimeMs t = 0;
  for (const OpenbPod& pod : arrivals) {
    const CycleResult& r = engine.Handle(Event::Arrival(t, ToWorkloadSpec(pod)));
    if (!r.event_status.ok()) return r.event_status;
    const WorkloadId id = r.arrived;
    if (engine.job(id).phase != JobPhase::kRunning) {
      ++run.pods_failed;
      if (pod.num_gpu > 0) ++run.gpu_pods_failed;
      run.failed_milli += Requested(pod);
      const CycleResult& c = engine.Handle(Event::Cancel(t, id));
      if (!c.event_status.ok()) return c.event_status;
    }
    ++t;
    ++run.pods_arrived;
    run.arrived_milli += Requested(pod);
    const double arrived_pct = 100.0 * static_cast<double>(run.arrived_milli) / capacity;
    const long bin = std::lround(arrived_pct);
    if (bin >= 0 && bin < kFgdBins) {
      sum[static_cast<size_t>(bin)] +=
          100.0 * static_cast<double>(engine.state().allocated_milli()) / capacity;
      ++run.curve.arrivals[static_cast<size_t>(bin)];
    }
  }
  for (size_t b = 0; b < sum.size(); ++b) {
    run.curve.used[b] = run.curve.arrivals[b] > 0 ? sum[b] / run.curve.arrivals[b]
                                                  : std::numeric_limits<double>::quiet_NaN();
  }
  run.allocated_milli = engine.state().allocated_milli();
  run.wall_seconds = SecondsSince(start);
  return run;
}

StatusOr<FgdReport> RunFgdProtocol(const FgdOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.seeds <= 0) return InvalidArgument("fgd protocol: seeds must be > 0");
  if (!(options.tune > 0)) return InvalidArgument("fgd protocol: tune must be > 0");
  if (options.policies.empty()) return InvalidArgument("fgd protocol: no policy given");
  auto cluster = ImportOpenbNodes(options.nodes_csv);
  if (!cluster.ok()) return cluster.status();
  auto pods = ImportOpenbPods(options.pods_csv);
  if (!pods.ok()) return pods.status();
  if (cluster->gpu_count() == 0) return InvalidArgument(options.nodes_csv + ": no GPUs");

  FgdReport report;
  report.nodes_csv = options.nodes_csv;
  report.pods_csv = options.pods_csv;
  report.capacity_milli = 1000 * static_cast<int64_t>(cluster->gpu_count());
  report.original_pods = pods->size();
  report.typical_tasks = FgdTypicalTasks(*pods);
  for (const std::string& spec : options.policies) {
    FgdPolicyReport pr;
    pr.policy = spec;
    report.policies.push_back(std::move(pr));
  }
  // Every seed's arrivals first (a pure function of the pods and the seed), then every
  // (seed, policy) run side by side, collected in seed then policy order.
  const size_t seeds = static_cast<size_t>(options.seeds);
  const size_t policies = report.policies.size();
  std::vector<std::vector<OpenbPod>> arrivals(seeds);
  std::vector<int64_t> cloned(seeds, 0);
  for (size_t i = 0; i < seeds; ++i)
    arrivals[i] =
        FgdArrivals(*pods, report.capacity_milli, options.tune, options.first_seed + i, &cloned[i]);
  std::vector<StatusOr<FgdSeedRun>> runs(seeds * policies, Internal("not run"));
  ParallelFor(runs.size(), options.threads, [&](size_t k) {
    const size_t i = k / policies;
    runs[k] = RunFgdSeed(*cluster, arrivals[i], report.policies[k % policies].policy,
                         options.first_seed + i, &report.typical_tasks);
    if (options.on_run_done) options.on_run_done();
  });
  for (size_t k = 0; k < runs.size(); ++k) {
    if (!runs[k].ok()) return runs[k].status();
    FgdSeedRun& run = *runs[k];
    run.pods_cloned = cloned[k / policies];
    FgdPolicyReport& pr = report.policies[k % policies];
    pr.pods_arrived += run.pods_arrived;
    pr.pods_failed += run.pods_failed;
    pr.wall_seconds += run.wall_seconds;
    pr.seeds.push_back(std::move(run));
  }
  for (FgdPolicyReport& pr : report.policies) {
    for (size_t b = 0; b < static_cast<size_t>(kFgdBins); ++b) {
      double sum = 0;
      int n = 0;
      for (const FgdSeedRun& r : pr.seeds) {
        pr.mean.arrivals[b] += r.curve.arrivals[b];
        if (r.curve.arrivals[b] > 0) {
          sum += r.curve.used[b];
          ++n;
        }
      }
      pr.mean.used[b] = n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN();
    }
  }
  report.wall_seconds = SecondsSince(start);
  return report;
}

}  // namespace airtime
