#include "airtime/slurm/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(Hostlist, ExpandsRangesListsAndPlainNames) {
  auto names = ExpandHostlist("n[1-3,7],gpu-a[08-10],login");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_THAT(*names,
              ElementsAre("n1", "n2", "n3", "n7", "gpu-a08", "gpu-a09", "gpu-a10", "login"));
}

TEST(Hostlist, KeepsASuffixAfterTheBrackets) {
  auto names = ExpandHostlist("rack[1-2]-gpu");
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ElementsAre("rack1-gpu", "rack2-gpu"));
}

TEST(Hostlist, EmptyAndNullAreNoNodes) {
  EXPECT_THAT(*ExpandHostlist(""), IsEmpty());
  EXPECT_THAT(*ExpandHostlist("(null)"), IsEmpty());
}

TEST(Hostlist, RefusesMalformedExpressionsNamingThem) {
  for (const char* bad : {"n[1-", "n1-3]", "n[[1]]", "n[a-b]", "n[3-1]", "n[1-2],,n3", "n 1",
                          "n[-1]", "n[1234567890]"}) {
    auto names = ExpandHostlist(bad);
    ASSERT_FALSE(names.ok()) << bad;
    EXPECT_THAT(names.status().message(), HasSubstr(std::string("'") + bad + "'")) << bad;
  }
}

TEST(Hostlist, RefusesAHugeRangeBeforeExpandingIt) {
  auto names = ExpandHostlist("n[0-999999999]");
  ASSERT_FALSE(names.ok());
  EXPECT_THAT(names.status().message(), HasSubstr("more than 65536 names"));
  EXPECT_FALSE(ExpandHostlist("a,b,c", 2).ok());
  EXPECT_TRUE(ExpandHostlist("a,b", 2).ok());
}

}  // namespace
}  // namespace airtime::slurm
