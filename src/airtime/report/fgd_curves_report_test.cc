#include "airtime/report/fgd_curves_report.h"

#include <gtest/gtest.h>

#include <cmath>

#include "airtime/html/xml_check.h"

namespace airtime {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

FgdPolicyReport Policy(const std::string& name, double slope) {
  FgdPolicyReport p;
  p.policy = name;
  for (int b = 0; b < kFgdBins; ++b)
    p.mean.used[static_cast<size_t>(b)] = std::min(b * slope, 90.0);
  p.mean.used[3] = NAN;  // no arrival in that bin
  p.seeds.resize(2);
  p.pods_failed = 10;
  return p;
}

FgdPublishedCurve Published(const std::string& policy, uint64_t seed, double slope) {
  FgdPublishedCurve c;
  c.workload = "openb_pod_list_default";
  c.policy = policy;
  c.seed = seed;
  for (int b = 0; b < kFgdBins; ++b) c.used.push_back(std::min(b * slope, 88.0));
  return c;
}

TEST(FgdCurvesReport, MeasuredBesidePublishedPerPolicy) {
  FgdReport report;
  report.capacity_milli = 6212000;
  report.original_pods = 8152;
  report.policies = {Policy("bestfit", 0.85), Policy("fgd", 0.95), Policy("<x>", 0.5)};
  const std::vector<FgdPublishedCurve> published = {
      Published("05-BestFit", 42, 0.84), Published("05-BestFit", 43, 0.86),
      Published("06-FGD", 42, 0.9), Published("06-FGD", 42, 0.9)};
  // Another pod list's curve is not drawn.
  std::vector<FgdPublishedCurve> with_other = published;
  with_other.push_back(Published("06-FGD", 42, 0.1));
  with_other.back().workload = "openb_pod_list_gpushare40";
  HtmlPage page("fgd");
  AddFgdSections(page, report, &with_other, "openb_pod_list_default", "");
  const std::string html = page.Render();
  const Status st = CheckWellFormedXml(html);
  ASSERT_TRUE(st.ok()) << st.message();
  // The whole range, and from 80% arrived.
  EXPECT_EQ(Count(html, "<svg"), 2u);
  // Three measured curves (each broken at bin 3: two runs, then one from 80%) and two
  // published (dashed) in each.
  EXPECT_EQ(Count(html, "<polyline"), (3u * 2 + 2) + (3 + 2));
  EXPECT_EQ(Count(html, "stroke-dasharray"), 2u * 2 * 2);  // lines and legend marks
  EXPECT_NE(html.find("bestfit (published 05-BestFit)"), std::string::npos);
  // @100: bestfit 85.00 measured, 85.00 published (the mean of 84 and 86).
  EXPECT_NE(html.find("<td>bestfit</td><td class=\"n\">42.50</td><td class=\"n\">68.00</td>"
                      "<td class=\"n\">85.00</td><td class=\"n\">85.00</td>"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;x&gt;"), std::string::npos);
  EXPECT_NE(html.find(">5.0<"), std::string::npos);  // pods failed per seed: 10 / 2
}

TEST(FgdCurvesReport, WithoutPublishedFiguresSaysWhy) {
  FgdReport report;
  report.policies = {Policy("fgd", 0.9)};
  HtmlPage page("fgd");
  AddFgdSections(page, report, nullptr, "w", "cannot open /x/<y>.csv");
  const std::string html = page.Render();
  EXPECT_EQ(Count(html, "stroke-dasharray"), 0u);
  EXPECT_NE(html.find("No published curve to compare with: cannot open /x/&lt;y&gt;.csv"),
            std::string::npos);
}

}  // namespace
}  // namespace airtime
