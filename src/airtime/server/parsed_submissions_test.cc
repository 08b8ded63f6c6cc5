#include "airtime/server/parsed_submissions.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

// A parse of `bytes` whose scenario names its submission, counting the parses made.
std::function<ParsedSubmissions::Parsed()> Parse(int64_t id, size_t bytes, int* parses,
                                                 bool keep = true) {
  return [=] {
    ++*parses;
    Scenario sc;
    WorkloadSpec w;
    w.name = "from-" + std::to_string(id);
    sc.workloads.push_back(w);
    return ParsedSubmissions::Parsed{bytes, sc, keep};
  };
}

TEST(ParsedSubmissions, AParseIsKeptAcrossCallsWithinItsBudget) {
  ParsedSubmissions cache(100);
  int parses = 0;
  auto first = cache.Get(1, Parse(1, 40, &parses));
  ASSERT_TRUE(first->ok());
  EXPECT_EQ((*first)->workloads[0].name, "from-1");
  EXPECT_EQ((*cache.Get(1, Parse(1, 40, &parses)))->workloads[0].name, "from-1");
  EXPECT_EQ(parses, 1);
  cache.Get(2, Parse(2, 40, &parses));
  cache.Get(1, Parse(1, 40, &parses));  // 1 is now the most recently used
  EXPECT_EQ(parses, 2);
  cache.Get(3, Parse(3, 40, &parses));  // over 100 bytes: the least recently used, 2, goes
  EXPECT_EQ(cache.bytes(), 80u);
  EXPECT_EQ(cache.size(), 2u);
  cache.Get(1, Parse(1, 40, &parses));
  EXPECT_EQ(parses, 3);
  cache.Get(2, Parse(2, 40, &parses));
  EXPECT_EQ(parses, 4);
  // A copy a caller holds outlives its entry.
  auto held = cache.Get(4, Parse(4, 100, &parses));
  EXPECT_EQ(cache.size(), 1u);
  cache.Get(5, Parse(5, 100, &parses));
  EXPECT_EQ((*held)->workloads[0].name, "from-4");
}

TEST(ParsedSubmissions, WhatDoesNotFitOrCouldNotBeReadIsNotKept) {
  ParsedSubmissions cache(100);
  int parses = 0;
  cache.Get(1, Parse(1, 30, &parses));
  EXPECT_EQ((*cache.Get(9, Parse(9, 101, &parses)))->workloads[0].name, "from-9");
  EXPECT_EQ(cache.size(), 1u);  // the one too large for the budget evicted nothing
  cache.Get(9, Parse(9, 101, &parses));
  EXPECT_EQ(parses, 3);
  cache.Get(7, Parse(7, 0, &parses, /*keep=*/false));
  cache.Get(7, Parse(7, 0, &parses, /*keep=*/false));
  EXPECT_EQ(parses, 5);
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace airtime
