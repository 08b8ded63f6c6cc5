// variant_milp_bench: airtime's choice of model variants against the offline optimum
// (src/airtime/sim/variant_milp.h) on small instances built from the model-variants scenario
// (examples/variants).
//
//   variant_milp_bench [--cluster FILE] [--workload FILE] [--seeds N] [--max-seconds S]
//                      [--gap G] [--horizon DURATION] [--only NAME] [--plans]
//                      [--decisions FILE]
//
// Instances: the scenario as shipped ("shipped", its cluster as it is, every GPU type: with
// --cluster examples/suite/variants-mix/cluster.yaml --workload .../workloads.yaml it is
// 2 services x 3 variants x 3 types x 24 slots), then N (default 6) seeded variations of it
// ("seed-K"): its demand scaled by 0.5-1.5, one to three H100 nodes and one or two L40S nodes
// of 8 GPUs, the quality floor 0.85 (as shipped) or 0.6, and with probability one half a
// second copy of the assistant ("assistant-b", demand scaled by 0.3-1.0 of its own) so that
// two services share the GPUs; and "three", as shipped with two copies at 0.6 and 0.4 of its
// demand (three services). Each is replayed in the simulator (seed 1, to the horizon) under
// airtime, fixed-generalist, cheapest-meeting-quality and static-split, and its MILP solved with
// hourly slots. One line per instance: its size (services x variants x GPU types x slots,
// GPUs, jobs), each policy's value, the optimum (the best solution CBC found and its bound:
// equal when proven optimal), airtime's value as a share of the optimum and the best
// policy's, the MILP's split of value between requests and jobs beside airtime's, and the
// solve time. Run from the
// repository root (the scenario's trace paths are relative to its file). CBC stops at
// --max-seconds (default 120) or once its solution is within --gap (default 0.001) of its
// bound. Then the optimum with each service's best-quality variant alone (opt_gen) and what
// the choice of variants adds to the optimum (opt-gen), to set beside airtime - generalist.
// Last, airtime replayed on the MILP's own demand, each hour's mean (air@mean), and that as a
// share of the optimum: what is left of the gap without the optimum's first relaxation (a
// policy must serve the peaks within each hour; the MILP serves the mean).
// --plans adds the optimum's replicas per slot and each policy's figures per service.
// --decisions FILE writes airtime's decisions on each instance replayed (one JSON object per
// line, as `airtime sim --decisions` writes them), to see where its gap goes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "airtime/base/rng.h"
#include "airtime/base/strings.h"
#include "airtime/sim/simulator.h"
#include "airtime/sim/variant_milp.h"

