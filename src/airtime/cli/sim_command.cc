#include "airtime/cli/sim_command.h"
#include "airtime/cli/sim_args.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "airtime/base/progress.h"
#include "airtime/base/strings.h"
#include "airtime/base/utf8.h"
#include "airtime/cli/from_data_report.h"
#include "airtime/config/cluster_yaml.h"
#include "airtime/policies/registry.h"
#include "airtime/report/replay_report.h"
#include "airtime/sim/from_data.h"
#include "airtime/sim/interference_file.h"
#include "airtime/sim/report.h"
#include "airtime/sim/sim_input.h"
#include "airtime/sim/simulator.h"
#include "airtime/sim/value_ceiling.h"

namespace airtime {

// Splits "fifo,tiresias:thresholds=30m,4h,bestfit" into policy specs: a comma starts a new
// spec only where a known policy name follows, so parameter values may hold commas.
std::vector<std::string> SplitPolicies(const std::string& list) {
  const std::vector<std::string> known = PolicyRegistry::Builtin().names();
  std::vector<std::string> out;
  for (auto p : Split(list, ',')) {
    const std::string t(Trim(p));
    if (t.empty()) continue;
    const std::string name = ToLower(Trim(Split(t, ':')[0]));
    const bool starts_spec = std::find(known.begin(), known.end(), name) != known.end();
    if (!starts_spec && !out.empty() && out.back().find(':') != std::string::npos) {
      out.back() += "," + t;
    } else {
      out.push_back(t);
    }
  }
  return out;
}

std::optional<std::vector<std::string>> PolicyList(const std::string& list, const char* who) {
  std::vector<std::string> policies = SplitPolicies(list);
  if (!policies.empty()) return policies;
  std::cerr << who << ": --policy: expected one or more policies, such as fifo,airtime, got '"
            << list << "'\n";
  return std::nullopt;
}

Status ResolveInterference(const std::string& arg, std::optional<InterferenceModel>* storage,
                           const InterferenceModel** model) {
  if (arg == "gavel") {
    *model = &InterferenceModel::Gavel();
  } else if (arg == "none") {
    *model = nullptr;
  } else {
    auto loaded = LoadInterferenceFile(arg);
    if (!loaded.ok()) {
      if (loaded.status().code() == StatusCode::kNotFound)
        return NotFound("expected gavel, none or a CSV file; " + loaded.status().message());
      return loaded.status();
    }
    storage->emplace(std::move(*loaded));
    *model = &**storage;
  }
  return OkStatus();
}

bool BoundOptions(const SimArgs& a, const char* who, LpBoundOptions* options) {
  if (!(a.bound_slo >= 0 && a.bound_slo <= 1)) {
    std::cerr << who << ": --bound-slo: expected a share of requests in [0, 1] such as 0.999, got "
              << a.bound_slo << "\n";
    return false;
  }
  options->slo = a.bound_slo;
  if (a.bound_slot.empty()) return true;
  auto d = ParseDurationMs(a.bound_slot);
  if (!d || *d <= 0) {
    std::cerr << who << ": --bound-slot: expected a duration such as 15m, got '" << a.bound_slot
              << "'\n";
    return false;
  }
  options->slot = *d;
  return true;
}

namespace {

// Each service's demand curve as the replay sees it (traces imported, days tiled): one row
// per step, the rate holding until the service's next row, with the service's replica
// profile repeated on each row so that the file stands alone:
// service,from_s,rps,capacity_rps,cold_start_s,min_replicas,max_replicas.
bool WriteDemandCsv(const SimInput& input, const std::string& path) {
  std::ofstream out(path);
  out << "service,from_s,rps,capacity_rps,cold_start_s,min_replicas,max_replicas\n";
  for (const WorkloadSpec& w : input.workloads) {
    if (!w.is_service()) continue;
    const RealtimeProfile& rt = w.realtime;
    for (const DemandPoint& d : rt.demand) {
      char row[160];
      std::snprintf(row, sizeof row, ",%.3f,%.6g,%.6g,%.3f,%d,%d\n", ToSeconds(d.at), d.rps,
                    rt.capacity_rps, ToSeconds(rt.cold_start), rt.min_replicas,
                    rt.max_replicas == kUnboundedReplicas ? -1 : rt.max_replicas);
      out << w.name << row;
    }
  }
  return static_cast<bool>(out);
}

// The replay's input from --from-data (the store, with --cluster replacing its cluster).
// Exit code 0, or 1/2 with the message printed.
int LoadFromStore(const SimArgs& a, const InterferenceModel* families,
                  std::optional<FromData>* out) {
  if (!a.workloads.empty()) {
    std::cerr << "airtime sim: --workload does not go with --from-data (the workloads are the "
                 "store's)\n";
    return 2;
  }
  std::optional<ClusterFile> cluster;
  if (!a.cluster.empty()) {
    auto file = LoadClusterFile(a.cluster);
    if (!file.ok()) {
      std::cerr << "airtime sim: --cluster: " << PrintableText(file.status().message()) << "\n";
      return 1;
    }
    cluster.emplace(std::move(*file));
  }
  auto data = LoadFromData(a.from_data, FromDataOptions{a.since, a.until, families},
                           cluster ? &*cluster : nullptr);
  if (!data.ok()) {
    std::cerr << "airtime sim: --from-data: " << PrintableText(data.status().message()) << "\n";
    return data.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  out->emplace(std::move(*data));
  return 0;
}

// The policy the daemon ran, added to `policies` when missing, so that the replay of what it
// did stands beside what it did; its index (-1: none, or unknown to this airtime).
long DaemonPolicyIndex(const std::string& daemon_policy, std::vector<std::string>* policies) {
  if (daemon_policy.empty()) return -1;
  for (size_t i = 0; i < policies->size(); ++i)
    if (ToLower((*policies)[i]) == ToLower(daemon_policy)) return static_cast<long>(i);
  const std::vector<std::string> known = PolicyRegistry::Builtin().names();
  const std::string name = ToLower(Trim(Split(daemon_policy, ':')[0]));
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::cerr << "warning: the daemon's policy is not one this airtime knows; it is not replayed\n";
    return -1;
  }
  policies->push_back(daemon_policy);
  return static_cast<long>(policies->size()) - 1;
}

int RunScenario(const SimArgs& a) {
  if (a.from_data.empty() && (a.cluster.empty() || a.workloads.empty())) {
    std::cerr << "airtime sim: --cluster and --workload are required (or --from-data DIR, or "
                 "--protocol fgd)\n";
    return 2;
  }
  if (a.from_data.empty() && (!a.since.empty() || !a.until.empty())) {
    std::cerr << "airtime sim: --since and --until choose a window of --from-data DIR\n";
    return 2;
  }
  SimOptions opt;
  opt.seed = a.seed;
  opt.threads = a.Threads();
  if (!a.horizon.empty()) {
    auto h = ParseDurationMs(a.horizon);
    if (!h || *h <= 0) {
      std::cerr << "airtime sim: --horizon: expected a duration such as 24h, got '" << a.horizon
                << "'\n";
      return 2;
    }
    opt.horizon = *h;
  }
  LpBoundOptions bound_options;
  if (!BoundOptions(a, "airtime sim", &bound_options)) return 2;
  std::optional<InterferenceModel> loaded;
  if (Status st = ResolveInterference(a.interference, &loaded, &opt.interference); !st.ok()) {
    std::cerr << "airtime sim: --interference: " << PrintableText(st.message()) << "\n";
    return 2;
  }
  std::optional<FromData> from;
  StatusOr<SimInput> input = InvalidArgument("no input");
  if (!a.from_data.empty()) {
    if (int rc = LoadFromStore(a, opt.interference, &from); rc != 0) return rc;
    input = std::move(from->input);
    // The replay covers the window; --horizon may shorten it.
    if (a.horizon.empty()) opt.horizon = from->end - from->origin;
  } else {
    input = LoadSimInput(a.cluster, a.workloads, LoadOptions{a.skip_bad_rows, opt.interference});
  }
  if (!input.ok()) {
    std::cerr << "airtime sim: " << PrintableText(input.status().message()) << "\n";
    return 1;
  }
  for (const std::string& spec : a.add_nodes) {
    if (Status st = AddNodes(spec, &*input); !st.ok()) {
      std::cerr << "airtime sim: " << PrintableText(st.message()) << "\n";
      return 2;
    }
  }
  for (const std::string& spec : a.gpu_costs) {
    if (Status st = OverrideGpuCost(spec, &*input); !st.ok()) {
      std::cerr << "airtime sim: " << PrintableText(st.message()) << "\n";
      return 2;
    }
  }
  if (!a.quiet) {
    // What the files named (clusters, workloads, notes) is shown as a terminal may show it.
    std::cout << "cluster " << PrintableText(input->cluster.name(), /*keep_newlines=*/false) << ": "
              << input->cluster.node_count() << " nodes, " << input->cluster.gpu_count()
              << " GPUs; " << input->workloads.size() << " workloads\n";
    for (const auto& n : input->notes) std::cout << "  " << PrintableText(n) << "\n";
    if (from && !from->policy.empty())
      std::cout << "  the daemon ran policy " << from->policy << "\n";
  }
  if (from)
    for (const auto& w : from->warnings) std::cerr << "warning: " << w << "\n";
  if (!a.demand_csv.empty() && !WriteDemandCsv(*input, a.demand_csv)) {
    std::cerr << "airtime sim: --demand-csv: cannot write " << a.demand_csv << "\n";
    return 1;
  }
  std::ofstream html;
  if (!a.html.empty() && !OpenHtmlReport(a.html, "airtime sim", &html)) return 1;
  auto listed = PolicyList(a.policies, "airtime sim");
  if (!listed) return 2;
  std::vector<std::string> policies = std::move(*listed);
  // The daemon's policy among the replays (-1: none; an index, not an optional: GCC 12 warns
  // of an optional<size_t> read after the replays as maybe uninitialized).
  const long daemon_policy = from ? DaemonPolicyIndex(from->policy, &policies) : -1;
  std::optional<Progress> progress;
  if (!a.quiet) {
    progress.emplace(Progress::ForStderr("airtime sim", policies.size()));
    opt.on_replay_done = [&] { progress->Step(); };
  }
  auto run = SimulatePolicies(*input, policies, opt);
  if (progress) progress->Clear();
  if (!run.ok()) {
    std::cerr << "airtime sim: " << PrintableText(run.status().message()) << "\n";
    return 2;
  }
  std::vector<SimResult>& results = *run;
  // --from-data: the replay of the daemon's own policy, and whether it ran on its cluster.
  const SimResult* daemon_result =
      daemon_policy >= 0 ? &results[static_cast<size_t>(daemon_policy)] : nullptr;
  const bool same_cluster = from && from->recorded_cluster && a.add_nodes.empty();
  if (!a.decisions.empty()) {
    // A second, logged replay per policy over the same horizon (identical decisions), side
    // by side, each into its own file.
    auto path = [&](size_t i) {
      return policies.size() == 1 ? a.decisions : a.decisions + "." + results[i].policy;
    };
    std::vector<char> written(policies.size(), 0);
    ParallelFor(policies.size(), opt.threads, [&](size_t i) {
      std::ofstream log(path(i));
      SimOptions logged = opt;
      logged.horizon = results[i].end;
      logged.decision_log = &log;
      written[i] = Simulate(*input, policies[i], logged).ok() && log;
    });
    for (size_t i = 0; i < policies.size(); ++i) {
      if (!written[i]) {
        std::cerr << "airtime sim: cannot write " << path(i) << "\n";
        return 1;
      }
    }
  }
  for (const auto& r : results)
    for (const auto& e : r.event_errors)
      std::cerr << "warning: " << r.policy << ": " << PrintableText(e) << "\n";
  // The bound over the replays' common span: the horizon, or the end they were brought to.
  std::optional<LpBound> bound;
  if (!a.no_bound && !results.empty())
    bound = ComputeLpBound(*input, results.front().end, bound_options);
  if (!a.quiet) {
    std::cout << "\n"
              << PrintableText(
                     ResultsTable(results, bound && bound->ok() ? bound->per_gpu_hour() : 0));
    if (bound) {
      const ValueCeiling ceiling = ComputeValueCeiling(*input, results.front().end);
      std::cout << BoundLine(*bound);
      char line[160];
      std::snprintf(line, sizeof line,
                    "value ceiling per installed GPU-h (looser: ignores capacity): %.3f reachable, "
                    "%.3f offered\n",
                    ceiling.reachable_per_gpu_hour(), ceiling.offered_per_gpu_hour());
      std::cout << line;
    }
    if (from)
      std::cout << "\n" << PrintableText(RecordedReport(*from, daemon_result, same_cluster));
    for (const auto& r : results)
      if (const std::string holds = HoldsReport(r); !holds.empty())
        std::cout << "\n" << PrintableText(holds);
    for (const auto& r : results) std::cout << "\n" << PrintableText(CostsReport(r));
    for (const auto& r : results) {
      if (r.waiting_at_end_count == 0) continue;
      std::cout << "\n"
                << r.policy << ": " << r.waiting_at_end_count
                << " workload(s) still waiting at the end, e.g.\n";
      for (size_t i = 0; i < r.waiting_at_end.size() && i < 1; ++i)
        std::cout << "  " << PrintableText(r.waiting_at_end[i]) << "\n";
    }
  }
  if (!a.json.empty()) {
    std::ofstream f(a.json);
    nlohmann::json report = ReportToJson(*input, results, a.seed, bound ? &*bound : nullptr);
    report["interference"] = a.interference;
    if (from) report["from_data"] = RecordedJson(*from, daemon_result);
    f << report.dump(2) << "\n";
    if (!f) {
      std::cerr << "airtime sim: cannot write " << a.json << "\n";
      return 1;
    }
    if (!a.quiet) std::cout << "\nreport written to " << a.json << "\n";
  }
  if (!a.html.empty()) {
    HtmlPage page("airtime sim: " + input->cluster.name());
    page.Paragraph("Cluster " + input->cluster.name() + ": " +
                   std::to_string(input->cluster.node_count()) + " nodes, " +
                   std::to_string(input->cluster.gpu_count()) + " GPUs; " +
                   std::to_string(input->workloads.size()) + " workloads; replayed to " +
                   FormatDuration(results.empty() ? 0 : results.front().end) + " with seed " +
                   std::to_string(a.seed) + ".");
    for (const auto& n : input->notes) page.Paragraph(n);
    if (from) AddRecordedSection(page, *from, daemon_result, same_cluster);
    if (bound) page.Paragraph(BoundLine(*bound));
    AddReplaySections(page, results, bound && bound->ok() ? bound->per_gpu_hour() : 0);
    if (!WriteHtmlReport(page, a.html, "airtime sim", a.quiet, &html)) return 1;
  }
  return 0;
}

// A seed: a whole number a uint64_t holds (CLI11 takes -1 as 2^64 - 1 and saturates a
// larger one).
CLI::Validator SeedCheck() {
  return CLI::Validator(
      [](const std::string& v) {
        uint64_t seed = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
        return ec == std::errc() && end == v.data() + v.size()
                   ? std::string()
                   : "expected a whole number from 0 to 18446744073709551615, got '" + v + "'";
      },
      "SEED");
}

}  // namespace

void AddSimCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sim =
      app.add_subcommand("sim", "replay workloads on a simulated cluster under several policies");
  sim->add_option("--cluster", args->cluster, "cluster YAML file");
  sim->add_option("--workload", args->workloads, "workload YAML file (repeatable)");
  sim->add_option("--policy", args->policies,
                  "policies to compare, comma-separated (name or name:key=value)")
      ->capture_default_str();
  sim->add_option("--seed", args->seed, "seed for tie-breaking")
      ->capture_default_str()
      ->check(SeedCheck());
  sim->add_option("--json", args->json, "write the JSON report here");
  sim->add_option("--html", args->html,
                  "write a self-contained HTML report with charts here (a replay, the suite or "
                  "the protocol; no network needed to view it)");
  sim->add_option("--horizon", args->horizon, "stop the replay at this time (e.g. 24h)");
  sim->add_option(
      "--decisions", args->decisions,
      "write every decision and, at the end, why each waiting workload waits (JSON lines; "
      "with several policies, one file per policy: FILE.<policy>)");
  sim->add_option("--demand-csv", args->demand_csv,
                  "write each service's demand curve as the replay sees it (traces imported, "
                  "days tiled) to this CSV, one row per step: service,from_s,rps and the "
                  "service's capacity_rps,cold_start_s,min_replicas,max_replicas (-1: none)");
  sim->add_option("--from-data", args->from_data,
                  "replay what a daemon saw: its --data folder (read-only, also while it runs); "
                  "see docs/what-if.md");
  sim->add_option("--since", args->since,
                  "--from-data: the window's start, a UTC time (2026-12-01 08:00) or a duration "
                  "before its end (7d)");
  sim->add_option("--until", args->until,
                  "--from-data: the window's end, a UTC time or a duration before the store's "
                  "last record (default: that record)");
  sim->add_option("--add-nodes", args->add_nodes,
                  "add nodes to the cluster: COUNTxTYPE[:GPUS], e.g. 2xH100:8 (repeatable)");
  sim->add_option("--gpu-cost", args->gpu_costs,
                  "the hourly cost of one GPU of a type, replacing its cost model: "
                  "TYPE=PER_HOUR, e.g. H100=2.5 (repeatable)");
  sim->add_flag("--skip-bad-rows", args->skip_bad_rows,
                "skip and count broken trace rows instead of failing");
  sim->add_flag("-q,--quiet", args->quiet, "print nothing but errors");
  sim->add_flag("--no-bound", args->no_bound,
                "skip the LP bound on return (a replay's and the suite's `bound` lines)");
  sim->add_option(
      "--bound-slot", args->bound_slot,
      "the LP bound's slot length, e.g. 15m (default: 48 slots a day, 48 to 192 in all: "
      "30m for a day)");
  sim->add_option("--bound-slo", args->bound_slo,
                  "the realtime SLO attainment of the second bound, which only schedules that "
                  "serve that share of requests may reach (0: none)")
      ->capture_default_str();
  sim->add_option("--interference", args->interference,
                  "how work sharing a GPU by fractions slows down: gavel (the built-in table), "
                  "none, or a CSV file of family,other,factor")
      ->capture_default_str();
  sim->add_option("--protocol", args->protocol,
                  "run a placement protocol instead of a replay (fgd)");
  sim->add_option("--nodes", args->nodes, "protocol: node list CSV");
  sim->add_option("--pods", args->pods, "protocol: pod list CSV");
  sim->add_option("--seeds", args->seeds, "protocol: number of seeds (from --first-seed)")
      ->capture_default_str();
  sim->add_option("--first-seed", args->first_seed,
                  "protocol: the first seed (42, as the published figures)")
      ->capture_default_str()
      ->check(SeedCheck());
  sim->add_option("--threads", args->threads,
                  "replays (one per policy, or per policy and seed in a protocol) run at once; "
                  "0: one per CPU this process may use. Results do not depend on it")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  sim->add_flag("--suite", args->suite,
                "run every scenario of the suite file under every policy (see --suite-file)");
  sim->add_option("--suite-file", args->suite_file, "the suite file")->capture_default_str();
  sim->callback([args, exit_code, sim] {
    if (args->suite) {
      *exit_code = RunSuite(*args);
    } else if (!args->protocol.empty()) {
      // The protocol measures placement: compare the placement policies unless told otherwise.
      const std::string policies = sim->count("--policy") ? args->policies : "bestfit,fgd";
      auto listed = PolicyList(policies, "airtime sim");
      *exit_code = listed ? RunProtocol(*args, *listed) : 2;
    } else {
      *exit_code = RunScenario(*args);
    }
  });
}

}  // namespace airtime
