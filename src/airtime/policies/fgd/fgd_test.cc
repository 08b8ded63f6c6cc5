#include "airtime/policies/fgd/fgd.h"

#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

GpuTypeId Type(const char* name) { return *GpuCatalog::Builtin().Find(name); }

FgdTask Task(int64_t cpu, int milli, int count, double weight,
             std::vector<GpuTypeId> allowed = {}) {
  FgdTask t;
  t.cpu_milli = cpu;
  t.gpu_milli = milli;
  t.gpu_count = count;
  t.weight = weight;
  t.allowed = std::move(allowed);
  return t;
}

WorkloadSpec Shared(const std::string& name, int milli) {
  WorkloadSpec s = MakeJob(name, WorkloadKind::kBatch, 1, 100);
  s.shape.mode = ShareMode::kFraction;
  s.shape.gpu_milli = milli;
  return s;
}

Engine MakeFgdEngine(const Cluster& c, std::vector<FgdTask> tasks,
                     const std::string& spec = "fgd") {
  auto p = PolicyRegistry::Builtin().Make(spec, c);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  FgdScore* fgd = FindFgdScore(*p);
  EXPECT_NE(fgd, nullptr);
  if (fgd && !tasks.empty()) fgd->SetTypicalTasks(std::move(tasks));
  return Engine(c, std::move(*p));
}

TEST(FgdTest, NodeFragmentationFollowsTheDefinition) {
  const std::vector<int> left = {1000, 600, 200, 0};  // 1800 idle
  const std::vector<FgdTask> tasks = {
      Task(0, 0, 0, 0.1),                        // CPU only: all idle capacity
      Task(2000, 500, 1, 0.3),                   // fits: only the 200 left on GPU 2 is lost
      Task(2000, 1000, 2, 0.2),                  // two whole GPUs: no room, all idle
      Task(20000, 100, 1, 0.2),                  // too little CPU: all idle
      Task(0, 1000, 1, 0.2, {Type("V100M16")}),  // wrong type: all idle
  };
  EXPECT_DOUBLE_EQ(NodeFragmentation(left, 10000, Type("T4"), tasks),
                   0.1 * 1800 + 0.3 * 200 + 0.2 * 1800 + 0.2 * 1800 + 0.2 * 1800);
  // On an allowed type the whole-GPU task fits, and the partial GPUs are what it cannot use.
  EXPECT_DOUBLE_EQ(NodeFragmentation(left, 10000, Type("V100M16"), tasks),
                   0.1 * 1800 + 0.3 * 200 + 0.2 * 1800 + 0.2 * 1800 + 0.2 * 800);
  EXPECT_DOUBLE_EQ(NodeFragmentation({0, 0}, 10000, Type("T4"), tasks), 0.0);
}

TEST(FgdTest, TypicalTasksAreTheMostFrequentShapes) {
  auto shape = [](int64_t cpu, int milli, int count) {
    Shape s;
    s.cpu_milli = cpu;
    s.gpu_count = count;
    s.mode = milli < 1000 ? ShareMode::kFraction : ShareMode::kWhole;
    s.gpu_milli = milli;
    return s;
  };
  std::vector<Shape> shapes;
  for (int i = 0; i < 6; ++i) shapes.push_back(shape(4000, 500, 1));
  for (int i = 0; i < 3; ++i) shapes.push_back(shape(8000, 1000, 2));
  shapes.push_back(shape(2000, 0, 0));
  auto all = TypicalTasks(shapes, 0.95);  // 9 of 10 is not enough: all three
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].gpu_milli, 500);
  EXPECT_DOUBLE_EQ(all[0].weight, 0.6);
  EXPECT_EQ(all[2].gpu_count, 0);
  EXPECT_EQ(all[2].gpu_milli, 0);
  auto most = TypicalTasks(shapes, 0.8);
  ASSERT_EQ(most.size(), 2u);
  EXPECT_DOUBLE_EQ(most[0].weight, 6.0 / 9.0);
  EXPECT_EQ(most[1].gpu_milli, 1000);
  EXPECT_EQ(most[1].gpu_count, 2);
  EXPECT_DOUBLE_EQ(most[1].weight, 3.0 / 9.0);
  // Equal counts: the larger shape first.
  auto tie = TypicalTasks({shape(1000, 200, 1), shape(3000, 200, 1)}, 0.5);
  ASSERT_EQ(tie.size(), 1u);
  EXPECT_EQ(tie[0].cpu_milli, 3000);
}

// The engine's own choice would be the tightest GPU (GPU 0, 500 left); FGD keeps GPU 0's 500
// for the typical half-GPU task and opens GPU 1 instead.
TEST(FgdTest, SharedPodTakesTheLeastFragmentingGpu) {
  Cluster c = MakeCluster({{"T4", 2, 1}});
  for (const std::string spec : {"fgd", "fgd:quantize=0"}) {
    SCOPED_TRACE(spec);
    Engine e = MakeFgdEngine(c, {Task(0, 500, 1, 1.0)}, spec);
    const auto& r1 = e.Handle(Event::Arrival(0, Shared("x", 500)));
    ASSERT_EQ(r1.decisions.size(), 1u);
    EXPECT_EQ(r1.decisions[0].placement.gpus, std::vector<GpuIndex>{0});
    const auto& r2 = e.Handle(Event::Arrival(0, Shared("y", 300)));
    ASSERT_EQ(r2.decisions.size(), 1u);
    EXPECT_EQ(r2.decisions[0].placement.gpus, std::vector<GpuIndex>{1});
  }
  auto bestfit = PolicyRegistry::Builtin().Make("bestfit", c);
  Engine b(c, std::move(*bestfit));
  b.Handle(Event::Arrival(0, Shared("x", 500)));
  EXPECT_EQ(b.Handle(Event::Arrival(0, Shared("y", 300))).decisions[0].placement.gpus,
            std::vector<GpuIndex>{0});
}

