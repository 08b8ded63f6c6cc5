// SuiteFile: the scenario suite file of `airtime sim --suite` (examples/suite/suite.yaml).
//
// A YAML list under `suite:`; each entry is a replay
//   - {name, cluster, workloads: [...], horizon}
// or a placement protocol
//   - {name, protocol: fgd, nodes, pods}
// with paths relative to the suite file. Shared by the CLI and the benchmarks.
#pragma once

#include <string>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

struct SuiteScenario {
  std::string name;
  std::string cluster;
  std::vector<std::string> workloads;
  std::string horizon;
  std::string protocol, nodes, pods;
  std::string source;  // "suite.yaml:12"
};

// The scenarios in file order, paths resolved against the file's folder; errors name the
// file and line.
StatusOr<std::vector<SuiteScenario>> LoadSuite(const std::string& path);

}  // namespace airtime
