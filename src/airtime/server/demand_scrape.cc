// Demand scraping: see demand_scrape.h.
#include "airtime/server/demand_scrape.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace airtime {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// One sample line of the text format, `name{label="value",...} value [timestamp]`, as far as
// scraping demand needs it: the metric's name, its value, and the unescaped value of one
// label if it has it.
struct Sample {
  std::string_view name;
  double value = 0;
  std::optional<std::string> label;  // the value of the label asked for, if present
};

// The name of a sample line: up to '{' or whitespace.
std::string_view NameOf(std::string_view line) {
  size_t end = 0;
  while (end < line.size() && line[end] != '{' && !IsSpace(line[end])) ++end;
  return line.substr(0, end);
}

// Reads a quoted label value at `pos` (on its opening quote) into `out` (when not null),
// unescaping \\, \" and \n; `pos` ends after the closing quote. False when the value is
// not closed or holds another escape.
bool ReadLabelValue(std::string_view line, size_t& pos, std::string* out) {
  if (pos >= line.size() || line[pos] != '"') return false;
  for (++pos; pos < line.size(); ++pos) {
    char c = line[pos];
    if (c == '"') {
      ++pos;
      return true;
    }
    if (c == '\\') {
      if (++pos >= line.size()) return false;
      switch (line[pos]) {
        case '\\':
        case '"':
          c = line[pos];
          break;
        case 'n':
          c = '\n';
          break;
        default:
          return false;
      }
    }
    if (out) out->push_back(c);
  }
  return false;
}

// ASCII only, whatever the locale.
bool IsLabelStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsLabelChar(char c) { return IsLabelStart(c) || (c >= '0' && c <= '9'); }

// The label set at `pos` (on its '{'); `pos` ends after the '}'. False when malformed, or
// when the label asked for appears twice (which of them would be the class?).
bool ReadLabels(std::string_view line, size_t& pos, std::string_view label,
                std::optional<std::string>* found) {
  ++pos;  // '{'
  for (;;) {
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    if (pos >= line.size()) return false;
    if (line[pos] == '}') {
      ++pos;
      return true;
    }
    const size_t start = pos;
    if (!IsLabelStart(line[pos])) return false;
    while (pos < line.size() && IsLabelChar(line[pos])) ++pos;
    const std::string_view name = line.substr(start, pos - start);
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    if (pos >= line.size() || line[pos] != '=') return false;
    ++pos;
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    const bool wanted = !label.empty() && name == label;
    if (wanted && found->has_value()) return false;
    std::string value;
    if (!ReadLabelValue(line, pos, wanted ? &value : nullptr)) return false;
    if (wanted) *found = std::move(value);
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    if (pos < line.size() && line[pos] == ',') ++pos;  // a trailing comma is allowed
  }
}

// A count of requests: finite and not negative. Whatever follows the value (a timestamp,
// an OpenMetrics exemplar) is not read.
std::optional<double> ReadValue(std::string_view line, size_t pos) {
  if (pos >= line.size() || !IsSpace(line[pos])) return std::nullopt;
  while (pos < line.size() && IsSpace(line[pos])) ++pos;
  size_t end = pos;
  while (end < line.size() && !IsSpace(line[end])) ++end;
  std::string_view text = line.substr(pos, end - pos);
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double v = 0;
  auto [at, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || at != text.data() + text.size()) return std::nullopt;
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// Calls `on(sample)` for each sample line of a named metric that parses, and `bad()` for
// each one that does not.
template <typename OnSample, typename OnBad>
void ForEachSample(std::string_view text, const std::vector<std::string>& names,
                   std::string_view label, OnSample on, OnBad bad) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    while (!line.empty() && IsSpace(line.front())) line.remove_prefix(1);
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    s.name = NameOf(line);
    if (std::find(names.begin(), names.end(), s.name) == names.end()) continue;
    size_t pos = s.name.size();
    if (pos < line.size() && line[pos] == '{' && !ReadLabels(line, pos, label, &s.label)) {
      bad();
      continue;
    }
    auto v = ReadValue(line, pos);
    if (!v) {
      bad();
      continue;
    }
    s.value = *v;
    on(s);
  }
}

