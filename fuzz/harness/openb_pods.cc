// Harness: the openb pod-list importer (format `openb` of a workload file's traces; --pods of
// the FGD protocol), down to the workloads it makes.
#include "airtime/traces/openb.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  return airtime::fuzz::FuzzImporter(data, size, [](const std::string& path, bool skip) {
    airtime::ImportOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    (void)airtime::ImportOpenbWorkloads(path, options, &stats);
  });
}
