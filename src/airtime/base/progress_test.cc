#include "airtime/base/progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "airtime/base/parallel.h"

namespace airtime {
namespace {

TEST(FormatEta, SecondsMinutesHours) {
  EXPECT_EQ(FormatEta(0), "0s");
  EXPECT_EQ(FormatEta(42.4), "42s");
  EXPECT_EQ(FormatEta(185), "3m05s");
  EXPECT_EQ(FormatEta(3600 * 2 + 7 * 60 + 20), "2h07m");
  EXPECT_EQ(FormatEta(-1), "?");
  EXPECT_EQ(FormatEta(NAN), "?");
}

TEST(ProgressLine, EstimatesTheTimeLeftFromTheTimePerStep) {
  EXPECT_EQ(ProgressLine("suite", 0, 40, 3), "suite: 0/40 runs (0%), 3s elapsed, left unknown");
  // 10 runs in 65 s: 6.5 s each, 30 left.
  EXPECT_EQ(ProgressLine("suite", 10, 40, 65),
            "suite: 10/40 runs (25%), 1m05s elapsed, about 3m15s left");
  EXPECT_EQ(ProgressLine("x", 4, 4, 10), "x: 4/4 runs (100%), 10s elapsed, about 0s left");
}

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

TEST(Progress, QuietWhenNotEnabled) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(IsTerminal(f));
  {
    Progress p("quiet", 3, f, IsTerminal(f));
    p.Step();
    p.Redraw();
    p.Step();
    EXPECT_EQ(p.done(), 2u);
  }
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(Progress, DrawsInPlaceAndClearsAtTheEnd) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("run", 8, f, true);
    ParallelFor(8, 4, [&](size_t) { p.Step(); });
    EXPECT_EQ(p.done(), 8u);
  }
  const std::string out = Contents(f);
  EXPECT_EQ(out.find('\n'), std::string::npos);  // one line, redrawn
  EXPECT_NE(out.find("\r\033[Krun: 0/8 runs (0%)"), std::string::npos);
  EXPECT_NE(out.find("\r\033[Krun: 8/8 runs (100%)"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");  // cleared
  std::fclose(f);
}

}  // namespace
}  // namespace airtime