// A label value fit for a message: printable ASCII (others as '?'), at most
// kUnknownValueBytes.
std::string Printable(std::string_view v) {
  std::string out(v.substr(0, kUnknownValueBytes));
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  if (v.size() > kUnknownValueBytes) out += "...";
  return out;
}

void KeepUnknown(std::vector<std::string>& kept, const std::string& value) {
  if (kept.size() >= kUnknownValuesKept) return;
  std::string p = Printable(value);
  if (std::find(kept.begin(), kept.end(), p) == kept.end()) kept.push_back(std::move(p));
}

}  // namespace

std::optional<double> SumMetrics(std::string_view text, const std::vector<std::string>& names) {
  std::optional<double> sum;
  ForEachSample(
      text, names, "", [&](const Sample& s) { sum = sum.value_or(0) + s.value; }, [] {});
  if (sum && !std::isfinite(*sum)) return std::nullopt;  // finite samples that overflowed
  return sum;
}

ClassSums SumMetricsByClass(std::string_view text, const std::vector<std::string>& names,
                            std::string_view label, const std::vector<std::string>& classes) {
  ClassSums out;
  out.sums.assign(classes.size(), 0.0);
  out.seen.assign(classes.size(), false);
  ForEachSample(
      text, names, label,
      [&](const Sample& s) {
        if (!s.label) {
          ++out.without_label;
          return;
        }
        auto it = std::find(classes.begin(), classes.end(), *s.label);
        if (it == classes.end()) {
          ++out.unknown_class;
          KeepUnknown(out.unknown_values, *s.label);
          return;
        }
        const auto c = static_cast<size_t>(it - classes.begin());
        out.sums[c] += s.value;
        out.seen[c] = true;
      },
      [&] { ++out.malformed; });
  for (size_t c = 0; c < classes.size(); ++c) {
    if (std::isfinite(out.sums[c])) continue;
    out.sums[c] = 0;
    out.seen[c] = false;
    ++out.malformed;
  }
  return out;
}

void ClassSums::Add(const ClassSums& other) {
  if (sums.size() < other.sums.size()) {
    sums.resize(other.sums.size(), 0.0);
    seen.resize(other.seen.size(), false);
  }
  for (size_t c = 0; c < other.sums.size(); ++c) {
    if (!other.seen[c]) continue;
    const double sum = sums[c] + other.sums[c];
    if (!std::isfinite(sum)) {
      ++malformed;
      continue;
    }
    sums[c] = sum;
    seen[c] = true;
  }
  without_label += other.without_label;
  unknown_class += other.unknown_class;
  malformed += other.malformed;
  for (const std::string& v : other.unknown_values) KeepUnknown(unknown_values, v);
}

std::string ClassSums::SkippedText(std::string_view label) const {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (without_label > 0)
    add("label '" + std::string(label) + "' absent: " + std::to_string(without_label));
  if (unknown_class > 0) {
    std::string part = "a class the service does not have: " + std::to_string(unknown_class);
    for (size_t i = 0; i < unknown_values.size(); ++i)
      part += (i ? ", '" : " (e.g. '") + unknown_values[i] + "'";
    if (!unknown_values.empty()) part += ")";
    add(part);
  }
  if (malformed > 0) add("malformed, negative or not finite: " + std::to_string(malformed));
  return out;
}

double RateFromInFlight(double in_flight, double latency_slo_ms) {
  if (latency_slo_ms <= 0) return 0;
  return std::max(0.0, in_flight) / (latency_slo_ms / 1000.0);
}

std::optional<double> CounterRate(const std::optional<CounterReading>& last, double value,
                                  TimeMs now) {
  if (!last || now <= last->at || value < last->value) return std::nullopt;
  return (value - last->value) / (static_cast<double>(now - last->at) / 1000.0);
}

}  // namespace airtime
