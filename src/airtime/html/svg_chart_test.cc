#include "airtime/html/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "airtime/html/xml_check.h"

namespace airtime {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

void ExpectWellFormed(const std::string& svg) {
  const Status st = CheckWellFormedXml(svg);
  EXPECT_TRUE(st.ok()) << st.message() << "\n" << svg;
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
}

TEST(NiceTicks, RoundStepsCoveringTheRange) {
  EXPECT_EQ(NiceTicks(0, 100, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(NiceTicks(0, 1.7, 4), (std::vector<double>{0, 0.5, 1, 1.5, 2}));
  EXPECT_EQ(NiceTicks(-3, 7, 5), (std::vector<double>{-4, -2, 0, 2, 4, 6, 8}));
  EXPECT_EQ(NiceTicks(2, 2, 5), std::vector<double>{2});
  EXPECT_EQ(NiceTicks(0, NAN, 5).size(), 1u);
}

TEST(FormatNumber, FourSignificantDigits) {
  EXPECT_EQ(FormatNumber(1.5), "1.5");
  EXPECT_EQ(FormatNumber(1234.56), "1235");
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(NAN), "-");
}

TEST(BarChart, OneBarPerValueWithItsLabel) {
  BarChart c;
  c.title = "return";
  c.categories = {"fifo", "bestfit", "airtime"};
  c.values = {{1.457}, {1.329}, {1.535}};
  const std::string svg = RenderBarChart(c);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "<rect class=\"bar\""), 3u);
  for (const char* v : {"1.457", "1.329", "1.535", ">fifo<", ">bestfit<", ">airtime<"})
    EXPECT_NE(svg.find(v), std::string::npos) << v;
  // The longest bar is airtime's, and bars start at zero (the same x).
  std::regex bar("<rect class=\"bar\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"");
  std::vector<double> xs, widths;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator();
       ++it) {
    xs.push_back(std::stod((*it)[1]));
    widths.push_back(std::stod((*it)[2]));
  }
  ASSERT_EQ(widths.size(), 3u);
  EXPECT_EQ(xs[0], xs[2]);
  EXPECT_GT(widths[2], widths[0]);
  EXPECT_GT(widths[0], widths[1]);
  EXPECT_NEAR(widths[2] / widths[1], 1.535 / 1.329, 0.01);
}

TEST(BarChart, GroupsHaveALegendAndNaNHasNoBar) {
  BarChart c;
  c.categories = {"batch", "training"};
  c.groups = {"fifo", "airtime"};
  c.values = {{3, 1}, {NAN, 2}};
  const std::string svg = RenderBarChart(c);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "<rect class=\"bar\""), 3u);
  EXPECT_NE(svg.find("class=\"legend\""), std::string::npos);
}

TEST(StackedBars, OneRowPerPolicyDividedInProportion) {
  StackedBarChart c;
  c.rows = {"fifo", "airtime"};
  c.segments = {"useful", "idle_held", "free_no_demand"};
  c.colors = {"#2ca02c", "#e6c229", "#c7c7c7"};
  c.values = {{30, 10, 60}, {50, 0, 50}};
  c.format = [](double share) { return FormatNumber(100 * share) + "%"; };
  const std::string svg = RenderStackedBars(c);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "<rect class=\"segment\""), 5u);  // a zero part has none
  for (const char* v : {">30%<", ">60%<", ">50%<", "fifo, useful: 30%", "#c7c7c7"})
    EXPECT_NE(svg.find(v), std::string::npos) << v;
  // Each row's segments fill the same width.
  std::regex seg("<rect class=\"segment\" x=\"[0-9.]+\" y=\"([0-9.]+)\" width=\"([0-9.]+)\"");
  std::map<std::string, double> width;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), seg); it != std::sregex_iterator();
       ++it)
    width[(*it)[1]] += std::stod((*it)[2]);
  ASSERT_EQ(width.size(), 2u);
  EXPECT_NEAR(width.begin()->second, width.rbegin()->second, 0.5);
}

TEST(LineChart, OnePolylinePerUnbrokenRunAndEscapedNames) {
  LineChart c;
  c.title = "allocation";
  c.series.push_back({"fifo", {{0, 10}, {1, 20}, {2, 30}}, false, 0});
  c.series.push_back({"<evil>", {{0, 5}, {1, NAN}, {2, 7}, {3, 8}}, true, 1});
  c.y_min = 0;
  c.y_max = 100;
  const std::string svg = RenderLineChart(c);
  ExpectWellFormed(svg);
  // fifo: one run; <evil>: a lone point (no line), then a run of two.
  EXPECT_EQ(Count(svg, "<polyline"), 2u);
  EXPECT_EQ(Count(svg, "stroke-dasharray"), 2u);  // its line and its legend mark
  EXPECT_NE(svg.find("&lt;evil&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<evil>"), std::string::npos);
  EXPECT_NE(svg.find(">100<"), std::string::npos);  // the fixed axis' top tick
}

TEST(Charts, LongNamesAreCutWithTheFullNameAsATooltip) {
  BarChart c;
  const std::string name = "kai:preempt_min_runtime=30m:reclaim=true";
  c.categories = {name};
  c.values = {{1}};
  const std::string svg = RenderBarChart(c);
  ExpectWellFormed(svg);
  EXPECT_NE(svg.find("<title>" + name + "</title>"), std::string::npos);
  EXPECT_NE(svg.find("\xE2\x80\xA6"), std::string::npos);
}

}  // namespace
}  // namespace airtime
