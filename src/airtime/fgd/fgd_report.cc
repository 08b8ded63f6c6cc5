// fgd_report: runs the FGD placement experiment on the openb pod lists and prints the
// measured 10-seed means at 100% and 130% arrived demand next to the published ones.
//
//   fgd_report [--traces DIR] [--lists default,gpushare40,...] [--policies bestfit,fgd,...]
//              [--seeds N] [--first-seed S] [--per-seed] [--csv FILE]
//
// DIR defaults to the shared traces' alibaba-gpu-2023 folder. --csv writes every mean curve
// (list, policy, bins 0..130).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "airtime/base/strings.h"
#include "airtime/fgd/fgd_expected.h"
#include "airtime/fgd/fgd_protocol.h"

namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  for (auto part : airtime::Split(s, ',')) out.emplace_back(airtime::Trim(part));
  return out;
}

int Usage() {
  std::fprintf(stderr,
               "usage: fgd_report [--traces DIR] [--lists a,b] [--policies p,q] [--seeds N] "
               "[--first-seed S] [--per-seed] [--csv FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = AIRTIME_SHARED_DIR "/traces/alibaba-gpu-2023";
  std::vector<std::string> lists = {"default", "gpushare40", "multigpu50", "gpuspec33"};
  std::vector<std::string> policies = {"bestfit", "fgd", "random"};
  int seeds = 10;
  uint64_t first_seed = 42;
  bool per_seed = false;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--traces") {
      dir = value();
    } else if (a == "--lists") {
      lists = SplitList(value());
    } else if (a == "--policies") {
      policies = SplitList(value());
    } else if (a == "--seeds") {
      seeds = std::atoi(value().c_str());
    } else if (a == "--first-seed") {
      first_seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--per-seed") {
      per_seed = true;
    } else if (a == "--csv") {
      csv = value();
    } else {
      return Usage();
    }
  }
  auto published = airtime::ReadFgdPublished(dir + "/fgd_expected_allocation.csv");
  if (!published.ok())
    std::fprintf(stderr, "note: no published figures: %s\n", published.status().ToString().c_str());
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "workload,policy";
    for (int b = 0; b < airtime::kFgdBins; ++b) out << ',' << b;
    out << '\n';
  }
  std::printf("%-11s %-20s %8s %8s %7s %8s %8s %7s %9s %7s\n", "pod list", "policy", "@100",
              "pub@100", "diff", "@130", "pub@130", "diff", "failed/s", "wall s");
  for (const std::string& list : lists) {
    airtime::FgdOptions o;
    o.nodes_csv = dir + "/openb_node_list_gpu_node.csv";
    o.pods_csv = dir + "/openb_pod_list_" + list + ".csv";
    o.policies = policies;
    o.seeds = seeds;
    o.first_seed = first_seed;
    auto report = airtime::RunFgdProtocol(o);
    if (!report.ok()) {
      std::fprintf(stderr, "%s: %s\n", list.c_str(), report.status().ToString().c_str());
      return 1;
    }
    const std::string workload = "openb_pod_list_" + list;
    for (const auto& pr : report->policies) {
      const std::string pub = airtime::FgdPublishedPolicy(pr.policy);
      double p100 = NAN, p130 = NAN;
      if (published.ok() && !pub.empty()) {
        p100 = airtime::FgdPublishedMean(*published, workload, pub, 100);
        p130 = airtime::FgdPublishedMean(*published, workload, pub, 130);
      }
      const double m100 = pr.mean.at(100), m130 = pr.mean.at(130);
      std::printf("%-11s %-20s %8.2f %8.2f %+7.2f %8.2f %8.2f %+7.2f %9.0f %7.2f\n", list.c_str(),
                  pr.policy.c_str(), m100, p100, m100 - p100, m130, p130, m130 - p130,
                  static_cast<double>(pr.pods_failed) / static_cast<double>(pr.seeds.size()),
                  pr.wall_seconds);
      if (per_seed) {
        for (const auto& r : pr.seeds) {
          double s100 = NAN, s130 = NAN;
          if (published.ok()) {
            for (const auto& c : *published) {
              if (c.workload == workload && c.policy == pub && c.seed == r.seed) {
                s100 = c.used[100];
                s130 = c.used[130];
              }
            }
          }
          std::printf(
              "    seed %-4llu %8.2f %8.2f %+7.2f %8.2f %8.2f %+7.2f  arrived %lld failed %lld\n",
              static_cast<unsigned long long>(r.seed), r.curve.at(100), s100,
              r.curve.at(100) - s100, r.curve.at(130), s130, r.curve.at(130) - s130,
              static_cast<long long>(r.pods_arrived), static_cast<long long>(r.pods_failed));
        }
      }
      if (out.is_open()) {
        out << workload << ',' << pr.policy;
        for (int b = 0; b < airtime::kFgdBins; ++b) out << ',' << pr.mean.at(b);
        out << '\n';
      }
    }
    std::fflush(stdout);
  }
  return 0;
}
