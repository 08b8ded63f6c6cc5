#include "airtime/slurm/slurm_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "airtime/slurm/api_shapes.h"

namespace airtime::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

nlohmann::json Sample(const std::string& name) {
  std::ifstream f(std::string(AIRTIME_SOURCE_DIR) + "/src/airtime/slurm/testdata/v0.0.38/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return nlohmann::json::parse(s.str(), nullptr, false);
}

SlurmNode MakeNode(const std::string& name, const std::string& gres) {
  SlurmNode n;
  n.name = name;
  n.gres = *ParseGresList(gres);
  n.cpus = 64;
  return n;
}

TEST(SlurmCluster, TheLabsNodesAndAJobsGpus) {
  auto shapes = ShapesFor("v0.0.38");
  auto nodes = shapes->ParseNodes(Sample("nodes.json"));
  ASSERT_TRUE(nodes.ok());
  auto sc = ClusterFromSlurm(*nodes, "lab");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  const Cluster& c = sc->cluster;
  ASSERT_EQ(c.node_count(), 4u);
  ASSERT_EQ(c.gpu_count(), 32u);
  EXPECT_EQ(c.node(0).name, "n1");
  EXPECT_EQ(GpuCatalog::Builtin().type(c.node(0).gpu_type).name, "H100");
  EXPECT_EQ(GpuCatalog::Builtin().type(c.node(3).gpu_type).name, "A100-40GB");
  EXPECT_EQ(c.node(0).cpu_milli, 64000);
  EXPECT_EQ(c.node(0).pool, "");  // in two partitions
  EXPECT_EQ(sc->note, "");
  EXPECT_EQ(sc->address_of.at("n1"), "127.0.0.1");  // the lab's nodes are this machine
  std::vector<SlurmNode> unaddressed = *nodes;
  unaddressed[2].address.clear();
  EXPECT_EQ(ClusterFromSlurm(unaddressed, "lab")->address_of.at("n3"), "n3");  // Slurm's default

  auto jobs = shapes->ParseJobs(Sample("jobs.json"));
  ASSERT_TRUE(jobs.ok());
  // Job 2 holds n4's GPUs 2-3: the engine's GPUs 24+2 and 24+3.
  auto gpus = sc->GpusOf((*jobs)[1]);
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  EXPECT_THAT(*gpus, ElementsAre(26, 27));
  // The two-node foreign job: n1 and n2, GPUs 0-2 of each.
  EXPECT_THAT(*sc->GpusOf((*jobs)[2]), ElementsAre(0, 1, 2, 8, 9, 10));
  EXPECT_THAT(*sc->GpusOf((*jobs)[3]), ElementsAre());  // pending: none
}

// gres/shard read as shards per GPU (how many make a GPU): the lab's 1000 each; the GPU of a
// job's shards maps like a whole GPU's. Uneven or GPU-less shards are said, not fatal.
TEST(SlurmCluster, ReadsShardsPerGpu) {
  auto shapes = ShapesFor("v0.0.38");
  auto nodes = shapes->ParseNodes(Sample("nodes_shards.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  auto sc = ClusterFromSlurm(*nodes, "lab");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->cluster.gpu_count(), 16u);
  EXPECT_EQ(sc->shards_per_gpu.at("n1"), 1000);
  EXPECT_EQ(sc->shards_per_gpu.at("n2"), 1000);
  EXPECT_EQ(sc->note, "");
  auto jobs = shapes->ParseJobs(Sample("jobs_shards.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_THAT(*sc->GpusOf((*jobs)[0]), ElementsAre(0));  // half1: n1's GPU 0
  EXPECT_THAT(*sc->GpusOf((*jobs)[3]), ElementsAre(8));  // third: n2's GPU 0

  auto odd = ClusterFromSlurm({MakeNode("a", "gpu:h100:3,shard:h100:100"),
                               MakeNode("b", "shard:40"), MakeNode("c", "gpu:h100:2")},
                              "odd");
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  EXPECT_EQ(odd->shards_per_gpu.at("a"), 33);
  EXPECT_EQ(odd->shards_per_gpu.count("b"), 0u);  // no GPUs to share
  EXPECT_EQ(odd->shards_per_gpu.count("c"), 0u);  // no shards
  EXPECT_THAT(odd->note, HasSubstr("a: 100 shards on 3 GPUs, taken as 33 each"));
}

TEST(SlurmCluster, ANodeWithTwoTypesIsSplitAndKeepsSlurmsNumbering) {
  auto sc = ClusterFromSlurm({MakeNode("m1", "gpu:h100:2,gpu:l4:3(S:0)")}, "c");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  ASSERT_EQ(sc->cluster.node_count(), 2u);
  EXPECT_EQ(sc->cluster.node(0).name, "m1-h100");
  EXPECT_EQ(sc->cluster.node(1).name, "m1-l4");
  SlurmJob j;
  j.id = 9;
  j.gpus = {{"m1", "l4", {2, 4}}, {"m1", "h100", {1}}};
  // Slurm's l4 indices 2-4 follow the h100s' 0-1; the engine numbers them the same way here.
  EXPECT_THAT(*sc->GpusOf(j), ElementsAre(2, 4, 1));
  EXPECT_EQ(sc->cluster.gpu(2).node, 1);  // the first l4
  EXPECT_EQ(sc->cluster.gpu(2).index_on_node, 0);
}

TEST(SlurmCluster, LeavesOutGpusItCannotTypeAndSaysSo) {
  auto sc = ClusterFromSlurm(
      {MakeNode("u1", "gpu:4"), MakeNode("x1", "gpu:tpu9:2,gpu:a100:2"), MakeNode("c1", "")}, "c");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_THAT(sc->note, HasSubstr("u1: 4 x gpu without a type"));
  EXPECT_THAT(sc->note, HasSubstr("x1: 2 x gpu:tpu9 (unknown type)"));
  ASSERT_EQ(sc->cluster.node_count(), 3u);  // u1 and c1 without GPUs, x1's a100s
  EXPECT_EQ(sc->cluster.gpu_count(), 2u);
  SlurmJob j;
  j.id = 3;
  j.gpus = {{"x1", "a100", {2, 3}}};
  EXPECT_THAT(*sc->GpusOf(j), ElementsAre(0, 1));
  j.gpus = {{"x1", "tpu9", {0}}};
  auto gone = sc->GpusOf(j);
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.status().message(), HasSubstr("GPU 0 of node 'x1'"));
  j.gpus = {{"nowhere", "a100", {0}}};
  EXPECT_FALSE(sc->GpusOf(j).ok());
}

TEST(SlurmCluster, RefusesWhatCannotBeACluster) {
  EXPECT_FALSE(ClusterFromSlurm({}, "c").ok());
  EXPECT_THAT(ClusterFromSlurm({MakeNode("a", "gpu:h100:1"), MakeNode("a", "gpu:h100:1")}, "c")
                  .status()
                  .message(),
              HasSubstr("'a' twice"));
  EXPECT_THAT(ClusterFromSlurm({MakeNode("big", "gpu:h100:5000")}, "c").status().message(),
              HasSubstr("more than 4096"));
}

}  // namespace
}  // namespace airtime::slurm
