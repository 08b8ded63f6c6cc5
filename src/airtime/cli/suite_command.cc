// `airtime sim --suite`: every scenario of a suite file under every policy.
//
// The suite file (examples/suite/suite.yaml) lists scenarios, each either a replay
//   - {name, cluster, workloads: [...], horizon}
// or a placement protocol
//   - {name, protocol: fgd, nodes, pods}
// with paths relative to the suite file. A protocol scenario whose files are missing (the
// shared traces are not there) is skipped with a note.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "airtime/base/progress.h"
#include "airtime/base/strings.h"
#include "airtime/base/utf8.h"
#include "airtime/cli/sim_args.h"
#include "airtime/fgd/fgd_protocol.h"
#include "airtime/report/replay_report.h"
#include "airtime/sim/report.h"
#include "airtime/sim/simulator.h"
#include "airtime/sim/suite_file.h"
#include "airtime/sim/value_ceiling.h"

namespace airtime {
namespace {

// The gap to the targets, in the suite's own output: each airtime variant's return per
// installed GPU-hour as a multiple of fifo's and of the best other policy's, and the LP bound
// and the reachable value ceiling as multiples of fifo's ("" without fifo or airtime).
std::string ReturnRatios(const std::vector<SimResult>& results, double ceiling, double bound) {
  const SimResult* fifo = nullptr;
  for (const SimResult& r : results)
    if (r.policy == "fifo") fifo = &r;
  if (fifo == nullptr || fifo->return_per_gpu_hour() <= 0) return "";
  const double base = fifo->return_per_gpu_hour();
  const SimResult* peer = nullptr;  // the best policy that is not airtime's
  for (const SimResult& r : results)
    if (r.policy.rfind("airtime", 0) != 0 &&
        (peer == nullptr || r.return_per_gpu_hour() > peer->return_per_gpu_hour()))
      peer = &r;
  std::string out;
  char line[320];
  for (const SimResult& r : results) {
    if (r.policy.rfind("airtime", 0) != 0) continue;
    std::snprintf(line, sizeof line, "return of %s: %.3fx fifo, %.3fx the best other policy (%s)\n",
                  r.policy.c_str(), r.return_per_gpu_hour() / base,
                  r.return_per_gpu_hour() / std::max(1e-12, peer->return_per_gpu_hour()),
                  peer->policy.c_str());
    out += line;
  }
  if (bound > 0 && !out.empty()) {
    std::snprintf(line, sizeof line, "bound: %.3fx fifo\n", bound / base);
    out += line;
  }
  if (ceiling > 0 && !out.empty()) {
    std::snprintf(line, sizeof line, "reachable ceiling: %.3fx fifo\n", ceiling / base);
    out += line;
  }
  return out;
}

std::string Format3(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * v);
  return b;
}

}  // namespace

