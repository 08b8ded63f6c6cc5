// Harness: the Azure LLM inference importer (a realtime workload's demand_trace), down to the
// demand curve with the options a workload file gives by default.
#include "airtime/traces/azure.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  return airtime::fuzz::FuzzImporter(data, size, [](const std::string& path, bool skip) {
    airtime::AzureOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    airtime::AzureTokenSummary tokens;
    (void)airtime::ImportAzureDemand(path, options, &stats, &tokens);
  });
}
