// Harness: the Philly trace importer (format `philly` of a workload file's traces).
#include "airtime/traces/philly.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  return airtime::fuzz::FuzzImporter(data, size, [](const std::string& path, bool skip) {
    airtime::PhillyOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    (void)airtime::ImportPhilly(path, options, &stats);
  });
}
