// Harness: a scenario's events and trace sources after parsing: the checks `airtime sim`
// runs on them (event targets against a cluster, duplicate names when files are merged).
#include <string_view>

#include "airtime/config/cluster_yaml.h"
#include "airtime/config/workload_yaml.h"
#include "fuzz_one.h"

namespace {

const airtime::Cluster& FixedCluster() {
  static const airtime::Cluster cluster = [] {
    auto c = airtime::ParseClusterYaml(
        "cluster:\n  name: fuzz\n  nodes:\n    - {name: a, gpus: 8, gpu: H100}\n"
        "    - {name: b, gpus: 4, gpu: A100-80GB}\n",
        "fixed.yaml");
    if (!c.ok()) __builtin_trap();
    return *c;
  }();
  return cluster;
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scenario = airtime::ParseWorkloadYaml(text, "fuzz.yaml");
  if (!scenario.ok()) return 0;
  (void)airtime::CheckEventTargets(*scenario, FixedCluster());
  airtime::Scenario twice = *scenario;
  (void)airtime::MergeScenario(&twice, *scenario);  // every name is a duplicate
  return 0;
}
