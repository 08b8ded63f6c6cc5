#include "airtime/report/fgd_curves_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "airtime/html/svg_chart.h"

namespace airtime {
namespace {

std::string Fmt(double v) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string Fmt1(double v) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

}  // namespace

void AddFgdSections(HtmlPage& page, const FgdReport& report,
                    const std::vector<FgdPublishedCurve>* published, const std::string& workload,
                    const std::string& published_note) {
  const size_t seeds = report.policies.empty() ? 0 : report.policies.front().seeds.size();
  page.Heading(3, "GPU allocation against arrived demand");
  page.Paragraph(std::to_string(report.original_pods) + " pods on " +
                 std::to_string(report.capacity_milli / 1000) + " GPUs, " + std::to_string(seeds) +
                 " seed(s); each pod arrives once and is cancelled if it cannot start.");
  // Measured and published curves per policy, in the policy's colour (published dashed).
  LineChart chart;
  chart.title = "GPU allocation ratio against arrived demand, measured and published";
  chart.x_label = "arrived GPU demand (% of capacity)";
  chart.y_label = "GPUs allocated (% of capacity)";
  chart.x_min = 0;
  chart.x_max = kFgdBins - 1;
  chart.y_min = 0;
  chart.y_max = 100;
  std::vector<std::vector<std::string>> rows;
  bool any_published = false;
  for (size_t i = 0; i < report.policies.size(); ++i) {
    const FgdPolicyReport& p = report.policies[i];
    LineSeries measured{p.policy, {}, false, i};
    for (int b = 0; b < kFgdBins; ++b) measured.points.emplace_back(b, p.mean.at(b));
    chart.series.push_back(std::move(measured));
    const std::string pub = FgdPublishedPolicy(p.policy);
    double pub100 = NAN, pub130 = NAN;
    if (published != nullptr && !pub.empty()) {
      LineSeries line{p.policy + " (published " + pub + ")", {}, true, i};
      bool found = false;
      for (int b = 0; b < kFgdBins; ++b) {
        const double v = FgdPublishedMean(*published, workload, pub, b);
        found |= std::isfinite(v);
        line.points.emplace_back(b, v);
      }
      if (found) {
        any_published = true;
        pub100 = FgdPublishedMean(*published, workload, pub, 100);
        pub130 = FgdPublishedMean(*published, workload, pub, 130);
        chart.series.push_back(std::move(line));
      }
    }
    rows.push_back(
        {p.policy, Fmt(p.mean.at(50)), Fmt(p.mean.at(80)), Fmt(p.mean.at(100)), Fmt(pub100),
         Fmt(p.mean.at(130)), Fmt(pub130),
         Fmt1(seeds > 0 ? static_cast<double>(p.pods_failed) / static_cast<double>(seeds) : NAN)});
  }
  const std::string svg = RenderLineChart(chart);
  // The same curves from 80% of capacity on, where the policies part: below it every pod
  // fits and every curve is the diagonal.
  chart.title += ", from 80% arrived";
  chart.x_min = 80;
  chart.y_min.reset();
  chart.y_max.reset();
  for (LineSeries& s : chart.series)
    s.points.erase(s.points.begin(), s.points.begin() + std::min<size_t>(80, s.points.size()));
  page.Figure(svg,
              any_published
                  ? "Solid: measured here (mean over the seeds); dashed: the published curve of "
                    "the same policy (Weng et al., ATC'23; mean over its seeds)."
                  : "Measured here (mean over the seeds).");
  page.Figure(RenderLineChart(chart),
              "The same from 80% of capacity arrived, where the policies part (the vertical axis "
              "fits the curves).");
  if (!any_published) page.Paragraph("No published curve to compare with: " + published_note);
  page.Table({"policy", "@50%", "@80%", "@100%", "published @100%", "@130%", "published @130%",
              "pods failed per seed"},
             rows);
}

}  // namespace airtime
