#include "airtime/config/cluster_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kMixed = R"(cluster:
  name: mixed
  nodes:
    - name: h100
      count: 4
      gpu: H100
      gpus: 8
      cpu: 128
      memory_gib: 1024
      nvlink_domain: nvl-a
      rack: r1
      pool: inference
      mig: true
    - name: a100
      gpu: a100-sxm4-80gb
      gpus: 8
    - name: cpu-box
      gpus: 0
      cpu: 64.5
)";

// Nodes alike share their fields through a merge key, anchored under `anchors:`.
TEST(ClusterYamlTest, NodesMergeSharedFields) {
  auto c = ParseClusterYaml(R"(anchors:
  hgx: &hgx {gpu: H100, gpus: 8, cpu: 112, memory_gib: 2048}
cluster:
  name: merged
  nodes:
    - {<<: *hgx, name: a, rack: r1}
    - {<<: *hgx, name: b, gpus: 4}
)",
                            "m.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->node_count(), 2u);
  EXPECT_EQ(c->node(0).gpu_count, 8);
  EXPECT_EQ(c->node(1).gpu_count, 4);
  EXPECT_EQ(c->node(1).gpu_type, *GpuCatalog::Builtin().Find("H100"));
  EXPECT_EQ(c->node(1).cpu_milli, 112000);
}

TEST(ClusterYamlTest, ParsesNodesAndExpandsCounts) {
  auto c = ParseClusterYaml(kMixed, "mixed.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name(), "mixed");
  ASSERT_EQ(c->node_count(), 6u);
  EXPECT_EQ(c->gpu_count(), 40u);
  const GpuCatalog& cat = GpuCatalog::Builtin();
  for (int i = 0; i < 4; ++i) {
    const Node& n = c->node(i);
    EXPECT_EQ(n.name, "h100-" + std::to_string(i));
    EXPECT_EQ(cat.type(n.gpu_type).name, "H100");
    EXPECT_EQ(n.gpu_count, 8);
    EXPECT_EQ(n.cpu_milli, 128000);
    EXPECT_EQ(n.memory_mib, 1024 * 1024);
    EXPECT_EQ(n.nvlink_domain, "nvl-a");
    EXPECT_EQ(n.rack, "r1");
    EXPECT_EQ(n.pool, "inference");
    EXPECT_TRUE(n.mig_enabled);
    EXPECT_EQ(c->domain_of(i), c->domain_of(0));  // expanded nodes share the domain
  }
  // Without count the name is used as is, and optional fields take their defaults.
  const Node& a = c->node(4);
  EXPECT_EQ(a.name, "a100");
  EXPECT_EQ(cat.type(a.gpu_type).name, "A100-80GB");  // found by alias
  EXPECT_EQ(a.cpu_milli, 0);
  EXPECT_EQ(a.memory_mib, 0);
  EXPECT_TRUE(a.nvlink_domain.empty());
  EXPECT_TRUE(a.pool.empty());
  EXPECT_FALSE(a.mig_enabled);
  EXPECT_NE(c->domain_of(4), c->domain_of(0));
  // A CPU-only node needs no GPU type.
  const Node& cpu = c->node(5);
  EXPECT_EQ(cpu.gpu_count, 0);
  EXPECT_EQ(cpu.gpu_type, kNoGpuType);
  EXPECT_EQ(cpu.cpu_milli, 64500);
}

TEST(ClusterYamlTest, CountOfOneStillExpands) {
  auto c = ParseClusterYaml(
      "cluster:\n  name: c\n  nodes:\n    - {name: n, count: 1, gpu: T4, gpus: 2}\n", "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->node(0).name, "n-0");
}

// Parses `text` as "c.yaml", expects an InvalidArgument starting with "c.yaml:<line>: " and
// containing every one of `parts`.
void ExpectError(const std::string& text, int line, std::vector<std::string> parts) {
  auto c = ParseClusterYaml(text, "c.yaml");
  ASSERT_FALSE(c.ok()) << "parsed:\n" << text;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), StartsWith("c.yaml:" + std::to_string(line) + ": "));
  for (const auto& p : parts) EXPECT_THAT(c.status().message(), HasSubstr(p));
}

