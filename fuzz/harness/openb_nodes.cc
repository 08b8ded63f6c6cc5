// Harness: the openb node-list importer (--nodes of the FGD protocol), down to the cluster.
#include "airtime/traces/openb.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  return airtime::fuzz::FuzzImporter(data, size, [](const std::string& path, bool skip) {
    airtime::ImportOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    (void)airtime::ImportOpenbNodes(path, options, &stats);
  });
}
