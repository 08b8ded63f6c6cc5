// lp_bound_bench: the LP bound (src/airtime/sim/lp_bound.h) of every replay of the scenario
// suite, with its size and solve time, beside the value ceiling it tightens.
//
//   lp_bound_bench [--suite examples/suite/suite.yaml] [--slot DURATION] [--only NAME]
//
// One line per replay scenario: GPUs, workloads, horizon, slot length and count, the LP's
// rows, columns and non-zeros, the wall and CPU time to build and solve it, the bound and the
// reachable value ceiling per installed GPU-hour, and how many jobs the LP can complete.
// Run from the repository root (the suite's paths are relative to the suite file). Wall
// times are of this machine, which is shared: expect noise.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "airtime/base/strings.h"
#include "airtime/sim/lp_bound.h"
#include "airtime/sim/suite_file.h"
#include "airtime/sim/value_ceiling.h"

int main(int argc, char** argv) {
  using namespace airtime;
  std::string suite_path = "examples/suite/suite.yaml";
  std::string only;
  LpBoundOptions options;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--suite") && i + 1 < argc) {
      suite_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--slot") && i + 1 < argc) {
      auto d = ParseDurationMs(argv[++i]);
      if (!d || *d <= 0) {
        std::fprintf(stderr, "lp_bound_bench: --slot: expected a duration such as 15m\n");
        return 2;
      }
      options.slot = *d;
    } else {
      std::fprintf(stderr,
                   "usage: lp_bound_bench [--suite FILE] [--slot DURATION] [--only NAME]\n");
      return 2;
    }
  }
  auto suite = LoadSuite(suite_path);
  if (!suite.ok()) {
    std::fprintf(stderr, "lp_bound_bench: %s\n", suite.status().message().c_str());
    return 1;
  }
  std::printf("%-20s %5s %6s %7s %6s %5s %8s %8s %9s %8s %6s %9s %9s %9s\n", "scenario", "GPUs",
              "work", "horizon", "slot", "slots", "rows", "columns", "nonzeros", "solve_s", "cpu_s",
              "bound", "ceiling", "jobs_lp");
  double total_s = 0, total_cpu_s = 0;
  for (const SuiteScenario& s : *suite) {
    if (!s.protocol.empty() || (!only.empty() && s.name != only)) continue;
    auto input = LoadSimInput(s.cluster, s.workloads);
    if (!input.ok()) {
      std::fprintf(stderr, "lp_bound_bench: %s: %s\n", s.name.c_str(),
                   input.status().message().c_str());
      return 1;
    }
    const auto h = ParseDurationMs(s.horizon.empty() ? "24h" : s.horizon);
    const TimeMs horizon = h ? *h : kDay;
    const std::clock_t c0 = std::clock();
    const LpBound b = ComputeLpBound(*input, horizon, options);
    const double cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    total_cpu_s += cpu_s;
    const ValueCeiling c = ComputeValueCeiling(*input, horizon);
    total_s += b.solve_seconds;
    char jobs[32];
    std::snprintf(jobs, sizeof jobs, "%d/%d", b.jobs_in_lp, b.jobs);
    std::printf("%-20s %5zu %6zu %7s %6s %5d %8d %8d %9lld %8.2f %6.2f %9.3f %9.3f %9s%s%s\n",
                s.name.c_str(), input->cluster.gpu_count(), input->workloads.size(),
                FormatDuration(horizon).c_str(), FormatDuration(b.slot).c_str(), b.slots, b.rows,
                b.columns, static_cast<long long>(b.nonzeros), b.solve_seconds, cpu_s,
                b.per_gpu_hour(), c.reachable_per_gpu_hour(), jobs, b.ok() ? "" : "  ",
                b.ok() ? "" : b.status.c_str());
  }
  std::printf("total: %.2f s wall, %.2f s CPU\n", total_s, total_cpu_s);
  return 0;
}
