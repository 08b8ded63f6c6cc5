// Harness: the Azure LLM inference importer (a realtime workload's demand_trace), down to the
// demand curve with the options a workload file gives by default.
#include "airtime/traces/azure.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string path = airtime::fuzz::AsFile(data, size);
  for (bool skip : {false, true}) {
    airtime::AzureOptions options;
    options.skip_bad_rows = skip;
    airtime::ImportStats stats;
    airtime::AzureTokenSummary tokens;
    auto curve = airtime::ImportAzureDemand(path, options, &stats, &tokens);
    (void)curve;
  }
  return 0;
}
