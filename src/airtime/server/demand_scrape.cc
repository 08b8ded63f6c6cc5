// Demand scraping: see demand_scrape.h.
#include "airtime/server/demand_scrape.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace airtime {
namespace {

// The metric name of a sample line: up to '{' or whitespace.
std::string_view NameOf(std::string_view line) {
  size_t end = 0;
  while (end < line.size() && line[end] != '{' && line[end] != ' ' && line[end] != '\t') ++end;
  return line.substr(0, end);
}

// The value after the name and labels (the first field after a closing '}' or the name).
std::optional<double> ValueOf(std::string_view line, size_t name_len) {
  size_t pos = name_len;
  if (pos < line.size() && line[pos] == '{') {
    bool quoted = false;
    for (++pos; pos < line.size(); ++pos) {
      if (line[pos] == '\\' && quoted) {
        ++pos;
      } else if (line[pos] == '"') {
        quoted = !quoted;
      } else if (line[pos] == '}' && !quoted) {
        ++pos;
        break;
      }
    }
  }
  while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
  const std::string value(line.substr(pos, line.find_first_of(" \t", pos) - pos));
  if (value.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (end != value.c_str() + value.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<double> SumMetrics(std::string_view text, const std::vector<std::string>& names) {
  std::optional<double> sum;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    const std::string_view name = NameOf(line);
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    if (auto v = ValueOf(line, name.size())) sum = sum.value_or(0) + *v;
  }
  return sum;
}

double RateFromInFlight(double in_flight, double latency_slo_ms) {
  if (latency_slo_ms <= 0) return 0;
  return std::max(0.0, in_flight) / (latency_slo_ms / 1000.0);
}

}  // namespace airtime
