#include "airtime/cli/output_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace airtime {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(OutputFormat, ParsesTheFiveFormatsAndNamesABadOne) {
  EXPECT_EQ(*ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("wide"), OutputFormat::kWide);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("yaml"), OutputFormat::kYaml);
  EXPECT_EQ(*ParseOutputFormat("name"), OutputFormat::kName);
  auto bad = ParseOutputFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'xml'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("table wide json yaml name"));
}

// YAML read back gives the same document: strings that YAML would take for a number, a
// boolean or null stay strings, and nesting, nulls and numbers survive.
TEST(OutputFormat, YamlReadsBackAsTheSameDocument) {
  const json doc = {{"workloads",
                     {{{"id", 12},
                       {"name", "yes"},
                       {"reason", "waits: for 4 x H100\n# not a comment"},
                       {"priority", -3},
                       {"demand_rps", 12.5},
                       {"gpus", json::array({"GPU-1", "1e3"})},
                       {"started_at", nullptr},
                       {"fake", true}}}},
                    {"empty", json::array()}};
  const std::string yaml = JsonToYaml(doc);
  YAML::Node back = YAML::Load(yaml);
  const YAML::Node w = back["workloads"][0];
  EXPECT_EQ(w["id"].as<int>(), 12);
  EXPECT_EQ(w["name"].Tag(), "!");  // quoted: a string, not the boolean
  EXPECT_EQ(w["name"].as<std::string>(), "yes");
  EXPECT_EQ(w["reason"].as<std::string>(), "waits: for 4 x H100\n# not a comment");
  EXPECT_EQ(w["priority"].as<int>(), -3);
  EXPECT_DOUBLE_EQ(w["demand_rps"].as<double>(), 12.5);
  EXPECT_EQ(w["gpus"][1].as<std::string>(), "1e3");
  EXPECT_EQ(w["gpus"][1].Tag(), "!");
  EXPECT_TRUE(w["started_at"].IsNull());
  EXPECT_TRUE(w["fake"].as<bool>());
  EXPECT_TRUE(back["empty"].IsSequence());
  EXPECT_EQ(back["empty"].size(), 0u);
  EXPECT_EQ(yaml.back(), '\n');
}

TEST(OutputFormat, NamesOfAListOrOfOneObject) {
  const json list = {{"workloads", {{{"name", "a"}}, {{"id", 3}}, {{"name", "b"}}}}};
  EXPECT_EQ(NamesOf(list, "workloads", "name"), "a\nb\n");
  EXPECT_EQ(NamesOf(json{{"name", "one"}, {"id", 1}}, "workloads", "name"), "one\n");
  EXPECT_EQ(NamesOf(json{{"gpus", {{{"uuid", "GPU-0"}}}}}, "gpus", "uuid"), "GPU-0\n");
  EXPECT_EQ(NamesOf(json::array(), "workloads", "name"), "");
}

}  // namespace
}  // namespace airtime
