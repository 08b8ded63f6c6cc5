#include "airtime/report/replay_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "airtime/html/svg_chart.h"
#include "airtime/sim/report.h"

namespace airtime {
namespace {

std::string Fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string Percent(double share) { return Fmt("%.1f%%", 100 * share); }

// Each bucket's colour: work in greens, held-but-idle in yellow, waste in reds and purples,
// capacity kept or left free in blues and greys.
const char* BucketColor(Bucket b) {
  switch (b) {
    case Bucket::kUseful:
      return "#2ca02c";
    case Bucket::kIdleHeld:
      return "#e6c229";
    case Bucket::kLowValueBusy:
      return "#ff7f0e";
    case Bucket::kLost:
      return "#d62728";
    case Bucket::kStranded:
      return "#9467bd";
    case Bucket::kReservedHeadroom:
      return "#1f77b4";
    case Bucket::kFreeNoDemand:
      return "#c7c7c7";
    case Bucket::kBlocked:
      return "#e377c2";
    case Bucket::kDown:
      return "#555555";
    case Bucket::kForeign:
      return "#8c564b";
  }
  return "#000000";
}

bool HasServices(const std::vector<SimResult>& results) {
  return std::any_of(results.begin(), results.end(),
                     [](const SimResult& r) { return r.metrics.requests > 0; });
}

void ReturnSection(HtmlPage& page, const std::vector<SimResult>& results, double bound) {
  page.Heading(3, "Return and SLO per policy");
  std::vector<std::string> header = {"policy", "return / installed GPU-h"};
  if (bound > 0) header.push_back("% of bound");
  for (const char* h : {"value", "cost", "margin", "allocation rate", "realtime SLO attainment",
                        "batch deadlines met", "preemptions"})
    header.push_back(h);
  std::vector<std::vector<std::string>> rows;
  for (const SimResult& r : results) {
    std::vector<std::string> row = {r.policy, Fmt("%.3f", r.return_per_gpu_hour())};
    if (bound > 0) row.push_back(PercentOfBound(r.return_per_gpu_hour(), bound));
    row.push_back(Fmt("%.1f", r.metrics.value));
    row.push_back(Fmt("%.1f", r.costs.cost));  // every installed GPU-hour at its type's rate
    row.push_back(Fmt("%.1f", r.costs.margin));
    row.push_back(Percent(r.allocation_rate()));
    row.push_back(Fmt("%.2f%%", 100 * r.metrics.slo_attainment));
    row.push_back(Percent(r.metrics.deadline_hit_rate));
    row.push_back(std::to_string(r.metrics.preemptions));
    rows.push_back(std::move(row));
  }
  page.Table(header, rows);
  BarChart ret;
  ret.title = "return per installed GPU-hour, per policy";
  for (const SimResult& r : results) {
    ret.categories.push_back(r.policy);
    ret.values.push_back({r.return_per_gpu_hour()});
  }
  ret.format = [](double v) { return Fmt("%.3f", v); };
  page.Figure(RenderBarChart(ret),
              bound > 0 ? "Return per installed GPU-hour (value / installed GPU-hours). The LP "
                          "bound: " +
                              Fmt("%.3f", bound) + "."
                        : "Return per installed GPU-hour (value / installed GPU-hours).");
  if (!HasServices(results)) return;
  BarChart slo;
  slo.title = "realtime SLO attainment, per policy";
  for (const SimResult& r : results) {
    slo.categories.push_back(r.policy);
    slo.values.push_back({100 * r.metrics.slo_attainment});
  }
  slo.format = [](double v) { return Fmt("%.2f%%", v); };
  page.Figure(RenderBarChart(slo),
              "Realtime SLO attainment: the share of requests served within the SLO (%).");
}

void LedgerSection(HtmlPage& page, const std::vector<SimResult>& results) {
  page.Heading(3, "Where the installed GPU-hours went (the ledger)");
  StackedBarChart chart;
  chart.title = "ledger per policy, share of installed GPU-hours";
  std::vector<Bucket> shown;
  for (int b = 0; b < kBucketCount; ++b) {
    const auto bucket = static_cast<Bucket>(b);
    if (std::any_of(results.begin(), results.end(), [&](const SimResult& r) {
          return r.ledger.milli_ms[static_cast<size_t>(b)] > 0;
        }))
      shown.push_back(bucket);
  }
  for (Bucket b : shown) {
    chart.segments.push_back(BucketName(b));
    chart.colors.push_back(BucketColor(b));
  }
  std::vector<std::vector<std::string>> rows;
  for (const SimResult& r : results) {
    chart.rows.push_back(r.policy);
    std::vector<double> v;
    std::vector<std::string> row = {r.policy};
    const double inst = r.ledger.installed_gpu_hours();
    for (Bucket b : shown) {
      v.push_back(r.ledger.gpu_hours(b));
      row.push_back(Percent(inst > 0 ? r.ledger.gpu_hours(b) / inst : 0));
    }
    row.push_back(Fmt("%.0f", inst));
    chart.values.push_back(std::move(v));
    rows.push_back(std::move(row));
  }
  chart.format = [](double share) { return Percent(share); };
  page.Figure(RenderStackedBars(chart),
              "Every installed GPU-hour in one bucket (docs/report-format.md describes each); "
              "buckets empty under every policy are left out.");
  std::vector<std::string> header = {"policy"};
  header.insert(header.end(), chart.segments.begin(), chart.segments.end());
  header.push_back("installed GPU-hours");
  page.Table(header, rows);
}

void TimelineSection(HtmlPage& page, const std::vector<SimResult>& results) {
  if (std::all_of(results.begin(), results.end(),
                  [](const SimResult& r) { return r.timeline.empty(); }))
    return;
  page.Heading(3, "Allocation and queue over time");
  LineChart alloc, queue;
  alloc.title = "allocation over time, per policy";
  alloc.x_label = queue.x_label = "hours since the start";
  alloc.y_label = "allocated (% of installed GPUs)";
  alloc.y_min = 0;
  alloc.y_max = 100;
  alloc.x_min = queue.x_min = 0;
  queue.title = "workloads waiting over time, per policy";
  queue.y_label = "workloads waiting";
  queue.y_min = 0;
  DurationMs step = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const SimResult& r = results[i];
    step = std::max(step, r.timeline_step);
    LineSeries a{r.policy, {}, false, i}, q{r.policy, {}, false, i};
    for (const TimelinePoint& p : r.timeline) {
      const double x = (static_cast<double>(p.start) + static_cast<double>(p.covered) / 2) /
                       static_cast<double>(kHour);
      a.points.emplace_back(x, 100 * p.allocation);
      q.points.emplace_back(x, p.waiting);
    }
    alloc.series.push_back(std::move(a));
    queue.series.push_back(std::move(q));
  }
  const std::string every = FormatDuration(step);
  page.Figure(RenderLineChart(alloc),
              "GPU capacity held by work, as the allocation rate counts it (work later lost to a "
              "preemption included), "
              "averaged over intervals of " +
                  every + ".");
  page.Figure(RenderLineChart(queue),
              "Workloads waiting to start, averaged over intervals of " + every + ".");
}

void DelaySection(HtmlPage& page, const std::vector<SimResult>& results) {
  std::vector<int> kinds;
  for (int k = 0; k < kWorkloadKindCount; ++k)
    if (std::any_of(results.begin(), results.end(), [&](const SimResult& r) {
          return r.metrics.kinds[static_cast<size_t>(k)].submitted > 0;
        }))
      kinds.push_back(k);
  if (kinds.empty()) return;
  page.Heading(3, "Queueing delay per kind");
  BarChart chart;
  chart.title = "p99 queueing delay per kind and policy (minutes)";
  for (const SimResult& r : results) chart.groups.push_back(r.policy);
  std::vector<std::string> header = {"kind"};
  for (const SimResult& r : results) header.push_back(r.policy);
  std::vector<std::vector<std::string>> rows;
  for (int k : kinds) {
    chart.categories.push_back(KindName(static_cast<WorkloadKind>(k)));
    std::vector<double> v;
    std::vector<std::string> row = {KindName(static_cast<WorkloadKind>(k))};
    for (const SimResult& r : results) {
      const Percentiles p =
          ComputePercentiles(r.metrics.kinds[static_cast<size_t>(k)].queue_delay_s);
      v.push_back(p.count > 0 ? p.p99 / 60 : std::nan(""));
      row.push_back(p.count > 0 ? Fmt("%.0f", p.p50 / 60) + " / " + Fmt("%.0f", p.p99 / 60)
                                : std::string("-"));
    }
    chart.values.push_back(std::move(v));
    rows.push_back(std::move(row));
  }
  chart.format = [](double v) { return Fmt("%.1f", v); };
  page.Figure(RenderBarChart(chart),
              "The 99th percentile of the time from submission to first start, in minutes (work "
              "never started is counted to the end): the tail that the median hides.");
  page.Paragraph("Queueing delay p50 / p99 in minutes:");
  page.Table(header, rows);
}

}  // namespace

void AddReplaySections(HtmlPage& page, const std::vector<SimResult>& results,
                       double bound_per_gpu_hour) {
  if (results.empty()) return;
  ReturnSection(page, results, bound_per_gpu_hour);
  LedgerSection(page, results);
  TimelineSection(page, results);
  DelaySection(page, results);
}

}  // namespace airtime
