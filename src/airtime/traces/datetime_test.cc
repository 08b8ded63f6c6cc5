#include "airtime/traces/datetime.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

TEST(DateTimeTest, ParsesAsUtc) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(ParseDateTimeMs("1970-01-01 00:00:00"), 0);
  // date -u -d '2017-10-09 07:01:55' +%s = 1507532515
  EXPECT_EQ(ParseDateTimeMs("2017-10-09 07:01:55"), 1507532515000);
  EXPECT_EQ(ParseDateTimeMs("2017-10-09T07:01:55"), 1507532515000);
  // date -u -d '2023-11-16 18:17:03' +%s = 1700158623
  EXPECT_EQ(ParseDateTimeMs("2023-11-16 18:17:03.9799600"), 1700158623979);
  EXPECT_EQ(ParseDateTimeMs("2023-11-16 18:17:03.5"), 1700158623500);
  EXPECT_EQ(ParseDateTimeMs("2024-02-29 00:00:00"), 1709164800000);
  EXPECT_EQ(ParseDateTimeMs("1969-12-31 23:59:59"), -1000);
}

TEST(DateTimeTest, RejectsMalformedOrImpossibleTimes) {
  for (const char* bad :
       {"", "2017-10-09", "2017-10-09 07:01", "2017-13-09 07:01:55", "2017-04-31 00:00:00",
        "2023-02-29 00:00:00", "2017-10-09 24:00:00", "2017-10-09 07:60:00", "2017-10-09 07:01:55.",
        "2017-10-09 07:01:55x", "2017/10/09 07:01:55", "abc"})
    EXPECT_FALSE(ParseDateTimeMs(bad).has_value()) << bad;
}

// A trace's rows are of one era: 1970 to 2099.
TEST(DateTimeTest, TraceTimesAreFrom1970To2099) {
  EXPECT_EQ(ParseTraceTimeMs("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(ParseTraceTimeMs("2017-10-09 07:01:55"), 1507532515000);
  EXPECT_EQ(ParseTraceTimeMs("2099-12-31 23:59:59.999"), 4102444799999);
  for (const char* far : {"1969-12-31 23:59:59", "0001-10-09 07:01:55", "2100-01-01 00:00:00",
                          "9999-10-09 07:01:55", "abc"})
    EXPECT_FALSE(ParseTraceTimeMs(far).has_value()) << far;
}

}  // namespace
}  // namespace airtime
