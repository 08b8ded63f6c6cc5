// Paths to the test data of the trace importers (test-only helper).
#pragma once

#include <filesystem>
#include <string>

namespace airtime::testing {

// A file under tests/data/traces/.
inline std::string TraceTestData(const std::string& relative) {
  return std::string(AIRTIME_SOURCE_DIR) + "/tests/data/traces/" + relative;
}

// A file of the full traces (../shared/traces next to the repository).
inline std::string SharedTrace(const std::string& relative) {
  return std::string(AIRTIME_SOURCE_DIR) + "/../shared/traces/" + relative;
}

inline bool SharedTracesPresent() {
  std::error_code ec;
  return std::filesystem::is_directory(std::string(AIRTIME_SOURCE_DIR) + "/../shared/traces", ec);
}

}  // namespace airtime::testing
