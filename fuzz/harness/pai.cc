// Harness: the Alibaba PAI 2020 machine-list importer (ImportPaiMachines), down to the cluster.
#include "airtime/traces/pai.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string path = airtime::fuzz::AsFile(data, size);
  for (bool skip : {false, true}) {
    airtime::PaiOptions options;
    options.skip_bad_rows = skip;
    options.include_cpu_nodes = skip;
    airtime::ImportStats stats;
    auto cluster = airtime::ImportPaiMachines(path, options, &stats);
    (void)cluster;
  }
  return 0;
}