namespace airtime {
namespace {

struct Variation {
  std::string name;
  double demand_scale = 1;
  int h100_nodes = -1, l40s_nodes = -1;  // < 0: the cluster's nodes as shipped, every type
  double floor = -1;                     // < 0: as shipped
  double second_service = 0;             // > 0: a copy of each service at this share of its demand
  double third_service = 0;              // > 0: another copy, at this share
};

void ScaleCurve(std::vector<DemandPoint>& curve, double k) {
  for (DemandPoint& p : curve) p.rps *= k;
}

// The shipped input with a variation applied: nodes of each type copied or dropped (by the
// first node of each type as the template; only H100 and L40S then), demand and floors
// rewritten.
StatusOr<SimInput> Vary(const SimInput& base, const Variation& v) {
  SimInput in = base;
  const GpuCatalog& catalog = base.cluster.catalog();
  std::vector<Node> nodes;
  if (v.h100_nodes < 0) nodes = base.cluster.nodes();
  for (const auto& [type, count] : {std::pair<std::string, int>{"H100", v.h100_nodes},
                                    std::pair<std::string, int>{"L40S", v.l40s_nodes}}) {
    if (count < 0) continue;
    const Node* model = nullptr;
    for (const Node& n : base.cluster.nodes())
      if (catalog.type(n.gpu_type).name == type && model == nullptr) model = &n;
    if (model == nullptr) return InvalidArgument("the cluster has no " + type + " node to copy");
    for (int k = 0; k < count; ++k) {
      Node n = *model;
      n.name = type + "-" + std::to_string(k);
      nodes.push_back(n);
    }
  }
  auto cluster = Cluster::Build(base.cluster.name() + "-" + v.name, nodes, catalog);
  if (!cluster.ok()) return cluster.status();
  in.cluster = std::move(*cluster);
  std::vector<WorkloadSpec> copies;
  for (WorkloadSpec& w : in.workloads) {
    if (!w.is_service()) continue;
    RealtimeProfile& rt = w.realtime;
    ScaleCurve(rt.demand, v.demand_scale);
    for (RequestClass& c : rt.classes) ScaleCurve(c.demand, v.demand_scale);
    if (v.floor >= 0) rt.quality_floor = v.floor;
    for (const auto& [suffix, share] : {std::pair<std::string, double>{"-b", v.second_service},
                                        std::pair<std::string, double>{"-c", v.third_service}}) {
      if (share <= 0 || !rt.is_member()) continue;
      WorkloadSpec b = w;
      b.realtime.group = rt.group + suffix;
      b.name = b.realtime.group + "/" + rt.variants[static_cast<size_t>(rt.variant)].name;
      ScaleCurve(b.realtime.demand, share);
      for (RequestClass& c : b.realtime.classes) ScaleCurve(c.demand, share);
      copies.push_back(std::move(b));
    }
  }
  for (WorkloadSpec& b : copies) in.workloads.push_back(std::move(b));
  std::stable_sort(
      in.workloads.begin(), in.workloads.end(),
      [](const WorkloadSpec& a, const WorkloadSpec& b) { return a.submit_at < b.submit_at; });
  return in;
}

// The instance with each service's variants cut to the best-quality one for each class (the
// first among equals): the optimum of the generalist alone, so that optimum - this is what
// choosing variants is worth in the MILP, beside airtime - fixed-generalist in the simulator.
VariantMilpInstance GeneralistOnly(VariantMilpInstance mi) {
  for (auto& svc : mi.services) {
    std::vector<bool> keep(svc.variants.size(), false);
    for (size_t c = 0; c < svc.classes.size(); ++c) {
      int best = -1;
      for (size_t v = 0; v < svc.variants.size(); ++v)
        if (c < svc.variants[v].serves.size() && svc.variants[v].serves[c] &&
            (best < 0 || svc.variants[v].quality > svc.variants[static_cast<size_t>(best)].quality))
          best = static_cast<int>(v);
      if (best >= 0) keep[static_cast<size_t>(best)] = true;
    }
    std::vector<VariantMilpInstance::Variant> kept;
    for (size_t v = 0; v < svc.variants.size(); ++v)
      if (keep[v]) kept.push_back(svc.variants[v]);
    svc.variants = std::move(kept);
  }
  return mi;
}

// --plans: the MILP's replicas per slot, and each policy's figures per service.
void PrintPlans(const VariantMilpInstance& mi, const VariantMilpResult& m,
                const std::vector<std::string>& policies, const std::vector<SimResult>& results) {
  for (size_t i = 0; i < mi.services.size() && i < m.replicas.size(); ++i) {
    const auto& svc = mi.services[i];
    for (size_t v = 0; v < svc.variants.size(); ++v)
      for (size_t t = 0; t < mi.gpus.size(); ++t) {
        if (t >= svc.variants[v].rps.size() || svc.variants[v].rps[t] <= 0) continue;
        std::printf("  optimum %s/%s on %s, replicas per slot:", svc.name.c_str(),
                    svc.variants[v].name.c_str(), mi.types[t].c_str());
        for (int n : m.replicas[i][v][t]) std::printf(" %d", n);
        std::printf("\n");
      }
  }
  for (size_t k = 0; k < results.size(); ++k)
    for (const auto& [name, sm] : results[k].metrics.services)
      std::printf("  %-24s %-12s value %8.1f  SLO %6.2f%%  quality %.3f  GPU-h %6.1f\n",
                  policies[k].c_str(), name.c_str(), sm.value, 100 * sm.slo_attainment(),
                  sm.mean_quality(), sm.gpu_ms / 3.6e6);
}

int Main(int argc, char** argv) {
  std::string cluster_path = "examples/variants/cluster.yaml";
  std::string workload_path = "examples/variants/workloads.yaml";
  std::string only;
  int seeds = 6;
  bool plans = false;
  std::string decisions_path;
  TimeMs horizon = kDay;
  VariantMilpOptions mo;
  mo.max_seconds = 120;
  mo.relative_gap = 1e-3;
  for (int i = 1; i < argc; ++i) {
    const bool has = i + 1 < argc;
    if (!std::strcmp(argv[i], "--cluster") && has) {
      cluster_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--workload") && has) {
      workload_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--only") && has) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--seeds") && has) {
      seeds = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--plans")) {
      plans = true;
    } else if (!std::strcmp(argv[i], "--decisions") && has) {
      decisions_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--gap") && has) {
      mo.relative_gap = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--max-seconds") && has) {
      mo.max_seconds = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--horizon") && has) {
      auto d = ParseDurationMs(argv[++i]);
      if (!d || *d <= 0) {
        std::fprintf(stderr, "variant_milp_bench: --horizon: expected a duration such as 24h\n");
        return 2;
      }
      horizon = *d;
    } else {
      std::fprintf(stderr,
                   "usage: variant_milp_bench [--cluster FILE] [--workload FILE] [--seeds N] "
                   "[--max-seconds S] [--gap G] [--horizon DURATION] [--only NAME] [--plans] "
                   "[--decisions FILE]\n");
      return 2;
    }
  }
  auto base = LoadSimInput(cluster_path, {workload_path});
  if (!base.ok()) {
    std::fprintf(stderr, "variant_milp_bench: %s\n", base.status().message().c_str());
    return 1;
  }
  // "three": three services as shipped otherwise, the largest instance the bench builds.
  std::vector<Variation> variations = {{"shipped", 1, -1, -1, -1, 0, 0},
                                       {"three", 1, -1, -1, -1, 0.6, 0.4}};
  Rng rng(2022);
  for (int k = 1; k <= seeds; ++k) {
    Variation v;
    v.name = "seed-" + std::to_string(k);
    v.demand_scale = 0.5 + rng.Uniform();
    v.h100_nodes = 1 + static_cast<int>(rng.Below(3));
    v.l40s_nodes = 1 + static_cast<int>(rng.Below(2));
    v.floor = rng.Uniform() < 0.5 ? 0.85 : 0.6;
    v.second_service = rng.Uniform() < 0.5 ? 0.3 + 0.7 * rng.Uniform() : 0;
    variations.push_back(v);
  }
  const std::vector<std::string> policies = {"airtime", "fixed-generalist",
                                             "cheapest-meeting-quality", "static-split"};
  std::printf(
      "%-8s %-18s %5s %4s %5s %6s %5s %10s %10s %10s %10s %10s %10s %7s %7s %17s %17s %8s %9s "
      "%9s %10s %8s\n",
      "instance", "demand/H100/L40S/f", "size", "GPUs", "jobs", "svc2", "svc3", "airtime",
      "generalist", "cheapest", "static", "optimum", "bound", "air/opt", "best/opt", "air rt+jobs",
      "opt rt+jobs", "solve_s", "opt_gen", "opt-gen", "air@mean", "/opt");
  for (const Variation& v : variations) {
    if (!only.empty() && v.name != only) continue;
    auto input = Vary(*base, v);
    if (!input.ok()) {
      std::fprintf(stderr, "variant_milp_bench: %s: %s\n", v.name.c_str(),
                   input.status().message().c_str());
      return 1;
    }
    SimOptions so;
    so.seed = 1;
    so.horizon = horizon;
    so.threads = 2;
    auto results = SimulatePolicies(*input, policies, so);
    if (!results.ok()) {
      std::fprintf(stderr, "variant_milp_bench: %s: %s\n", v.name.c_str(),
                   results.status().message().c_str());
      return 1;
    }
    // airtime again on the MILP's own demand, each hour's mean: the gap to the optimum that
    // is left once the optimum's first relaxation is taken away (a policy must cover the
    // peaks within each hour; the MILP serves the mean).
    SimInput hourly = *input;
    for (WorkloadSpec& w : hourly.workloads) {
      if (!w.is_service()) continue;
      w.realtime.demand = SlotMeans(w.realtime.demand, horizon, kHour);
      for (RequestClass& c : w.realtime.classes) c.demand = SlotMeans(c.demand, horizon, kHour);
    }
    auto air_mean = Simulate(hourly, "airtime", so);
    if (!air_mean.ok()) {
      std::fprintf(stderr, "variant_milp_bench: %s: %s\n", v.name.c_str(),
                   air_mean.status().message().c_str());
      return 1;
    }
    const VariantMilpInstance mi = VariantMilpInstanceOf(*input, horizon, kHour);
    const VariantMilpResult m = SolveVariantMilp(mi, mo);
    const VariantMilpResult gen = SolveVariantMilp(GeneralistOnly(mi), mo);
    size_t variants = 0;
    for (const auto& s : mi.services) variants = std::max(variants, s.variants.size());
    double gpus = 0;
    for (double g : mi.gpus) gpus += g;
    const SimResult& air = (*results)[0];
    double air_rt = 0;
    for (const auto& [name, sm] : air.metrics.services) air_rt += sm.value;
    double best = 0;
    for (const SimResult& r : *results) best = std::max(best, r.metrics.value);
    const std::string size = std::to_string(mi.services.size()) + "x" + std::to_string(variants) +
                             "x" + std::to_string(mi.gpus.size()) + "x" + std::to_string(mi.slots);
    int h100 = 0, l40s = 0;  // nodes of each, as varied or shipped
    for (const Node& n : input->cluster.nodes()) {
      const std::string& type = input->cluster.catalog().type(n.gpu_type).name;
      h100 += type == "H100";
      l40s += type == "L40S";
    }
    char knobs[64];
    std::snprintf(knobs, sizeof knobs, "%.2f/%d/%d/%.2f", v.demand_scale, h100, l40s,
                  v.floor < 0 ? mi.services[0].quality_floor : v.floor);
    char air_split[40], opt_split[40];
    std::snprintf(air_split, sizeof air_split, "%.1f+%.1f", air_rt, air.metrics.value - air_rt);
    std::snprintf(opt_split, sizeof opt_split, "%.1f+%.1f", m.realtime_value, m.job_value);
    std::printf(
        "%-8s %-18s %5s %4.0f %5zu %6.2f %5.2f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %6.1f%% "
        "%6.1f%% %17s %17s %8.2f%s %9.1f %9.1f%s %10.1f %7.1f%%\n",
        v.name.c_str(), knobs, size.c_str(), gpus, mi.jobs.size(), v.second_service,
        v.third_service, (*results)[0].metrics.value, (*results)[1].metrics.value,
        (*results)[2].metrics.value, (*results)[3].metrics.value, m.value, m.bound,
        m.value > 0 ? 100 * air.metrics.value / m.value : 0.0,
        m.value > 0 ? 100 * best / m.value : 0.0, air_split, opt_split, m.solve_seconds,
        m.status == "optimal" ? "" : ("  (" + m.status + ")").c_str(), gen.value,
        m.value - gen.value, gen.status == "optimal" ? "" : ("  (" + gen.status + ")").c_str(),
        air_mean->metrics.value, m.value > 0 ? 100 * air_mean->metrics.value / m.value : 0.0);
    if (plans) PrintPlans(mi, m, policies, *results);
    if (!decisions_path.empty()) {
      std::ofstream log(decisions_path, std::ios::app);
      SimOptions logged = so;
      logged.decision_log = &log;
      logged.threads = 1;
      if (auto r = Simulate(*input, "airtime", logged); !r.ok() || !log) {
        std::fprintf(stderr, "variant_milp_bench: --decisions %s: %s\n", decisions_path.c_str(),
                     r.ok() ? "cannot write" : r.status().message().c_str());
        return 1;
      }
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace airtime

int main(int argc, char** argv) { return airtime::Main(argc, argv); }
