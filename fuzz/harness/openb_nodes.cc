// Harness: the openb node-list importer (--nodes of the FGD protocol), down to the cluster.
#include "airtime/traces/openb.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string path = airtime::fuzz::AsFile(data, size);
  for (bool skip : {false, true}) {
    airtime::ImportOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    auto cluster = airtime::ImportOpenbNodes(path, options, &stats);
    (void)cluster;
  }
  return 0;
}
