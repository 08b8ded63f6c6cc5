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
  // A parameter given twice is not the last one silently.
  auto twice = reg.Make("airtime:spare=1:spare=2", c);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "policy 'airtime': parameter 'spare' given twice");
}

TEST(RegistryTest, KeepsRegistrationOrder) {
  // The order builtin.cc registers in is the order `airtime sim` compares them by default.
  // The peers for services with model variants are airtime itself on any other input: listed,
  // not compared by default.
  EXPECT_EQ(PolicyRegistry::Builtin().names(),
            (std::vector<std::string>{"fifo", "static", "bestfit", "fgd", "slurm", "tiresias",
                                      "kai", "lyra", "airtime", "fixed-generalist",
                                      "cheapest-meeting-quality", "static-split", "replay"}));
  EXPECT_EQ(PolicyRegistry::Builtin().compared_names(),
            (std::vector<std::string>{"fifo", "static", "bestfit", "fgd", "slurm", "tiresias",
                                      "kai", "lyra", "airtime"}));
  PolicyRegistry r;
  auto none = [](const Cluster&, const PolicyParams&) -> StatusOr<Policy> { return Policy{}; };
  r.Register("zeta", "last letter", {}, none);
  r.Register("alpha", "first letter", {"k"}, none);
  r.Register("zeta", "registered again", {}, none);  // replaces, keeps its place
  EXPECT_EQ(r.names(), (std::vector<std::string>{"zeta", "alpha"}));
  EXPECT_EQ(r.description("zeta"), "registered again");
  EXPECT_EQ(r.params("alpha"), (std::vector<std::string>{"k"}));
  EXPECT_TRUE(r.params("omega").empty());
  auto bad = r.Make("omega", MakeCluster({{"H100", 8, 1}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("(known: zeta, alpha)"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace airtime
