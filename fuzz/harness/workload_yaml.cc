// Harness: the workload file loader (ParseWorkloadYaml), as `airtime sim --workload` and the
// daemon's POST /v1/workloads use it.
#include <string_view>

#include "airtime/config/workload_yaml.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scenario = airtime::ParseWorkloadYaml(text, "fuzz.yaml");
  (void)scenario;
  return 0;
}
