// Harness: the Philly trace importer (format `philly` of a workload file's traces).
#include "airtime/traces/philly.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string path = airtime::fuzz::AsFile(data, size);
  for (bool skip : {false, true}) {
    airtime::PhillyOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    auto jobs = airtime::ImportPhilly(path, options, &stats);
    (void)jobs;
  }
  return 0;
}
