// A test helper shared by the workload loader's error tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "airtime/config/workload_yaml.h"

namespace airtime {

// Parses `text` as "w.yaml"; expects an InvalidArgument starting with "w.yaml:<line>: " that
// contains every one of `parts`.
inline void ExpectError(const std::string& text, int line, const std::vector<std::string>& parts) {
  auto s = ParseWorkloadYaml(text, "w.yaml");
  ASSERT_FALSE(s.ok()) << "parsed:\n" << text;
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), ::testing::StartsWith("w.yaml:" + std::to_string(line) + ": "));
  for (const auto& p : parts) EXPECT_THAT(s.status().message(), ::testing::HasSubstr(p));
}

}  // namespace airtime
