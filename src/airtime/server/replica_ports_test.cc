#include "airtime/server/replica_ports.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using ::testing::HasSubstr;

TEST(ReplicaPorts, ParsesARangeAndNamesWhatIsWrong) {
  auto r = ParsePortRange("21000-21003");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first, 21000);
  EXPECT_EQ(r->last, 21003);
  for (const char* bad : {"", "21000", "21000-", "-21000", "a-b", "21000-21003x", "2100021003"})
    EXPECT_THAT(ParsePortRange(bad).status().message(), HasSubstr("expected FIRST-LAST")) << bad;
  for (const char* bad : {"80-90", "21000-70000", "21003-21000", "0-0"})
    EXPECT_THAT(ParsePortRange(bad).status().message(), HasSubstr("1024 to 65535")) << bad;
}

TEST(ReplicaPorts, PicksTheNextFreePortInTurnAndNoneWhenAllAreHeld) {
  const PortRange r{21000, 21002};
  EXPECT_EQ(PickPort(r, {}), 21000);
  EXPECT_EQ(PickPort(r, {21000, 21002}), 21001);
  EXPECT_EQ(PickPort(r, {21000, 21001, 21002}), 0);
  EXPECT_EQ(PickPort(r, {20999, 21003}), 21000);  // ports outside the range do not matter
  // In turn from where the last one was given, then round to the start.
  EXPECT_EQ(PickPort(r, {}, 21001), 21001);
  EXPECT_EQ(PickPort(r, {21001, 21002}, 21001), 21000);
  EXPECT_EQ(PickPort(r, {}, 30000), 21000);  // outside the range: from the start
}

}  // namespace
}  // namespace airtime
