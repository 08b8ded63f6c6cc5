#include "airtime/config/yaml_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "airtime/config/cluster_yaml.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/config/yaml_reader.h"

namespace airtime::yaml_internal {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A one-byte text "," made yaml-cpp's LoadAll build null documents forever (issue 19: the
// simulator and the daemon grew without bound). It is now a syntax error from libyaml.
TEST(YamlBudgetTest, LoneCommaIsASyntaxErrorNotAnEndlessStream) {
  for (const std::string text : {",", ",\n", "a: 1\n---\n,", " ,x"}) {
    auto w = ParseWorkloadYaml(text, "w.yaml");
    ASSERT_FALSE(w.ok()) << text;
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(w.status().message(), StartsWith("w.yaml:"));
    EXPECT_THAT(w.status().message(), HasSubstr("YAML syntax error"));
    auto c = ParseClusterYaml(text, "c.yaml");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_THAT(c.status().message(), HasSubstr("YAML syntax error"));
  }
  auto docs = YamlFile("x.yaml").LoadAll(",");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().message(),
            "x.yaml:1: YAML syntax error: did not find expected node content at column 1 "
            "(while parsing a block node)");
}

TEST(YamlBudgetTest, MeasuresDocumentsNodesAndDepth) {
  auto s = CheckYamlBudget("a: [1, 2]\n---\n- {b: c}\n", "m.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->documents, 2u);
  EXPECT_EQ(s->nodes, 9u);  // {a, [1, 2]} = 5; [{b: c}] = 4
  EXPECT_EQ(s->depth, 2);
  auto empty = CheckYamlBudget("# only a comment\n", "e.yaml");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->documents, 0u);
}

TEST(YamlBudgetTest, BytesOverTheLimit) {
  YamlBudget b;
  b.max_bytes = 8;
  EXPECT_EQ(CheckYamlBudget("a: 123456\n", "f.yaml", b).status().message(),
            "f.yaml: YAML too large: 10 bytes (the limit is 8)");
}

TEST(YamlBudgetTest, DeepNestingIsRefusedAtTheLineItPasses) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  auto s = CheckYamlBudget(deep, "d.yaml");
  EXPECT_EQ(s.status().message(),
            "d.yaml:1: YAML too large: more than 64 nested levels (the limit is 64)");
  std::string ok(64, '[');
  ok += std::string(64, ']');
  EXPECT_TRUE(CheckYamlBudget(ok, "d.yaml").ok());
  // Block nesting counts the same way; the loaders refuse it too.
  std::string block;
  for (int i = 0; i < 70; ++i) block += std::string(i * 2, ' ') + "k:\n";
  EXPECT_THAT(ParseWorkloadYaml(block, "w.yaml").status().message(),
              HasSubstr("more than 64 nested levels"));
  // 60,000 levels (the depth that crashed the JSON path) is refused, not recursed into.
  EXPECT_THAT(ParseWorkloadYaml(std::string(60000, '['), "w.yaml").status().message(),
              HasSubstr("more than 64 nested levels"));
}

// "Billion laughs": nine lists of nine aliases of the list before. Nothing expands aliases at
// parse time, but anything that walks the tree would; the node budget counts each alias at
// the size of what it names, so the bomb is refused on its fourth line.
TEST(YamlBudgetTest, AliasBombIsOverTheNodeBudget) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", *" : "*") + prev;
    bomb += "]\n";
  }
  auto s = CheckYamlBudget(bomb, "bomb.yaml");
  EXPECT_THAT(s.status().message(),
              StartsWith("bomb.yaml:7: YAML too large: more than 1000000 nodes"));
  EXPECT_THAT(ParseWorkloadYaml(bomb, "bomb.yaml").status().message(), HasSubstr("YAML too large"));
  // A few aliases, as a real file uses them, pass.
  EXPECT_TRUE(CheckYamlBudget("d: &d {gpus: 1}\nx: *d\ny: *d\n", "ok.yaml").ok());
}

TEST(YamlBudgetTest, AliasCountDocumentsAndScalarLength) {
  YamlBudget b;
  b.max_aliases = 2;
  EXPECT_THAT(CheckYamlBudget("d: &d 1\nx: [*d, *d, *d]\n", "a.yaml", b).status().message(),
              StartsWith("a.yaml:2: YAML too large: more than 2 aliases"));
  b = {};
  b.max_documents = 3;
  EXPECT_THAT(CheckYamlBudget("a\n---\nb\n---\nc\n---\nd\n", "m.yaml", b).status().message(),
              StartsWith("m.yaml:6: YAML too large: more than 3 documents"));
  b = {};
  b.max_scalar_bytes = 4;
  EXPECT_THAT(CheckYamlBudget("a: 12345\n", "s.yaml", b).status().message(),
              StartsWith("s.yaml:1: YAML too large: a scalar of 5 bytes"));
}

TEST(YamlBudgetTest, AliasWithoutAnchorAndSelfReferenceAreErrors) {
  EXPECT_THAT(CheckYamlBudget("x: *nope\n", "u.yaml").status().message(),
              HasSubstr("u.yaml:1: YAML syntax error: alias '*nope' names no anchor"));
  // A list that contains itself would make any walk of the tree endless.
  EXPECT_THAT(CheckYamlBudget("x: &a [1, *a]\n", "r.yaml").status().message(),
              HasSubstr("alias '*a' names no anchor"));
  // Named again, an anchor's alias inside its new node means the earlier node in YAML, and
  // the node itself to yaml-cpp: refused rather than read either way.
  EXPECT_THAT(CheckYamlBudget("a: &x {g: 1}\nb: &x {c: *x}\n", "n.yaml").status().message(),
              HasSubstr("n.yaml:2: alias '*x' inside the node anchored '&x' again"));
  EXPECT_TRUE(CheckYamlBudget("a: &x {g: 1}\nb: &x {c: 2}\nd: *x\n", "n.yaml").ok());
}

TEST(YamlBudgetTest, InvalidUtf8AndNulAreSyntaxErrors) {
  EXPECT_THAT(CheckYamlBudget("name: \xff\xfe\n", "u.yaml").status().message(),
              HasSubstr("u.yaml:1: YAML syntax error: invalid"));
  EXPECT_THAT(CheckYamlBudget(std::string("name: a\0b\n", 10), "n.yaml").status().message(),
              HasSubstr("n.yaml:1: YAML syntax error: control characters are not allowed"));
}

// Issue 19: NUL bytes in names, args, env or workdir were silently cut. An escaped NUL in any
// YAML or JSON value is refused where it is written.
TEST(YamlBudgetTest, EscapedNulInAnyValueIsRefused) {
  for (const std::string text :
       {"name: \"a\\0b\"\n", "- {name: x, command: [\"/bin/echo\", \"a\\x00b\"]}\n",
        "{\"name\": \"j\", \"env\": {\"K\": \"v\\u0000w\"}}"}) {
    auto w = ParseWorkloadYaml(text, "request");
    ASSERT_FALSE(w.ok()) << text;
    EXPECT_THAT(w.status().message(), StartsWith("request:1: a value holds a NUL byte")) << text;
  }
  EXPECT_TRUE(CheckYamlBudget("name: \"a\\tb\"\n", "ok.yaml").ok());
}

}  // namespace
}  // namespace airtime::yaml_internal
