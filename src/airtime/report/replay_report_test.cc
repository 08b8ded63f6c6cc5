#include "airtime/report/replay_report.h"

#include <gtest/gtest.h>

#include <string>

#include "airtime/html/xml_check.h"

namespace airtime {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

// A replay of `policy` over 10 GPUs for 10 hours: `useful` GPU-hours useful, the rest free.
SimResult Result(const std::string& policy, double value, double useful_gpu_hours) {
  SimResult r;
  r.policy = policy;
  r.end = 10 * kHour;
  r.ledger.installed_milli_ms = 10LL * 1000 * 10 * kHour;
  const auto useful = static_cast<int64_t>(useful_gpu_hours * 3.6e9);
  r.ledger.milli_ms[static_cast<size_t>(Bucket::kUseful)] = useful;
  r.ledger.milli_ms[static_cast<size_t>(Bucket::kFreeNoDemand)] =
      r.ledger.installed_milli_ms - useful;
  r.metrics.value = value;
  r.costs.cost = 80;  // 100 GPU-hours at 0.80
  r.costs.margin = value - 80;
  r.metrics.requests = 100;
  r.metrics.requests_in_slo = 95;
  r.metrics.slo_attainment = 0.95;
  r.metrics.kinds[static_cast<size_t>(WorkloadKind::kBatch)].submitted = 2;
  r.metrics.kinds[static_cast<size_t>(WorkloadKind::kBatch)].queue_delay_s = {60, 600};
  r.timeline_step = kHour;
  for (int h = 0; h < 10; ++h)
    r.timeline.push_back({h * kHour, kHour, useful_gpu_hours / 100, static_cast<double>(h % 3)});
  return r;
}

TEST(ReplayReport, ChartsPerPolicyWithTheirValuesEscaped) {
  const std::vector<SimResult> results = {
      Result("fifo", 120, 40), Result("<b>airtime</b>", 150, 60), Result("bestfit", 110, 30)};
  HtmlPage page("test");
  AddReplaySections(page, results, 2.0);
  const std::string html = page.Render();
  const Status st = CheckWellFormedXml(html);
  ASSERT_TRUE(st.ok()) << st.message();
  // Return, SLO, ledger, allocation, queue and delay: six charts.
  EXPECT_EQ(Count(html, "<svg"), 6u);
  // The return and SLO charts: one bar per policy each; the delay chart one per policy
  // (batch is the only kind with work).
  EXPECT_EQ(Count(html, "<rect class=\"bar\""), 3u * 3);
  // The ledger: one bar per policy, each with its useful and free parts.
  EXPECT_EQ(Count(html, "<rect class=\"segment\""), 3u * 2);
  // The time charts: one line per policy each.
  EXPECT_EQ(Count(html, "<polyline"), 3u * 2);
  // Return per installed GPU-hour: value / 100 installed GPU-hours; 1.5 is 75% of the bound.
  for (const char* v :
       {"1.200", "1.500", "1.100", "75.0%", "95.00%", "useful", "free_no_demand", "40.0%", "60.0%",
        "1 / 10", "<th>cost</th>", "<th>margin</th>", "80.0", "70.0"})
    EXPECT_NE(html.find(v), std::string::npos) << v;
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;airtime&lt;/b&gt;"), std::string::npos);
}

TEST(ReplayReport, NoServicesNoSloChartAndNoTimelineNoTimeCharts) {
  SimResult r = Result("fifo", 100, 50);
  r.metrics.requests = 0;
  r.timeline.clear();
  HtmlPage page("test");
  AddReplaySections(page, {r});
  const std::string html = page.Render();
  EXPECT_EQ(Count(html, "<svg"), 3u);  // return, ledger, delay
  EXPECT_EQ(html.find("SLO attainment, per policy"), std::string::npos);
  EXPECT_EQ(html.find("% of bound"), std::string::npos);
}

}  // namespace
}  // namespace airtime
