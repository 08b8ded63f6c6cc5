// Harness: the openb pod-list importer (format `openb` of a workload file's traces; --pods of
// the FGD protocol), down to the workloads it makes.
#include "airtime/traces/openb.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string path = airtime::fuzz::AsFile(data, size);
  for (bool skip : {false, true}) {
    airtime::ImportOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    auto workloads = airtime::ImportOpenbWorkloads(path, options, &stats);
    (void)workloads;
  }
  return 0;
}
