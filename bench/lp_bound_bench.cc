// lp_bound_bench: the LP bound (src/airtime/sim/lp_bound.h) of every replay of the scenario
// suite, with its size and solve time, beside the value ceiling it tightens.
//
//   lp_bound_bench [--suite examples/suite/suite.yaml] [--slot DURATION] [--only NAME]
//                  [--slo SHARE]
//
// One line per replay scenario: GPUs, workloads, horizon, slot length and count, the LP's
// rows, columns and non-zeros, the wall and CPU time to build and solve it, the bound and the
// reachable value ceiling per installed GPU-hour, and how many jobs the LP can complete; then
// the bound at the SLO target `--slo` (default 0.999, as `airtime sim --bound-slo`; 0: none)
// and the wall time of both solves together (the bound is built and solved again for it).
// Run from the repository root (the suite's paths are relative to the suite file). Wall
// times are of this machine, which is shared: expect noise.
#include <cstdio>
#include <cstdlib>
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
  double slo = 0.999;
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
    } else if (!std::strcmp(argv[i], "--slo") && i + 1 < argc) {
      char* end = nullptr;
      slo = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(slo >= 0 && slo <= 1)) {
        std::fprintf(stderr, "lp_bound_bench: --slo: expected a share in [0, 1] such as 0.999\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: lp_bound_bench [--suite FILE] [--slot DURATION] [--only NAME] "
                   "[--slo SHARE]\n");
      return 2;
    }
  }
  auto suite = LoadSuite(suite_path);
  if (!suite.ok()) {
    std::fprintf(stderr, "lp_bound_bench: %s\n", suite.status().message().c_str());
    return 1;
  }
  std::printf("%-20s %5s %6s %7s %6s %5s %8s %8s %9s %8s %6s %9s %9s %9s %9s %8s\n", "scenario",
              "GPUs", "work", "horizon", "slot", "slots", "rows", "columns", "nonzeros", "solve_s",
              "cpu_s", "bound", "ceiling", "jobs_lp", "at_slo", "both_s");
  double total_s = 0, total_cpu_s = 0, total_both_s = 0;
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
    char at_slo[32] = "-", both_s[32] = "-";
    if (slo > 0) {
      LpBoundOptions with_slo = options;
      with_slo.slo = slo;
      const LpBound bs = ComputeLpBound(*input, horizon, with_slo);
      total_both_s += bs.solve_seconds;
      std::snprintf(both_s, sizeof both_s, "%.2f", bs.solve_seconds);
      if (bs.slo_ok()) {
        std::snprintf(at_slo, sizeof at_slo, "%.4f", bs.slo_per_gpu_hour());
      } else if (!bs.slo_status.empty()) {
        std::snprintf(at_slo, sizeof at_slo, "%s", bs.slo_status.c_str());
      }
    }
    std::printf(
        "%-20s %5zu %6zu %7s %6s %5d %8d %8d %9lld %8.2f %6.2f %9.4f %9.4f %9s %9s %8s%s%s\n",
        s.name.c_str(), input->cluster.gpu_count(), input->workloads.size(),
        FormatDuration(horizon).c_str(), FormatDuration(b.slot).c_str(), b.slots, b.rows, b.columns,
        static_cast<long long>(b.nonzeros), b.solve_seconds, cpu_s, b.per_gpu_hour(),
        c.reachable_per_gpu_hour(), jobs, at_slo, both_s, b.ok() ? "" : "  ",
        b.ok() ? "" : b.status.c_str());
  }
  if (slo > 0) std::printf("at the SLO target %g: both solves %.2f s wall\n", slo, total_both_s);
  std::printf("total: %.2f s wall, %.2f s CPU\n", total_s, total_cpu_s);
  return 0;
}
