#include "airtime/slurm/gres.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(Gres, ParsesTheFormsSlurmPrints) {
  auto conf = ParseGresList("gpu:h100:8(S:0-1)");
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  ASSERT_EQ(conf->size(), 1u);
  EXPECT_EQ((*conf)[0].name, "gpu");
  EXPECT_EQ((*conf)[0].type, "h100");
  EXPECT_EQ((*conf)[0].count, 8);
  EXPECT_THAT((*conf)[0].indices, IsEmpty());

  auto used = ParseGresList("gpu:a100:3(IDX:0,2-3)");
  ASSERT_TRUE(used.ok()) << used.status().ToString();
  EXPECT_EQ((*used)[0].count, 3);
  EXPECT_THAT((*used)[0].indices, ElementsAre(0, 2, 3));

  auto none = ParseGresList("gpu:a100:0(IDX:N/A)");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)[0].count, 0);
  EXPECT_THAT((*none)[0].indices, IsEmpty());

  auto req = ParseGresList("gres:gpu:a100:2");
  ASSERT_TRUE(req.ok());
  EXPECT_EQ((*req)[0].type, "a100");
  EXPECT_EQ((*req)[0].count, 2);

  auto untyped = ParseGresList("gpu:2");
  ASSERT_TRUE(untyped.ok());
  EXPECT_EQ((*untyped)[0].type, "");
  EXPECT_EQ((*untyped)[0].count, 2);
  EXPECT_EQ((*ParseGresList("gpu"))[0].count, 1);
}

// gres/shard as Slurm 22.05 prints it: a node's ("shard:h100:8000", typed after its GPUs), a
// job's (untyped, with the GPU it came from), and a node's in use.
TEST(Gres, ReadsShards) {
  auto node = ParseGresList("gpu:h100:8,shard:h100:8000");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(GpuCount(*node), 8);
  EXPECT_EQ(ShardCount(*node), 8000);
  auto job = ParseGresList("shard:500(IDX:3)");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ((*job)[0].name, "shard");
  EXPECT_EQ((*job)[0].type, "");
  EXPECT_EQ((*job)[0].count, 500);
  EXPECT_THAT((*job)[0].indices, ElementsAre(3));
  EXPECT_EQ(GpuCount(*job), 0);
  auto used = ParseGresList("gpu:h100:3(IDX:1-3),shard:h100:1(IDX:0)");
  ASSERT_TRUE(used.ok()) << used.status().ToString();
  EXPECT_THAT((*used)[1].indices, ElementsAre(0));
  EXPECT_EQ(ShardCount(*ParseGresList("gpu:h100:8")), 0);
  // A hostile list of many huge counts: summed without overflow (capped at 2^62, which a
  // list would need millions of entries to reach).
  std::string many = "shard:999999999999";
  for (int i = 0; i < 20000; ++i) many += ",shard:999999999999";
  auto huge = ParseGresList(many);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(ShardCount(*huge), int64_t{20001} * 999999999999);
  // Malformed shard entries are errors that quote them.
  EXPECT_THAT(ParseGresList("shard:h100:x").status().message(), HasSubstr("shard:h100:x"));
  EXPECT_FALSE(ParseGresList("shard:500(IDX:0").ok());
  EXPECT_FALSE(ParseGresList("shard:500(IDX:9999)").ok());
}

TEST(Gres, SplitsAListOnlyOutsideParentheses) {
  auto list = ParseGresList("gpu:h100:2(IDX:0,5),gpu:a100:1(IDX:1),shard:8");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_THAT((*list)[0].indices, ElementsAre(0, 5));
  EXPECT_THAT((*list)[1].indices, ElementsAre(1));
  EXPECT_EQ((*list)[2].name, "shard");
  EXPECT_EQ(GpuCount(*list), 3);
}

TEST(Gres, AnIndexListEndsAtTheNextAttribute) {
  auto list = ParseGresList("gpu:h100:2(IDX:0-1,S:0)");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_THAT((*list)[0].indices, ElementsAre(0, 1));
}

TEST(Gres, EmptyForms) {
  EXPECT_THAT(*ParseGresList(""), IsEmpty());
  EXPECT_THAT(*ParseGresList("(null)"), IsEmpty());
  EXPECT_THAT(*ParseGresList("N/A"), IsEmpty());
}

TEST(Gres, RefusesMalformedTextQuotingIt) {
  for (const char* bad :
       {"gpu:h100:8(IDX:0-1", "gpu:h100:x", "gpu:h 100:2", "gpu:h100:2(IDX:3-1)", "gpu:a:b:c:d",
        "gpu:h100:2(IDX:0-99999)", ":2", "gpu:h100:2)(", "gpu:h100:-1"}) {
    auto list = ParseGresList(bad);
    ASSERT_FALSE(list.ok()) << bad;
    EXPECT_THAT(list.status().message(), HasSubstr("GRES '")) << bad;
  }
}

TEST(Gres, IndexLists) {
  EXPECT_THAT(*ParseIndexList("0-1,3"), ElementsAre(0, 1, 3));
  EXPECT_THAT(*ParseIndexList("N/A"), IsEmpty());
  EXPECT_FALSE(ParseIndexList("1,,2").ok());
  EXPECT_FALSE(ParseIndexList("5000").ok());
}

}  // namespace
}  // namespace airtime::slurm