std::string OneNode(const std::string& fields) {
  return "cluster:\n  name: c\n  nodes:\n    - name: n\n" + fields;
}

TEST(ClusterYamlErrorsTest, UnknownGpuTypeNamesKnownOnes) {
  ExpectError(OneNode("      gpus: 8\n      gpu: H10\n"), 6,
              {"node 'n'", "field 'gpu'", "found 'H10'", "known: H200, H100", "did you mean"});
}

TEST(ClusterYamlErrorsTest, TypoInFieldName) {
  ExpectError(OneNode("      gpus: 8\n      gpu: H100\n      nvlink_domian: x\n"), 7,
              {"node 'n'", "unknown field 'nvlink_domian'", "did you mean 'nvlink_domain'?"});
  ExpectError("cluster:\n  name: c\n  node: []\n", 3, {"unknown field 'node'", "'nodes'"});
}

TEST(ClusterYamlErrorsTest, WrongTypesAndRanges) {
  ExpectError(OneNode("      gpus: eight\n      gpu: H100\n"), 5,
              {"node 'n'", "field 'gpus'", "expected an integer in [0, 1024]", "found 'eight'"});
  ExpectError(OneNode("      gpus: -1\n      gpu: H100\n"), 5, {"field 'gpus'", "found '-1'"});
  ExpectError(OneNode("      gpus: 8\n      gpu: H100\n      count: 0\n"), 7,
              {"field 'count'", "expected an integer in [1, 100000]", "found '0'"});
  ExpectError(OneNode("      gpus: 8\n      gpu: H100\n      mig: maybe\n"), 7,
              {"field 'mig'", "expected true or false", "found 'maybe'"});
  ExpectError(OneNode("      gpus: 8\n      gpu: H100\n      cpu: [1]\n"), 7,
              {"field 'cpu'", "expected a number in [0, 1e+06]", "found a list"});
  // Host sizes beyond any host would wrap once counted in milli-cores and MiB.
  ExpectError(OneNode("      gpus: 8\n      gpu: H100\n      cpu: 1e16\n"), 7,
              {"field 'cpu'", "expected a number in [0, 1e+06]", "found '1e16'"});
  ExpectError(OneNode("      gpus: 8\n      gpu: H100\n      memory_gib: 1e16\n"), 7,
              {"field 'memory_gib'", "expected a number in [0, 1e+09]"});
  ExpectError(OneNode("      gpus: 8\n      gpu: H100\n      rack: {a: 1}\n"), 7,
              {"field 'rack'", "expected a non-empty string", "found a mapping"});
}

TEST(ClusterYamlErrorsTest, MissingRequiredFields) {
  ExpectError(OneNode("      gpu: H100\n"), 4, {"node 'n'", "missing required field 'gpus'"});
  ExpectError(OneNode("      gpus: 4\n"), 4, {"node 'n'", "missing required field 'gpu'"});
  ExpectError("cluster:\n  name: c\n  nodes:\n    - gpus: 1\n      gpu: T4\n", 4,
              {"node #1", "missing required field 'name'"});
  ExpectError("cluster:\n  nodes: []\n", 2, {"missing required field 'name'"});
  ExpectError("cluster:\n  name: c\n", 2, {"cluster 'c'", "missing required field 'nodes'"});
  ExpectError("cluster:\n  name: c\n  nodes: []\n", 3,
              {"field 'nodes'", "expected a non-empty list of nodes", "found an empty list"});
  ExpectError("nodes: []\n", 1, {"unknown field 'nodes'", "known fields: cluster"});
  ExpectError("# nothing\n", 1, {"empty cluster file"});
}

TEST(ClusterYamlErrorsTest, MigOnATypeWithoutMig) {
  ExpectError(OneNode("      gpus: 8\n      gpu: L40S\n      mig: true\n"), 7,
              {"field 'mig'", "L40S does not support MIG"});
}

TEST(ClusterYamlErrorsTest, DuplicateNodeNamesNameBothLines) {
  ExpectError(
      "cluster:\n  name: c\n  nodes:\n    - {name: h, count: 3, gpu: T4, gpus: 1}\n"
      "    - {name: h-1, gpu: T4, gpus: 1}\n",
      5, {"node 'h-1'", "duplicate node name", "also at c.yaml:4"});
}

