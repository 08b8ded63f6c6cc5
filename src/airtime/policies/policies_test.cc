#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

using testing::MakeCluster;

TEST(RegistryTest, UnknownNamesAndParametersAreErrors) {
  Cluster c = MakeCluster({{"H100", 8, 2}});
  const auto& reg = PolicyRegistry::Builtin();
  EXPECT_TRUE(reg.Make("fifo", c).ok());
  auto bad = reg.Make("lottery", c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bestfit"), std::string::npos);
  EXPECT_FALSE(reg.Make("static:share=0.3", c).ok());
  EXPECT_FALSE(reg.Make("static:inference_share=abc", c).ok());
  EXPECT_TRUE(reg.Make("static:inference_share=0.25", c).ok());
}

}  // namespace
}  // namespace airtime
