// `airtime sim --protocol fgd`: the FGD placement experiment through the engine.
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/progress.h"
#include "airtime/base/utf8.h"
#include "airtime/cli/sim_args.h"
#include "airtime/fgd/fgd_expected.h"
#include "airtime/fgd/fgd_protocol.h"
#include "airtime/report/fgd_curves_report.h"

namespace airtime {
namespace {

nlohmann::json CurveJson(const FgdCurve& c) {
  nlohmann::json a = nlohmann::json::array();
  for (int b = 0; b < kFgdBins; ++b) {
    const double v = c.at(b);
    a.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
  }
  return a;
}

}  // namespace

void AddFgdSectionsBeside(HtmlPage& page, const FgdReport& report, const std::string& pods_csv) {
  const std::string path = FgdPublishedPathFor(pods_csv);
  auto published = ReadFgdPublished(path);
  AddFgdSections(page, report, published.ok() ? &*published : nullptr,
                 FgdPublishedWorkload(pods_csv),
                 published.ok() ? path + " has no curve of this pod list and these policies"
                                : published.status().message());
}

int RunProtocol(const SimArgs& a, const std::vector<std::string>& policies) {
  const std::string& protocol = a.protocol;
  const int seeds = a.seeds;
  if (protocol != "fgd") {
    std::cerr << "airtime sim: unknown protocol '" << protocol << "' (known: fgd)\n";
    return 2;
  }
  if (a.nodes.empty() || a.pods.empty()) {
    std::cerr << "airtime sim --protocol fgd: --nodes and --pods are required\n";
    return 2;
  }
  if (seeds < 1) {
    std::cerr << "airtime sim --protocol fgd: --seeds must be at least 1\n";
    return 2;
  }
  FgdOptions o;
  o.nodes_csv = a.nodes;
  o.pods_csv = a.pods;
  o.policies = policies;
  o.seeds = seeds;
  o.first_seed = a.first_seed;
  o.threads = a.Threads();
  std::ofstream html;
  if (!a.html.empty() && !OpenHtmlReport(a.html, "airtime sim --protocol fgd", &html)) return 1;
  std::optional<Progress> progress;
  if (!a.quiet) {
    progress.emplace(Progress::ForStderr("airtime sim --protocol fgd",
                                         policies.size() * static_cast<size_t>(seeds)));
    o.on_run_done = [&] { progress->Step(); };
  }
  auto report = RunFgdProtocol(o);
  progress.reset();
  if (!report.ok()) {
    std::cerr << "airtime sim: " << PrintableText(report.status().message()) << "\n";
    return 1;
  }
  if (!a.quiet) {
    std::printf("FGD protocol: %zu pods, %lld milli-GPU capacity, seeds %d from %llu\n",
                report->original_pods, static_cast<long long>(report->capacity_milli), seeds,
                static_cast<unsigned long long>(o.first_seed));
    std::printf("%-22s %10s %10s %10s %10s %10s\n", "policy", "@50%", "@80%", "@100%", "@130%",
                "failed");
    // A bin the arrivals never reached has no figure (NaN): "-", and a note says why.
    bool unreached = false;
    auto cell = [&](double v) {
      if (std::isnan(v)) {
        unreached = true;
        return std::string("-");
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", v);
      return std::string(buf);
    };
    for (const auto& p : report->policies) {
      std::printf("%-22s %10s %10s %10s %10s %10lld\n", p.policy.c_str(),
                  cell(p.mean.at(50)).c_str(), cell(p.mean.at(80)).c_str(),
                  cell(p.mean.at(100)).c_str(), cell(p.mean.at(130)).c_str(),
                  static_cast<long long>(p.pods_failed));
    }
    if (unreached)
      std::printf("-: the pods that arrived never asked for that share of the GPU capacity\n");
  }
  if (!a.json.empty()) {
    nlohmann::json out = {{"protocol", "fgd"},
                          {"nodes", report->nodes_csv},
                          {"pods", report->pods_csv},
                          {"capacity_milli_gpu", report->capacity_milli},
                          {"seeds", seeds},
                          {"first_seed", o.first_seed},
                          {"policies", nlohmann::json::array()}};
    for (const auto& p : report->policies) {
      nlohmann::json per_seed = nlohmann::json::array();
      for (const auto& s : p.seeds)
        per_seed.push_back({{"seed", s.seed},
                            {"pods_arrived", s.pods_arrived},
                            {"pods_failed", s.pods_failed},
                            {"allocation_ratio", CurveJson(s.curve)}});
      out["policies"].push_back({{"policy", p.policy},
                                 {"allocation_ratio", CurveJson(p.mean)},
                                 {"pods_arrived", p.pods_arrived},
                                 {"pods_failed", p.pods_failed},
                                 {"wall_seconds", p.wall_seconds},
                                 {"per_seed", per_seed}});
    }
    std::ofstream f(a.json);
    f << out.dump(2) << "\n";
    if (!f) {
      std::cerr << "airtime sim: cannot write " << a.json << "\n";
      return 1;
    }
  }
  if (!a.html.empty()) {
    HtmlPage page("airtime sim --protocol fgd: " + FgdPublishedWorkload(a.pods));
    page.Paragraph("Nodes " + a.nodes + ", pods " + a.pods + "; seeds " + std::to_string(seeds) +
                   " from " + std::to_string(o.first_seed) + ".");
    AddFgdSectionsBeside(page, *report, a.pods);
    if (!WriteHtmlReport(page, a.html, "airtime sim --protocol fgd", a.quiet, &html)) return 1;
  }
  return 0;
}

}  // namespace airtime