TEST(ClusterYamlErrorsTest, SyntaxErrorAndSecondDocument) {
  ExpectError("cluster:\n  name: c\n  nodes:\n    - {name: a, gpus: 1\n", 5, {"YAML syntax error"});
  ExpectError("cluster: {name: a, nodes: [{name: a, gpus: 0}]}\n---\ncluster: {}\n", 3,
              {"one YAML document"});
}

TEST(ClusterYamlTest, LoadMissingFileIsNotFound) {
  auto c = LoadClusterYaml("/nonexistent/cluster.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/cluster.yaml"));
}

// Each entry's count was bounded, but not their sum: 500 entries of count: 100000 (16 KB of
// text) expanded to 50 million nodes.
TEST(ClusterYamlTest, TheWholeClusterHasANodeLimit) {
  std::string text = "cluster:\n  name: big\n  nodes:\n";
  for (int i = 0; i < 3; ++i)
    text += "    - {name: n" + std::to_string(i) + ", gpus: 8, gpu: H100, count: 40000}\n";
  auto c = ParseClusterYaml(text, "big.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              HasSubstr("big.yaml:6: node 'n2': field 'count': the cluster would have more than "
                        "100000 nodes"));
}

std::string WithCosts(const std::string& costs) {
  return "cluster:\n  name: c\n  nodes:\n    - name: n\n      gpu: H100\n      gpus: 8\n"
         "  costs:\n" +
         costs;
}

TEST(ClusterYamlCostsTest, DefaultsWithoutCosts) {
  auto f = ParseClusterFile(OneNode("      gpus: 8\n      gpu: H100\n"), "c.yaml");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const GpuCatalog& cat = GpuCatalog::Builtin();
  ASSERT_EQ(f->costs.size(), cat.size());
  const GpuCost& h100 = f->costs[static_cast<size_t>(*cat.Find("H100"))];
  EXPECT_TRUE(h100.priced);
  EXPECT_EQ(h100.price, 30000);
  EXPECT_EQ(h100.pue, kDefaultPue);
}

TEST(ClusterYamlCostsTest, OverridesPerTypeKeepTheRestOfTheDefaults) {
  auto f = ParseClusterFile(WithCosts("    H100-SXM: {price: 24000, life_years: 4, pue: 1.3}\n"
                                      "    L4:\n      per_hour: 0.35\n"
                                      "    G2: {price: 5000, power_w: 250}\n"),
                            "c.yaml");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const GpuCatalog& cat = GpuCatalog::Builtin();
  const GpuCost& h100 = f->costs[static_cast<size_t>(*cat.Find("H100"))];
  EXPECT_EQ(h100.price, 24000);
  EXPECT_EQ(h100.life_years, 4);
  EXPECT_EQ(h100.pue, 1.3);
  EXPECT_EQ(h100.power_w, 700);  // the catalogue's
  EXPECT_EQ(h100.electricity_per_kwh, kDefaultElectricityPerKwh);
  // 24,000 / 35,040 h + 0.7 kW x 0.10 x 1.3
  EXPECT_NEAR(ComputeHourlyCost(h100).total, 24000.0 / 35040 + 0.091, 1e-12);
  const GpuCost& l4 = f->costs[static_cast<size_t>(*cat.Find("L4"))];
  ASSERT_TRUE(l4.per_hour.has_value());
  EXPECT_EQ(ComputeHourlyCost(l4).total, 0.35);
  // A type without defaults gets the shared ones for what the file leaves out.
  const GpuCost& g2 = f->costs[static_cast<size_t>(*cat.Find("G2"))];
  EXPECT_TRUE(g2.priced);
  EXPECT_NEAR(ComputeHourlyCost(g2).total, 5000.0 / 43800 + 0.25 * 0.10 * 1.58, 1e-12);
  // ParseClusterYaml accepts the same file.
  EXPECT_TRUE(ParseClusterYaml(WithCosts("    H100: {price: 1}\n"), "c.yaml").ok());
}

// Parses `text` as "c.yaml" and expects an error at `line` naming every one of `parts`.
void ExpectCostError(const std::string& costs, int line, std::vector<std::string> parts) {
  ExpectError(WithCosts(costs), line, std::move(parts));
}

