// Charts as inline SVG, for self-contained HTML reports: a line chart, horizontal grouped
// bars and horizontal stacked bars. Every label is escaped (escape.h); the output holds no
// script, no link and nothing fetched. Pure functions; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace airtime {

// The colour of series `i`, from a fixed palette that repeats.
const char* SeriesColor(size_t i);

// Tick values: round numbers (1, 2 or 5 times a power of ten apart) from at or below `lo`
// to at or above `hi`, about `target` intervals; {lo} when lo == hi or either is not finite.
std::vector<double> NiceTicks(double lo, double hi, int target);

// A number as an axis or bar label: up to 4 significant digits, no trailing zeros.
std::string FormatNumber(double v);

using Formatter = std::function<std::string(double)>;

struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); a NaN y breaks the line
  bool dashed = false;
  size_t color = 0;  // SeriesColor index
};

struct LineChart {
  std::string title;  // for screen readers (<title>); the page shows its own heading
  std::string x_label, y_label;
  std::vector<LineSeries> series;
  std::optional<double> y_min, y_max;  // the axis, else from the data
  std::optional<double> x_min, x_max;
  Formatter format_x = FormatNumber, format_y = FormatNumber;
};

// One <svg> with axes, ticks, one polyline per series and a legend.
std::string RenderLineChart(const LineChart& chart);

struct BarChart {
  std::string title;
  std::vector<std::string> categories;      // one block of bars each, top to bottom
  std::vector<std::string> groups;          // one bar per group in each block (legend when > 1)
  std::vector<std::vector<double>> values;  // [category][group]; NaN: no bar
  Formatter format = FormatNumber;          // the value printed at each bar's end
};

// One <svg> of horizontal bars from a common zero, each labelled with its value.
std::string RenderBarChart(const BarChart& chart);

struct StackedBarChart {
  std::string title;
  std::vector<std::string> rows;            // one bar each, top to bottom
  std::vector<std::string> segments;        // the parts of every bar, left to right
  std::vector<std::string> colors;          // per segment (CSS colours); empty: the palette
  std::vector<std::vector<double>> values;  // [row][segment], >= 0
  Formatter format = FormatNumber;          // the share of a segment, printed inside it
};

// One <svg> of full-width bars, each divided in proportion to its row's values.
std::string RenderStackedBars(const StackedBarChart& chart);

}  // namespace airtime
