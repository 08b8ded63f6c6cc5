// PromWriter: escaping, number formatting and family grouping of the Prometheus text format.
#include "airtime/api/prom_writer.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "airtime/base/utf8.h"

namespace airtime {
namespace {

// Metric and label names: [a-zA-Z_:][a-zA-Z0-9_:]*; anything else becomes '_'.
std::string SanitizeName(std::string_view name, bool allow_colon) {
  std::string out(name);
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const bool ok = std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
                    (allow_colon && c == ':') ||
                    (i > 0 && std::isdigit(static_cast<unsigned char>(c)));
    if (!ok) out[i] = '_';
  }
  return out.empty() ? "_" : out;
}

std::string FormatLabels(const PromLabels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += SanitizeName(labels[i].first, false) + "=\"" +
           PromWriter::EscapeLabelValue(labels[i].second) + "\"";
  }
  return out + "}";
}

}  // namespace

PromHistogram::PromHistogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void PromHistogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  ++counts[i];
  sum += v;
}

std::string PromWriter::EscapeLabelValue(std::string_view v) {
  // The text format escapes only \\, \" and \n; a label value must also be UTF-8, so other
  // control characters (a NUL ends the sample for some parsers) and invalid bytes become
  // U+FFFD.
  std::string out;
  ForEachCodePoint(v, [&](uint32_t cp, std::string_view bytes) {
    if (cp == '\\') {
      out += "\\\\";
    } else if (cp == '"') {
      out += "\\\"";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (IsControlCodePoint(cp)) {
      out += kUtf8Replacement;
    } else {
      out.append(bytes);
    }
  });
  return out;
}

std::string PromWriter::EscapeHelp(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PromWriter::FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return "NaN";
  return std::string(buf, end);
}

std::string& PromWriter::Family(std::string_view name, std::string_view help,
                                std::string_view type) {
  auto it = text_.find(name);
  if (it != text_.end()) return it->second;
  order_.emplace_back(name);
  std::string& out = text_[std::string(name)];
  out = "# HELP " + std::string(name) + " " + EscapeHelp(help) + "\n# TYPE " + std::string(name) +
        " " + std::string(type) + "\n";
  return out;
}

void PromWriter::Sample(std::string& out, std::string_view name, const PromLabels& labels,
                        double value) {
  out += std::string(name) + FormatLabels(labels) + " " + FormatValue(value) + "\n";
}

void PromWriter::Counter(std::string_view name, std::string_view help, double value,
                         const PromLabels& labels) {
  const std::string n = SanitizeName(name, true);
  Sample(Family(n, help, "counter"), n, labels, value);
}

void PromWriter::Gauge(std::string_view name, std::string_view help, double value,
                       const PromLabels& labels) {
  const std::string n = SanitizeName(name, true);
  Sample(Family(n, help, "gauge"), n, labels, value);
}

void PromWriter::Histogram(std::string_view name, std::string_view help, const PromHistogram& h,
                           const PromLabels& labels) {
  const std::string n = SanitizeName(name, true);
  std::string& out = Family(n, help, "histogram");
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= h.bounds.size(); ++i) {
    cumulative += i < h.counts.size() ? h.counts[i] : 0;
    PromLabels with_le = labels;
    with_le.emplace_back("le", i < h.bounds.size() ? FormatValue(h.bounds[i]) : "+Inf");
    Sample(out, n + "_bucket", with_le, static_cast<double>(cumulative));
  }
  Sample(out, n + "_sum", labels, h.sum);
  Sample(out, n + "_count", labels, static_cast<double>(cumulative));
}

std::string PromWriter::Text() const {
  std::string out;
  for (const std::string& name : order_) out += text_.find(name)->second;
  return out;
}

}  // namespace airtime
