#include "airtime/html/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "airtime/html/escape.h"

namespace airtime {
namespace {

constexpr double kWidth = 760;
constexpr double kLabelWidth = 170;  // bar charts' category column
constexpr size_t kLabelChars = 26;   // longer names are cut (the full name is in a tooltip)
constexpr double kLegendColumn = 185;
constexpr double kLegendRow = 18;
constexpr int kLegendPerRow = 4;

std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// `<text ...>label<title>full</title></text>`: a cut label keeps its full text as a tooltip.
std::string Label(double x, double y, const std::string& text, const char* anchor,
                  const std::string& extra = "") {
  const std::string shown = Abbreviate(text, kLabelChars);
  std::string out = "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor +
                    "\"" + extra + ">" + EscapeText(shown);
  if (shown != text) out += "<title>" + EscapeText(text) + "</title>";
  return out + "</text>";
}

std::string Open(double height, const std::string& title) {
  return "<svg class=\"chart\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(height) + "\" width=\"" +
         Num(kWidth) + "\" height=\"" + Num(height) +
         "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\"><title>" + EscapeText(title) +
         "</title>";
}

// The legend's rows for `n` entries.
int LegendRows(size_t n) { return static_cast<int>((n + kLegendPerRow - 1) / kLegendPerRow); }

// A legend from `top`: `swatch(i, x, y)` draws entry i's mark at (x, y) (its vertical middle).
template <typename Swatch>
std::string Legend(double top, const std::vector<std::string>& names, Swatch swatch) {
  std::string out = "<g class=\"legend\">";
  for (size_t i = 0; i < names.size(); ++i) {
    const double x = 16 + kLegendColumn * static_cast<double>(i % kLegendPerRow);
    const double y = top + kLegendRow * static_cast<double>(i / kLegendPerRow) + kLegendRow / 2;
    out += swatch(i, x, y);
    out += Label(x + 26, y + 4, names[i], "start");
  }
  return out + "</g>";
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// Whether text on `color` (#rrggbb) reads better in black than in white.
bool IsLight(const std::string& color) {
  unsigned r = 0, g = 0, b = 0;
  if (color.size() != 7 || std::sscanf(color.c_str(), "#%2x%2x%2x", &r, &g, &b) != 3) return false;
  return 0.299 * r + 0.587 * g + 0.114 * b > 150;
}

}  // namespace

const char* SeriesColor(size_t i) {
  static const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo || target < 1) return {lo};
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (int k = 0;; ++k) {
    double t = first + k * step;
    if (std::fabs(t) < step * 1e-9) t = 0;  // no "-0" or 1e-17 at zero
    ticks.push_back(t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string RenderLineChart(const LineChart& c) {
  constexpr double kLeft = 64, kRight = 16, kTop = 12, kPlotH = 220;
  const double plot_w = kWidth - kLeft - kRight;
  Range xr, yr;
  for (const LineSeries& s : c.series)
    for (const auto& [x, y] : s.points)
      if (std::isfinite(y)) {
        xr.Add(x);
        yr.Add(y);
      }
  if (c.x_min) xr.Add(*c.x_min);
  if (c.x_max) xr.Add(*c.x_max);
  if (xr.empty()) xr.lo = 0, xr.hi = 1;
  if (yr.empty()) yr.lo = 0, yr.hi = 1;
  if (c.y_min) yr.lo = *c.y_min;
  if (c.y_max) yr.hi = *c.y_max;
  if (xr.hi <= xr.lo) xr.hi = xr.lo + 1;
  if (yr.hi <= yr.lo) yr.hi = yr.lo + 1;
  const std::vector<double> yt = NiceTicks(yr.lo, yr.hi, 5);
  const std::vector<double> xt = NiceTicks(xr.lo, xr.hi, 8);
  // The axes span the ticks unless the chart fixes them.
  const double y0 = c.y_min ? *c.y_min : yt.front(), y1 = c.y_max ? *c.y_max : yt.back();
  const double x0 = c.x_min ? *c.x_min : xr.lo, x1 = c.x_max ? *c.x_max : xr.hi;
  auto px = [&](double x) { return kLeft + plot_w * (x - x0) / (x1 - x0); };
  auto py = [&](double y) { return kTop + kPlotH * (1 - (y - y0) / (y1 - y0)); };
  const double legend_top = kTop + kPlotH + 40;
  const double height = legend_top + kLegendRow * LegendRows(c.series.size()) + 8;
  std::string out = Open(height, c.title);
  out += "<g class=\"axes\" stroke=\"#ccc\">";
  for (double t : yt)
    if (t >= y0 - 1e-9 && t <= y1 + 1e-9)
      out += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w) + "\" y1=\"" +
             Num(py(t)) + "\" y2=\"" + Num(py(t)) + "\"/>";
  out += "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(kTop) + "\" width=\"" + Num(plot_w) +
         "\" height=\"" + Num(kPlotH) + "\" fill=\"none\" stroke=\"#888\"/></g>";
  for (double t : yt)
    if (t >= y0 - 1e-9 && t <= y1 + 1e-9)
      out += "<text x=\"" + Num(kLeft - 6) + "\" y=\"" + Num(py(t) + 4) +
             "\" text-anchor=\"end\">" + EscapeText(c.format_y(t)) + "</text>";
  for (double t : xt)
    if (t >= x0 - 1e-9 && t <= x1 + 1e-9)
      out += "<text x=\"" + Num(px(t)) + "\" y=\"" + Num(kTop + kPlotH + 15) +
             "\" text-anchor=\"middle\">" + EscapeText(c.format_x(t)) + "</text>";
  out += "<text x=\"" + Num(kLeft + plot_w / 2) + "\" y=\"" + Num(kTop + kPlotH + 31) +
         "\" text-anchor=\"middle\" fill=\"#444\">" + EscapeText(c.x_label) + "</text>";
  out += "<text transform=\"translate(14 " + Num(kTop + kPlotH / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" fill=\"#444\">" + EscapeText(c.y_label) +
         "</text>";
  for (const LineSeries& s : c.series) {
    const std::string style = std::string(" stroke=\"") + SeriesColor(s.color) +
                              "\" stroke-width=\"1.6\" fill=\"none\"" +
                              (s.dashed ? " stroke-dasharray=\"5 3\"" : "");
    out += "<g class=\"series\"><title>" + EscapeText(s.name) + "</title>";
    std::string run;
    size_t run_points = 0;
    auto flush = [&] {
      if (run_points > 1) out += "<polyline points=\"" + run + "\"" + style + "/>";
      run.clear();
      run_points = 0;
    };
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) {
        flush();
        continue;
      }
      const double cy = std::clamp(py(y), kTop, kTop + kPlotH);
      run += (run.empty() ? "" : " ") + Num(px(x)) + "," + Num(cy);
      ++run_points;
    }
    flush();
    out += "</g>";
  }
  out += Legend(
      legend_top,
      [&] {
        std::vector<std::string> names;
        for (const LineSeries& s : c.series) names.push_back(s.name);
        return names;
      }(),
      [&](size_t i, double x, double y) {
        const LineSeries& s = c.series[i];
        return "<line x1=\"" + Num(x) + "\" x2=\"" + Num(x + 20) + "\" y1=\"" + Num(y) +
               "\" y2=\"" + Num(y) + "\" stroke=\"" + SeriesColor(s.color) +
               "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
      });
  return out + "</svg>";
}

std::string RenderBarChart(const BarChart& c) {
  constexpr double kTop = 8, kBar = 14, kBarGap = 2, kBlockGap = 10, kValueRoom = 64;
  const double plot_w = kWidth - kLabelWidth - kValueRoom;
  Range r;
  r.Add(0);
  for (const auto& row : c.values)
    for (double v : row) r.Add(v);
  if (r.hi <= r.lo) r.hi = r.lo + 1;
  const std::vector<double> ticks = NiceTicks(r.lo, r.hi, 5);
  const double v0 = ticks.front(), v1 = ticks.back();
  auto px = [&](double v) { return kLabelWidth + plot_w * (v - v0) / (v1 - v0); };
  const size_t groups = std::max<size_t>(1, c.groups.size());
  const double block = static_cast<double>(groups) * (kBar + kBarGap) - kBarGap;
  const double plot_h = static_cast<double>(c.categories.size()) * (block + kBlockGap);
  const double axis_y = kTop + plot_h;
  const bool legend = c.groups.size() > 1;
  const double legend_top = axis_y + 24;
  const double height = legend_top + (legend ? kLegendRow * LegendRows(c.groups.size()) : 0) + 8;
  std::string out = Open(height, c.title);
  out += "<g class=\"axes\" stroke=\"#ddd\">";
  for (double t : ticks)
    out += "<line x1=\"" + Num(px(t)) + "\" x2=\"" + Num(px(t)) + "\" y1=\"" + Num(kTop) +
           "\" y2=\"" + Num(axis_y) + "\"/>";
  out += "</g>";
  for (double t : ticks)
    out += "<text x=\"" + Num(px(t)) + "\" y=\"" + Num(axis_y + 14) + "\" text-anchor=\"middle\">" +
           EscapeText(FormatNumber(t)) + "</text>";
  for (size_t i = 0; i < c.categories.size(); ++i) {
    const double top = kTop + static_cast<double>(i) * (block + kBlockGap) + kBlockGap / 2;
    out += Label(kLabelWidth - 8, top + block / 2 + 4, c.categories[i], "end");
    for (size_t g = 0; g < groups; ++g) {
      const double v = i < c.values.size() && g < c.values[i].size()
                           ? c.values[i][g]
                           : std::numeric_limits<double>::quiet_NaN();
      if (!std::isfinite(v)) continue;
      const double y = top + static_cast<double>(g) * (kBar + kBarGap);
      const double a = px(std::min(0.0, v)), b = px(std::max(0.0, v));
      const std::string name =
          c.groups.empty() ? c.categories[i] : c.categories[i] + ", " + c.groups[g];
      out += "<rect class=\"bar\" x=\"" + Num(a) + "\" y=\"" + Num(y) + "\" width=\"" +
             Num(std::max(b - a, 0.5)) + "\" height=\"" + Num(kBar) + "\" fill=\"" +
             SeriesColor(legend ? g : 0) + "\"><title>" + EscapeText(name) + ": " +
             EscapeText(c.format(v)) + "</title></rect>";
      out += "<text x=\"" + Num(b + 4) + "\" y=\"" + Num(y + kBar - 3) + "\">" +
             EscapeText(c.format(v)) + "</text>";
    }
  }
  if (legend)
    out += Legend(legend_top, c.groups, [](size_t g, double x, double y) {
      return "<rect x=\"" + Num(x) + "\" y=\"" + Num(y - 5) +
             "\" width=\"20\" height=\"10\" fill=\"" + SeriesColor(g) + "\"/>";
    });
  return out + "</svg>";
}

std::string RenderStackedBars(const StackedBarChart& c) {
  constexpr double kTop = 8, kBar = 22, kGap = 8, kRight = 16;
  const double plot_w = kWidth - kLabelWidth - kRight;
  auto color = [&](size_t s) {
    return s < c.colors.size() ? c.colors[s] : std::string(SeriesColor(s));
  };
  const double legend_top = kTop + static_cast<double>(c.rows.size()) * (kBar + kGap) + 8;
  const double height = legend_top + kLegendRow * LegendRows(c.segments.size()) + 8;
  std::string out = Open(height, c.title);
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const double y = kTop + static_cast<double>(i) * (kBar + kGap);
    out += Label(kLabelWidth - 8, y + kBar / 2 + 4, c.rows[i], "end");
    double total = 0;
    const std::vector<double> none;
    const std::vector<double>& row = i < c.values.size() ? c.values[i] : none;
    for (double v : row)
      if (std::isfinite(v) && v > 0) total += v;
    if (total <= 0) continue;
    double x = kLabelWidth;
    for (size_t s = 0; s < row.size() && s < c.segments.size(); ++s) {
      const double v = row[s];
      if (!std::isfinite(v) || v <= 0) continue;
      const double w = plot_w * v / total;
      const std::string share = c.format(v / total);
      out += "<rect class=\"segment\" x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) +
             "\" height=\"" + Num(kBar) + "\" fill=\"" + EscapeText(color(s)) + "\"><title>" +
             EscapeText(c.rows[i]) + ", " + EscapeText(c.segments[s]) + ": " + EscapeText(share) +
             "</title></rect>";
      if (w >= 36)
        out += "<text x=\"" + Num(x + w / 2) + "\" y=\"" + Num(y + kBar / 2 + 4) +
               "\" text-anchor=\"middle\" fill=\"" + (IsLight(color(s)) ? "#000" : "#fff") + "\">" +
               EscapeText(share) + "</text>";
      x += w;
    }
  }
  out += Legend(legend_top, c.segments, [&](size_t s, double x, double y) {
    return "<rect x=\"" + Num(x) + "\" y=\"" + Num(y - 5) +
           "\" width=\"20\" height=\"10\" fill=\"" + EscapeText(color(s)) + "\"/>";
  });
  return out + "</svg>";
}

}  // namespace airtime
