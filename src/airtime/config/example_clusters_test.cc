// Every cluster under examples/clusters loads; the named ones have the shape they promise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "airtime/config/cluster_yaml.h"

namespace airtime {
namespace {

std::filesystem::path ExamplesDir() {
  return std::filesystem::path(AIRTIME_SOURCE_DIR) / "examples" / "clusters";
}

int Gpus(const Cluster& c, const char* type) {
  return c.gpus_per_type()[static_cast<size_t>(*c.catalog().Find(type))];
}

TEST(ExampleClustersTest, EveryFileLoads) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ExamplesDir())) {
    if (entry.path().extension() != ".yaml") continue;
    auto c = LoadClusterYaml(entry.path().string());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (c.ok()) {
      EXPECT_GT(c->gpu_count(), 0u) << entry.path();
    }
    ++loaded;
  }
  EXPECT_GE(loaded, 3);
}

TEST(ExampleClustersTest, Small8xH100) {
  auto c = LoadClusterYaml((ExamplesDir() / "small-8xh100.yaml").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->node_count(), 1u);
  EXPECT_EQ(Gpus(*c, "H100"), 8);
}

TEST(ExampleClustersTest, Mixed64) {
  auto c = LoadClusterYaml((ExamplesDir() / "mixed-64.yaml").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpu_count(), 64u);
  EXPECT_EQ(Gpus(*c, "H100"), 32);
  EXPECT_EQ(Gpus(*c, "A100-80GB"), 16);
  EXPECT_EQ(Gpus(*c, "L40S"), 16);
  std::map<std::string, int> pools;
  std::set<int32_t> h100_domains;
  for (size_t n = 0; n < c->node_count(); ++n) {
    const Node& node = c->node(static_cast<NodeIndex>(n));
    pools[node.pool] += node.gpu_count;
    if (node.gpu_type == *c->catalog().Find("H100"))
      h100_domains.insert(c->domain_of(static_cast<NodeIndex>(n)));
  }
  EXPECT_EQ(h100_domains.size(), 2u);
  EXPECT_GT(pools["inference"], 0);
  EXPECT_GT(pools["training"], 0);
}

TEST(ExampleClustersTest, Hetero) {
  auto c = LoadClusterYaml((ExamplesDir() / "hetero.yaml").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (const char* t : {"H100", "A100-40GB", "L4", "T4", "V100"}) EXPECT_GT(Gpus(*c, t), 0) << t;
}

}  // namespace
}  // namespace airtime
