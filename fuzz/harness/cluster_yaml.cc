// Harness: the cluster file loader (ParseClusterYaml), as `airtime sim --cluster` uses it.
#include <string_view>

#include "airtime/config/cluster_yaml.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cluster = airtime::ParseClusterYaml(text, "fuzz.yaml");
  (void)cluster;
  return 0;
}