int RunSuite(const SimArgs& a) {
  auto suite = LoadSuite(a.suite_file);
  if (!suite.ok()) {
    std::cerr << "airtime sim --suite: " << PrintableText(suite.status().message()) << "\n";
    return 1;
  }
  // Input given on the command line runs through the same policies.
  if (!a.cluster.empty())
    suite->push_back(
        {"command-line", a.cluster, a.workloads, a.horizon, "", "", "", "command line"});
  if (!a.pods.empty())
    suite->push_back({"command-line-fgd", "", {}, "", "fgd", a.nodes, a.pods, "command line"});
  std::optional<InterferenceModel> loaded;
  const InterferenceModel* interference = nullptr;
  if (Status st = ResolveInterference(a.interference, &loaded, &interference); !st.ok()) {
    std::cerr << "airtime sim --suite: --interference: " << PrintableText(st.message()) << "\n";
    return 2;
  }
  LpBoundOptions bound_options;
  if (!BoundOptions(a, "airtime sim --suite", &bound_options)) return 2;
  const auto listed = PolicyList(a.policies, "airtime sim --suite");
  if (!listed) return 2;
  const std::vector<std::string>& policies = *listed;
  std::ofstream html_out;
  if (!a.html.empty() && !OpenHtmlReport(a.html, "airtime sim --suite", &html_out)) return 1;
  HtmlPage html("airtime sim --suite: " + a.suite_file);
  std::vector<std::vector<std::string>> html_summary;
  // Progress in runs: a replay per policy, a run per policy and seed of a protocol.
  size_t runs = 0;
  for (const SuiteScenario& s : *suite) {
    if (s.protocol.empty()) {
      runs += policies.size();
    } else if (std::filesystem::exists(s.nodes) && std::filesystem::exists(s.pods)) {
      runs += policies.size() * static_cast<size_t>(std::max(a.seeds, 0));
    }
  }
  Progress progress = Progress::ForStderr("airtime sim --suite", runs);
  // What a scenario prints goes between two drawings of the progress line.
  auto print = [&](const std::string& text) {
    progress.Clear();
    std::cout << text << std::flush;
    progress.Redraw();
  };
  nlohmann::json entries = nlohmann::json::array();
  std::string summary;
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %-24s %10s %8s %9s %9s %9s %9s %9s %9s\n", "scenario",
                "policy", "return/GPUh", "of bound", "alloc", "SLO", "deadlines", "useful",
                "stranded", "lost");
  summary += line;
  for (const SuiteScenario& s : *suite) {
    if (!s.protocol.empty()) {
      if (!std::filesystem::exists(s.nodes) || !std::filesystem::exists(s.pods)) {
        print("\n== " + s.name + ": skipped (" + s.pods + " not found)\n");
        html.Heading(2, s.name);
        html.Paragraph("Skipped: " + s.pods + " not found.");
        continue;
      }
      FgdOptions o;
      o.nodes_csv = s.nodes;
      o.pods_csv = s.pods;
      o.policies = policies;
      o.seeds = a.seeds;
      o.first_seed = a.first_seed;
      o.threads = a.Threads();
      o.on_run_done = [&] { progress.Step(); };
      auto r = RunFgdProtocol(o);
      if (!r.ok()) {
        progress.Clear();
        std::cerr << "airtime sim --suite: " << PrintableText(s.name) << ": "
                  << PrintableText(r.status().message()) << "\n";
        return 1;
      }
      std::string text = "\n== " + s.name + " (FGD placement protocol, " + std::to_string(a.seeds) +
                         " seeds): GPU allocation % at arrived demand 100% / 130%\n";
      html.Heading(2, s.name + " (FGD placement protocol)");
      AddFgdSectionsBeside(html, *r, s.pods);
      for (const auto& p : r->policies) {
        char row[160];
        std::snprintf(row, sizeof row, "  %-24s %8.2f %8.2f\n", p.policy.c_str(), p.mean.at(100),
                      p.mean.at(130));
        text += row;
        auto num = [](double v) {
          return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
        };
        entries.push_back({{"scenario", s.name},
                           {"policy", p.policy},
                           {"protocol", "fgd"},
                           {"allocation_at_100", num(p.mean.at(100))},
                           {"allocation_at_130", num(p.mean.at(130))},
                           {"pods_failed", p.pods_failed}});
      }
      print(text);
      continue;
    }
    auto input = LoadSimInput(s.cluster, s.workloads, LoadOptions{a.skip_bad_rows, interference});
    if (!input.ok()) {
      progress.Clear();
      std::cerr << "airtime sim --suite: " << PrintableText(s.name) << ": "
                << PrintableText(input.status().message()) << "\n";
      return 1;
    }
    SimOptions opt;
    opt.seed = a.seed;
    opt.threads = a.Threads();
    opt.interference = interference;
    const std::string h = !s.horizon.empty() ? s.horizon : a.horizon;
    if (!h.empty()) {
      auto d = ParseDurationMs(h);
      if (!d || *d <= 0) {
        progress.Clear();
        std::cerr << "airtime sim --suite: " << s.source << ": horizon: expected a duration, got '"
                  << h << "'\n";
        return 1;
      }
      opt.horizon = *d;
    }
    opt.on_replay_done = [&] { progress.Step(); };
    auto results = SimulatePolicies(*input, policies, opt);
    if (!results.ok()) {
      progress.Clear();
      std::cerr << "airtime sim --suite: " << PrintableText(s.name) << ": "
                << PrintableText(results.status().message()) << "\n";
      return 2;
    }
    // The LP bound over the replays' common span (the horizon, or the end they reached).
    std::optional<LpBound> bound;
    if (!a.no_bound && !results->empty())
      bound = ComputeLpBound(*input, results->front().end, bound_options);
    const double bound_per_gpu_hour = bound && bound->ok() ? bound->per_gpu_hour() : 0;
    std::string text = "\n== " + s.name + ": " + std::to_string(input->cluster.gpu_count()) +
                       " GPUs, " + std::to_string(input->workloads.size()) + " workloads\n" +
                       ResultsTable(*results, bound_per_gpu_hour);
    if (bound) text += BoundLine(*bound);
    html.Heading(2, s.name);
    html.Paragraph("Cluster " + input->cluster.name() + ": " +
                   std::to_string(input->cluster.gpu_count()) + " GPUs; " +
                   std::to_string(input->workloads.size()) + " workloads; replayed to " +
                   FormatDuration(results->empty() ? 0 : results->front().end) + ".");
    if (bound) html.Paragraph(BoundLine(*bound));
    double ceiling_per_gpu_hour = 0;
    nlohmann::json ceiling_json;
    if (opt.horizon != kNever) {
      const ValueCeiling ceiling = ComputeValueCeiling(*input, opt.horizon);
      ceiling_per_gpu_hour = ceiling.reachable_per_gpu_hour();
      ceiling_json = {{"return_per_gpu_hour", ceiling.reachable_per_gpu_hour()},
                      {"offered_per_gpu_hour", ceiling.offered_per_gpu_hour()},
                      {"slo_attainment", ceiling.reachable_slo_attainment()},
                      {"missed_at_start", ceiling.missed_at_start}};
      char line[320];
      std::snprintf(line, sizeof line,
                    "value ceiling per installed GPU-h (looser: ignores capacity): %.3f "
                    "reachable (requests up to max_replicas; the %d of %d jobs that could finish "
                    "in time), %.3f offered\n",
                    ceiling.reachable_per_gpu_hour(), ceiling.reachable_jobs, ceiling.jobs,
                    ceiling.offered_per_gpu_hour());
      text += line;
      if (ceiling.requests > 0) {
        std::snprintf(
            line, sizeof line,
            "realtime SLO attainment reachable: %.3f%% (%.0f of %.0f requests arrive "
            "while a service's first replica loads, %.0f more above its "
            "max_replicas)\n",
            100 * ceiling.reachable_slo_attainment(), ceiling.missed_at_start, ceiling.requests,
            std::max(0.0, ceiling.requests - ceiling.reachable_requests - ceiling.missed_at_start));
        text += line;
      }
    }
    text += ReturnRatios(*results, ceiling_per_gpu_hour, bound_per_gpu_hour);
    print(text);
    AddReplaySections(html, *results, bound_per_gpu_hour);
    for (const SimResult& r : *results) {
      nlohmann::json j = ResultToJson(r);
      j["scenario"] = s.name;
      if (!ceiling_json.is_null()) j["ceiling"] = ceiling_json;
      if (bound) {
        j["bound"] = LpBoundToJson(*bound);
        j["return_of_bound"] = ReturnOfBound(r, *bound);
      }
      entries.push_back(std::move(j));
      const double inst = r.ledger.installed_gpu_hours();
      auto share = [&](Bucket b) { return inst > 0 ? r.ledger.gpu_hours(b) / inst : 0.0; };
      char row[256];
      const std::string of_bound = bound_per_gpu_hour > 0
                                       ? PercentOfBound(r.return_per_gpu_hour(), bound_per_gpu_hour)
                                       : "-";
      std::snprintf(row, sizeof row, "%-18s %-24s %10.3f %8s %9s %9s %9s %9s %9s %9s\n",
                    s.name.c_str(), r.policy.c_str(), r.return_per_gpu_hour(), of_bound.c_str(),
                    Pct(r.allocation_rate()).c_str(), Pct(r.metrics.slo_attainment).c_str(),
                    Pct(r.metrics.deadline_hit_rate).c_str(), Pct(share(Bucket::kUseful)).c_str(),
                    Pct(share(Bucket::kStranded)).c_str(), Pct(share(Bucket::kLost)).c_str());
      summary += row;
      html_summary.push_back({s.name, r.policy, Format3(r.return_per_gpu_hour()), of_bound,
                              Pct(r.allocation_rate()), Pct(r.metrics.slo_attainment),
                              Pct(r.metrics.deadline_hit_rate), Pct(share(Bucket::kUseful)),
                              Pct(share(Bucket::kStranded)), Pct(share(Bucket::kLost))});
    }
  }
  progress.Clear();
  std::cout << "\n== summary\n" << summary;
  if (!a.html.empty()) {
    html.Heading(2, "Summary");
    html.Table({"scenario", "policy", "return / installed GPU-h", "of bound", "allocation",
                "realtime SLO", "deadlines met", "useful", "stranded", "lost"},
               html_summary);
    if (!WriteHtmlReport(html, a.html, "airtime sim --suite", false, &html_out)) return 1;
  }
  if (!a.json.empty()) {
    std::ofstream f(a.json);
    f << nlohmann::json{{"suite", a.suite_file},
                        {"seed", a.seed},
                        {"interference", a.interference},
                        {"entries", entries}}
             .dump(2)
      << "\n";
    if (!f) {
      std::cerr << "airtime sim --suite: cannot write " << a.json << "\n";
      return 1;
    }
    std::cout << "\nreport written to " << a.json << "\n";
  }
  return 0;
}

}  // namespace airtime