TEST(ClusterYamlCostsTest, HostileValuesAreRefusedNamingTheField) {
  ExpectCostError(
      "    H100: {price: -1}\n", 8,
      {"cluster 'c'", "field 'costs.H100.price'", "expected a number in [0, ", "found '-1'"});
  ExpectCostError("    H100: {pue: .nan}\n", 8,
                  {"field 'costs.H100.pue'", "expected a number in [1, 10]", "found '.nan'"});
  ExpectCostError("    H100: {pue: 0.5}\n", 8, {"field 'costs.H100.pue'", "found '0.5'"});
  ExpectCostError("    H100: {life_years: 0}\n", 8,
                  {"field 'costs.H100.life_years'", "expected a number in (0, 100]"});
  ExpectCostError("    H100: {power_w: 1e300}\n", 8,
                  {"field 'costs.H100.power_w'", "found '1e300'"});
  ExpectCostError("    H100: {electricity_per_kwh: .inf}\n", 8,
                  {"field 'costs.H100.electricity_per_kwh'", "found '.inf'"});
  ExpectCostError("    H100: {per_hour: 1e9}\n", 8, {"field 'costs.H100.per_hour'"});
  ExpectCostError("    H100: {price: lots}\n", 8, {"field 'costs.H100.price'", "found 'lots'"});
}

TEST(ClusterYamlCostsTest, ShapeErrors) {
  ExpectCostError("    H100: {per_hour: 2, price: 30000}\n", 8,
                  {"field 'costs.H100.price'", "per_hour replaces price"});
  ExpectCostError("    H100: {prise: 1}\n", 8,
                  {"unknown field 'costs.H100.prise'", "did you mean 'price'?"});
  ExpectCostError("    B900: {price: 1}\n", 8,
                  {"field 'costs.B900'", "expected a GPU type", "found 'B900'"});
  ExpectCostError("    H100: {price: 1}\n    h100-sxm: {price: 2}\n", 9,
                  {"field 'costs.h100-sxm'", "H100 already has costs (as 'H100')"});
  ExpectCostError("    H100:\n", 8, {"field 'costs.H100'", "expected a mapping of cost fields"});
  ExpectError(
      "cluster:\n  name: c\n  nodes:\n    - {name: n, gpu: H100, gpus: 8}\n"
      "  costs: 5\n",
      5, {"field 'costs'", "expected a mapping from GPU type to its costs"});
}

// ClusterFileYaml (what the daemon records at each start) reads back to the same nodes,
// whatever the names hold.
TEST(ClusterYamlTest, ClusterFileYamlRoundTrips) {
  const GpuCatalog& catalog = GpuCatalog::Builtin();
  std::vector<Node> nodes(3);
  nodes[0].name = "host: \"quoted\" #not-a-comment";
  nodes[0].gpu_type = *catalog.Find("H100");
  nodes[0].gpu_count = 8;
  nodes[0].cpu_milli = 96500;
  nodes[0].memory_mib = 1536;
  nodes[0].nvlink_domain = "nvl: a";
  nodes[0].rack = "r1";
  nodes[0].pool = "inference";
  nodes[0].mig_enabled = true;
  nodes[1].name = "- [list]";
  nodes[1].gpu_type = *catalog.Find("L4");
  nodes[1].gpu_count = 2;
  nodes[2].name = "cpu-only \u00e9";
  auto cluster = Cluster::Build("lab {x}", nodes);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  const std::string text = ClusterFileYaml(*cluster);
  auto back = ParseClusterYaml(text, "recorded");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  EXPECT_EQ(back->name(), "lab {x}");
  ASSERT_EQ(back->node_count(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Node& a = nodes[i];
    const Node& b = back->nodes()[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.gpu_type, a.gpu_type);
    EXPECT_EQ(b.gpu_count, a.gpu_count);
    EXPECT_EQ(b.cpu_milli, a.cpu_milli);
    EXPECT_EQ(b.memory_mib, a.memory_mib);
    EXPECT_EQ(b.nvlink_domain, a.nvlink_domain);
    EXPECT_EQ(b.rack, a.rack);
    EXPECT_EQ(b.pool, a.pool);
    EXPECT_EQ(b.mig_enabled, a.mig_enabled);
  }
}

}  // namespace
}  // namespace airtime
