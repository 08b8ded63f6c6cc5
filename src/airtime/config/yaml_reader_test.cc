#include "airtime/config/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime::yaml_internal {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(EditDistanceTest, Basics) {
  EXPECT_EQ(EditDistance("", ""), 0);
  EXPECT_EQ(EditDistance("gpus", "gpus"), 0);
  EXPECT_EQ(EditDistance("gpu", "gpus"), 1);
  EXPECT_EQ(EditDistance("gpsu", "gpus"), 2);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
}

TEST(DidYouMeanTest, SuggestsNearestWithinTwo) {
  std::vector<std::string> known = {"gpus", "gpu_type", "priority"};
  EXPECT_EQ(DidYouMean("gpu_typ", known), " (did you mean 'gpu_type'?)");
  EXPECT_EQ(DidYouMean("prority", known), " (did you mean 'priority'?)");
  EXPECT_EQ(DidYouMean("GPUS", known), " (did you mean 'gpus'?)");
  EXPECT_EQ(DidYouMean("tenant", known), "");
  EXPECT_EQ(DidYouMean("id", {"at"}), "");  // too short to be a misspelling
}

TEST(YamlFileTest, ResolvePathRelativeToTheFile) {
  EXPECT_EQ(YamlFile("dir/sub/w.yaml").ResolvePath("data/a.csv"), "dir/sub/data/a.csv");
  EXPECT_EQ(YamlFile("dir/sub/w.yaml").ResolvePath("../a.csv"), "dir/a.csv");
  EXPECT_EQ(YamlFile("dir/w.yaml").ResolvePath("/abs/a.csv"), "/abs/a.csv");
  EXPECT_EQ(YamlFile("w.yaml").ResolvePath("a.csv"), "a.csv");
}

TEST(YamlFileTest, SyntaxErrorCarriesTheLine) {
  YamlFile f("bad.yaml");
  auto docs = f.LoadAll("a: 1\nb: [1, 2\nc: 3\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(docs.status().message(), StartsWith("bad.yaml:"));
  EXPECT_THAT(docs.status().message(), HasSubstr("YAML syntax error"));
}

TEST(YamlFileTest, LinesAcrossDocuments) {
  YamlFile f("m.yaml");
  auto docs = f.LoadAll("a: 1\n---\nb: 2\n---\n\nc: 3\n");
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ(f.Line((*docs)[0]), 1);
  EXPECT_EQ(f.Line((*docs)[1]), 3);
  EXPECT_EQ(f.Line((*docs)[2]), 6);
}

MapReader OpenOk(const YamlFile& f, const YAML::Node& n, const std::vector<std::string>& known) {
  auto r = MapReader::Open(f, n, "thing 'x'", "", known);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

TEST(MapReaderTest, UnknownFieldSuggestsOrListsKnown) {
  YamlFile f("t.yaml");
  auto n = YAML::Load("a: 1\ncuont: 2\n");
  auto r = MapReader::Open(f, n, "thing 'x'", "", {"a", "count"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "t.yaml:2: thing 'x': unknown field 'cuont' (did you mean 'count'?)");
  r = MapReader::Open(f, n, "thing 'x'", "", {"a", "zzz"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("(known fields: a, zzz)"));
}

TEST(MapReaderTest, DuplicateKeyAndNotAMapping) {
  YamlFile f("t.yaml");
  auto dup = MapReader::Open(f, YAML::Load("a: 1\nb: 2\na: 3\n"), "thing", "", {"a", "b"});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(), "t.yaml:3: thing: field 'a' given twice (first at line 1)");
  auto list = MapReader::Open(f, YAML::Load("[1, 2]"), "thing", "slo", {"a"});
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().message(),
            "t.yaml:1: thing: field 'slo': expected a mapping, found a list");
}

TEST(MapReaderTest, TypedFields) {
  YamlFile f("t.yaml");
  auto n = YAML::Load(
      "i: 42\nneg: -3\nx: 0.5\nb: yes\nd: 90m\ns: hello\nl: [A, B]\none: C\nbad: twelve\n"
      "sub: {k: 7}\n");
  MapReader r = OpenOk(f, n, {"i", "neg", "x", "b", "d", "s", "l", "one", "bad", "sub"});
  int i = 0;
  ASSERT_TRUE(r.Int("i", &i, 0).ok());
  EXPECT_EQ(i, 42);
  int64_t missing = 9;
  ASSERT_TRUE(r.Int("absent", &missing, 0).ok());
  EXPECT_EQ(missing, 9);  // absent fields leave the default
  EXPECT_EQ(r.Int("neg", &i, 0).message(),
            "t.yaml:2: thing 'x': field 'neg': expected an integer >= 0, found '-3'");
  EXPECT_EQ(r.Int("i", &i, 1, 10).message(),
            "t.yaml:1: thing 'x': field 'i': expected an integer in [1, 10], found '42'");
  // An integer beyond an int's range: the bound the short form leaves unsaid is named.
  auto huge = YAML::Load("n: 2147483648\n");
  MapReader h = OpenOk(f, huge, {"n"});
  EXPECT_EQ(h.Int("n", &i, 0).message(),
            "t.yaml:1: thing 'x': field 'n': expected an integer in [0, 2147483647], found "
            "'2147483648'");
  double x = 0;
  ASSERT_TRUE(r.Number("x", &x, 0, 1, true).ok());
  EXPECT_EQ(x, 0.5);
  EXPECT_EQ(r.Number("bad", &x, 0, 1, true).message(),
            "t.yaml:9: thing 'x': field 'bad': expected a number in (0, 1], found 'twelve'");
  bool b = false;
  ASSERT_TRUE(r.Bool("b", &b).ok());
  EXPECT_TRUE(b);
  EXPECT_THAT(r.Bool("s", &b).message(), HasSubstr("expected true or false, found 'hello'"));
  DurationMs d = 0;
  ASSERT_TRUE(r.Duration("d", &d).ok());
  EXPECT_EQ(d, 90 * kMinute);
  EXPECT_THAT(r.Duration("l", &d).message(),
              HasSubstr("field 'l': expected a duration such as 90s"));
  EXPECT_THAT(r.Duration("l", &d).message(), HasSubstr("found a list"));
  std::string s;
  ASSERT_TRUE(r.String("s", &s).ok());
  EXPECT_EQ(s, "hello");
  EXPECT_THAT(r.String("sub", &s).message(),
              HasSubstr("expected a non-empty string, found a mapping"));
  std::vector<std::pair<std::string, int>> names;
  ASSERT_TRUE(r.StringList("l", &names).ok());
  ASSERT_TRUE(r.StringList("one", &names).ok());
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[2].first, "C");
  EXPECT_EQ(names[2].second, 8);
  auto sub = r.Sub("sub", {"k"});
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->Int("k", &i, 10).message(),
            "t.yaml:10: thing 'x': field 'sub.k': expected an integer >= 10, found '7'");
  EXPECT_EQ(r.Missing("z").message(), "t.yaml:1: thing 'x': missing required field 'z'");
}

TEST(FindGpuTypeTest, SuggestsAndListsKnownTypes) {
  const GpuCatalog& c = GpuCatalog::Builtin();
  ASSERT_TRUE(FindGpuType(c, "h100").ok());
  auto bad = FindGpuType(c, "H10");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("found 'H10'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("known: H200, H100"));
  EXPECT_THAT(bad.status().message(), HasSubstr("did you mean"));
}

}  // namespace
}  // namespace airtime::yaml_internal
