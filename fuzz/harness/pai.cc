// Harness: the Alibaba PAI 2020 machine-list importer (ImportPaiMachines), down to the cluster.
#include "airtime/traces/pai.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  return airtime::fuzz::FuzzImporter(data, size, [](const std::string& path, bool skip) {
    airtime::PaiOptions options;
    options.skip_bad_rows = skip;
    options.include_cpu_nodes = skip;
    airtime::ImportStats stats;
    (void)airtime::ImportPaiMachines(path, options, &stats);
  });
}
