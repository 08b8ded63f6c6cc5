// The options of `airtime sim`, shared by its modes (replay, protocol, suite).
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/parallel.h"
#include "airtime/base/status.h"
#include "airtime/fgd/fgd_protocol.h"
#include "airtime/html/page.h"
#include "airtime/model/interference.h"
#include "airtime/sim/lp_bound.h"

namespace airtime {

// Every registered policy (policies/registry.h), comma-separated in registration order: the
// default of --policy for a replay and the suite. A new policy joins it by registering.
std::string DefaultPolicies();

struct SimArgs {
  std::string cluster;
  std::vector<std::string> workloads;
  std::string policies = DefaultPolicies();  // the protocol's default differs: bestfit,fgd
  uint64_t seed = 1;
  std::string json;
  std::string html;  // the self-contained HTML report (report/replay_report.h)
  std::string decisions;
  std::string demand_csv;  // each service's demand curve as the replay sees it
  std::string horizon;
  // What-if on a daemon's history (sim/from_data.h, docs/what-if.md): its store's folder,
  // and the window (ParseWindowTime's forms; "" : all the store holds).
  std::string from_data;
  std::string since, until;
  // Replays: more nodes (COUNTxTYPE[:GPUS]) and hourly costs (TYPE=PER_HOUR) on top of the
  // cluster (sim/from_data.h: AddNodes, OverrideGpuCost).
  std::vector<std::string> add_nodes;
  std::vector<std::string> gpu_costs;
  bool skip_bad_rows = false;
  bool quiet = false;
  std::string interference = "gavel";  // gavel, none, or a CSV file of measured factors
  int threads = 0;                     // replays at once; 0: DefaultParallelism()
  // The LP bound on return (sim/lp_bound.h), computed for replays unless --no-bound.
  bool no_bound = false;
  std::string bound_slot;  // its slot length ("" : automatic)
  // The realtime SLO attainment of the second bound, on the schedules that meet it (0: none).
  double bound_slo = 0.999;
  // Protocol mode.
  std::string protocol;
  std::string nodes, pods;
  int seeds = 10;
  uint64_t first_seed = 42;  // the published FGD figures are seeds 42-51
  // Suite mode.
  bool suite = false;
  std::string suite_file = "examples/suite/suite.yaml";

  // `threads`, 0 resolved to one per CPU this process may use.
  int Threads() const { return threads > 0 ? threads : DefaultParallelism(); }
};

// The interference model `--interference` names: the built-in Gavel table ("gavel"), none
// ("none": *model null), or the table in a CSV file (sim/interference_file.h), kept in
// *storage. The error names the file and line.
Status ResolveInterference(const std::string& arg, std::optional<InterferenceModel>* storage,
                           const InterferenceModel** model);

// The LP bound's options from --bound-slot; false (and a message on stderr naming `who`)
// when the duration is malformed.
bool BoundOptions(const SimArgs& args, const char* who, LpBoundOptions* options);

// Opens `path` for the HTML report before a run starts, so that a folder that does not
// exist is named at once rather than after a long run; false (and a message on stderr
// naming `who`) when it cannot be written.
bool OpenHtmlReport(const std::string& path, const char* who, std::ofstream* out);
// Writes `page` to `out` (opened by OpenHtmlReport on `path`); false with a message when it
// fails. Says where it went on stdout unless `quiet`.
bool WriteHtmlReport(const HtmlPage& page, const std::string& path, const char* who, bool quiet,
                     std::ofstream* out);

// Splits "fifo,tiresias:thresholds=30m,4h,bestfit" into policy specs: a comma starts a new
// spec only where a known policy name follows, so parameter values may hold commas.
std::vector<std::string> SplitPolicies(const std::string& list);
// SplitPolicies, or nullopt once it has told stderr, as `who`, that `list` names no policy.
std::optional<std::vector<std::string>> PolicyList(const std::string& list, const char* who);

// `airtime sim --protocol NAME`: a placement protocol (fgd) over --nodes / --pods under
// `policies`. Returns the exit code.
int RunProtocol(const SimArgs& args, const std::vector<std::string>& policies);

// The FGD sections of an HTML report (report/fgd_curves_report.h), with the published curves
// found beside the pod list (fgd/fgd_expected.h) when they are there.
void AddFgdSectionsBeside(HtmlPage& page, const FgdReport& report, const std::string& pods_csv);

// `airtime sim --suite`: every scenario of the suite file (plus one given with --cluster /
// --workload or --nodes / --pods) under every policy; one table per scenario, a summary, and
// the JSON report. Returns the exit code.
int RunSuite(const SimArgs& args);

}  // namespace airtime