// A whole GPU goes where the typical 2-GPU task could no longer run anyway (node 0, with a
// GPU half taken), not onto the empty node it would break.
TEST(FgdTest, NodeWithLeastFragmentationGrowthWins) {
  Cluster c = MakeCluster({{"T4", 2, 2}});
  for (const std::string spec : {"fgd", "fgd:quantize=0"}) {
    SCOPED_TRACE(spec);
    Engine e = MakeFgdEngine(c, {Task(0, 1000, 2, 1.0)}, spec);
    ASSERT_EQ(e.Handle(Event::Arrival(0, Shared("x", 500))).decisions[0].placement.gpus,
              std::vector<GpuIndex>{0});
    const auto& r = e.Handle(Event::Arrival(0, MakeJob("w", WorkloadKind::kBatch, 1, 100)));
    ASSERT_EQ(r.decisions.size(), 1u);
    EXPECT_EQ(r.decisions[0].placement.gpus, std::vector<GpuIndex>{1});
  }
}

// Two 4-GPU nodes and a typical whole-GPU task. A half-GPU pod that may run only on the T4s
// breaks into node 0. A whole-GPU job after it fragments either node alike (neither changes
// what the typical task can use), so FGD's scores tie and the seeded node order decides.
// keep_whole sends it to node 0, which the pod already broke into, leaving node 1's four
// GPUs whole.
TEST(FgdTest, KeepWholeBreaksTiesTowardTheNodeWithFewerWhollyFreeGpus) {
  Cluster c = MakeCluster({{"T4", 4, 1}, {"V100M16", 4, 1}});
  auto node_of_whole = [&](const std::string& spec, uint64_t seed) {
    auto p = PolicyRegistry::Builtin().Make(spec, c);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    FindFgdScore(*p)->SetTypicalTasks({Task(0, 1000, 1, 1.0)});
    Engine e(c, std::move(*p), EngineOptions{.seed = seed});
    WorkloadSpec pod = Shared("x", 500);
    pod.shape.allowed_types = {Type("T4")};
    EXPECT_EQ(e.Handle(Event::Arrival(0, pod)).decisions.size(), 1u);
    const auto& r = e.Handle(Event::Arrival(0, MakeJob("w", WorkloadKind::kBatch, 1, 100)));
    EXPECT_EQ(r.decisions.size(), 1u);
    return r.decisions.empty() ? -1 : r.decisions[0].placement.gpus[0] / 4;  // 4 GPUs a node
  };
  int plain_on_node_0 = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed);
    EXPECT_EQ(node_of_whole("fgd:keep_whole=1", seed), 0);
    plain_on_node_0 += node_of_whole("fgd", seed) == 0;
  }
  // Without it the node order decides: some seeds open the untouched node.
  EXPECT_LT(plain_on_node_0, 16);
}

TEST(FgdTest, LearnsTheMixFromArrivalsWhenNoneIsGiven) {
  Cluster c = MakeCluster({{"T4", 2, 4}});
  auto p = PolicyRegistry::Builtin().Make("fgd", c);
  ASSERT_TRUE(p.ok());
  FgdScore* fgd = FindFgdScore(*p);
  ASSERT_NE(fgd, nullptr);
  Engine e(c, std::move(*p));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(e.Handle(Event::Arrival(i, Shared("s" + std::to_string(i), 400))).decisions.size(),
              1u);
  e.Handle(Event::Arrival(7, MakeJob("w", WorkloadKind::kBatch, 2, 100)));
  const auto& tasks = fgd->typical_tasks();
  ASSERT_FALSE(tasks.empty());
  EXPECT_EQ(tasks[0].gpu_milli, 400);
  double sum = 0;
  for (const auto& t : tasks) sum += t.weight;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  // Everything found room (the 2-GPU job a whole node).
  EXPECT_EQ(e.state().allocated_milli(), 6 * 400 + 2000);
}

TEST(FgdTest, RegistryParameters) {
  Cluster c = MakeCluster({{"T4", 2, 1}});
  const auto& reg = PolicyRegistry::Builtin();
  EXPECT_TRUE(reg.Make("fgd", c).ok());
  EXPECT_TRUE(reg.Make("fgd:quantize=0:coverage=0.9", c).ok());
  EXPECT_TRUE(reg.Make("fgd:keep_whole=1", c).ok());
  EXPECT_FALSE(reg.Make("fgd:keep_whole=yes", c).ok());
  auto exact = reg.Make("fgd:quantize=0:keep_whole=1", c);
  ASSERT_FALSE(exact.ok());
  EXPECT_NE(exact.status().ToString().find("keep_whole=1 needs quantize=1"), std::string::npos)
      << exact.status().ToString();
  EXPECT_FALSE(reg.Make("fgd:coverage=2", c).ok());
  EXPECT_FALSE(reg.Make("fgd:quantize=yes", c).ok());
  EXPECT_FALSE(reg.Make("fgd:bogus=1", c).ok());
  auto fifo = reg.Make("fifo", c);
  ASSERT_TRUE(fifo.ok());
  EXPECT_EQ(FindFgdScore(*fifo), nullptr);
}

}  // namespace
}  // namespace airtime
