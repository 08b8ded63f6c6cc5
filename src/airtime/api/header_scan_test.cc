// Tests of HeaderScan: where a request's headers end, fed whole or a byte at a time.
#include "airtime/api/header_scan.h"

#include <gtest/gtest.h>

#include <string>

namespace airtime {
namespace {

using R = HeaderScan::Result;

// Feeds `text` in pieces of `step` bytes; returns the result and the bytes used in total.
std::pair<R, size_t> Scan(const std::string& text, size_t step, size_t max = 1000) {
  HeaderScan scan(max);
  size_t total = 0;
  for (size_t at = 0; at < text.size(); at += step) {
    size_t used = 0;
    const size_t n = std::min(step, text.size() - at);
    const R r = scan.Feed(text.data() + at, n, &used);
    total += used;
    if (r != R::kMore) return {r, total};
    EXPECT_EQ(used, n);
  }
  return {R::kMore, total};
}

TEST(HeaderScan, EndsAtTheFirstEmptyLineFedWholeOrByteByByte) {
  const std::string head = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  for (size_t step : {size_t{1}, size_t{2}, size_t{7}, size_t{1000}}) {
    EXPECT_EQ(Scan(head + "body", step), std::make_pair(R::kEnd, head.size())) << step;
    EXPECT_EQ(Scan(head.substr(0, head.size() - 1), step).first, R::kMore) << step;
  }
}

TEST(HeaderScan, BareNewlinesAndStrayCarriageReturnsEndAnEmptyLine) {
  EXPECT_EQ(Scan("GET / HTTP/1.1\nHost: x\n\nrest", 1), std::make_pair(R::kEnd, size_t{24}));
  EXPECT_EQ(Scan("GET / HTTP/1.1\r\r\n\r\r\n", 3), std::make_pair(R::kEnd, size_t{20}));
  // A line with text is not empty, however it ends.
  EXPECT_EQ(Scan("GET / HTTP/1.1\r\nA: b\r\n", 1).first, R::kMore);
}

TEST(HeaderScan, AnEmptyLineInTheFirstTwoBytesDoesNotEndIt) {
  EXPECT_EQ(Scan("\n\n", 1).first, R::kMore);
  EXPECT_EQ(Scan("\r\n", 1).first, R::kMore);
  EXPECT_EQ(Scan("\n\n\n", 1), std::make_pair(R::kEnd, size_t{3}));
  EXPECT_EQ(Scan("\r\n\r\n", 4), std::make_pair(R::kEnd, size_t{4}));
}

TEST(HeaderScan, MoreThanTheLimitBeforeTheEndIsTooLarge) {
  const std::string head = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";  // 27 bytes
  EXPECT_EQ(Scan(head, 1, head.size()), std::make_pair(R::kEnd, head.size()));
  EXPECT_EQ(Scan(head, 5, head.size() - 1), std::make_pair(R::kTooLarge, head.size() - 1));
  EXPECT_EQ(Scan(std::string(100, 'a'), 100, 10), std::make_pair(R::kTooLarge, size_t{10}));
  // Exactly the limit without the end is not yet too large: the next byte decides.
  EXPECT_EQ(Scan(std::string(10, 'a'), 3, 10).first, R::kMore);
}

TEST(HeaderScan, ResetStartsTheNextRequest) {
  HeaderScan scan(30);
  const std::string head = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  size_t used = 0;
  EXPECT_EQ(scan.Feed(head.data(), head.size(), &used), R::kEnd);
  EXPECT_EQ(scan.bytes(), head.size());
  scan.Reset();
  EXPECT_EQ(scan.bytes(), 0u);
  EXPECT_EQ(scan.Feed(head.data(), head.size(), &used), R::kEnd);
  EXPECT_EQ(used, head.size());
}

}  // namespace
}  // namespace airtime
