#include "airtime/base/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace airtime {

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::optional<double> ParseDouble(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  std::string buf(s);
  char* end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string FormatMib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

namespace {
// The longest duration read: about 31,700 years, far beyond any real one, and small enough
// that a sum of parts is checked against it without int64 overflow.
constexpr int64_t kMaxDurationMs = 1'000'000'000'000'000;
std::optional<int64_t> ParseOneDurationMs(std::string_view s);
}  // namespace

std::optional<int64_t> ParseDurationMs(std::string_view s) {
  s = Trim(s);
  // Compound forms ("1h45m", "2d12h", "1m30s"): split after each unit.
  int64_t total = 0;
  size_t start = 0, parts = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    const bool unit_end = std::isalpha(static_cast<unsigned char>(s[i])) &&
                          (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '.');
    if (!unit_end) continue;
    auto part = ParseOneDurationMs(s.substr(start, i + 1 - start));
    if (!part || *part > kMaxDurationMs - total) return std::nullopt;
    total += *part;
    start = i + 1;
    ++parts;
  }
  if (parts == 0) return ParseOneDurationMs(s);
  auto last = ParseOneDurationMs(s.substr(start));
  // The last part of a compound form needs its unit too ("1h30" is ambiguous).
  if (!last || std::isdigit(static_cast<unsigned char>(s.back()))) return std::nullopt;
  if (*last > kMaxDurationMs - total) return std::nullopt;
  return total + *last;
}

namespace {
std::optional<int64_t> ParseOneDurationMs(std::string_view s) {
  struct Unit {
    std::string_view suffix;
    double ms;
  };
  static constexpr Unit kUnits[] = {{"ms", 1},      {"s", 1000},       {"m", 60000},
                                    {"min", 60000}, {"h", 3600000},    {"d", 86400000},
                                    {"sec", 1000},  {"hour", 3600000}, {"day", 86400000}};
  double scale = 1000;  // bare numbers are seconds
  std::string_view num = s;
  size_t best = 0;
  for (const auto& u : kUnits) {
    if (s.size() > u.suffix.size() && s.substr(s.size() - u.suffix.size()) == u.suffix &&
        u.suffix.size() > best) {
      // "ms" must win over "s", "min" over "m".
      best = u.suffix.size();
      scale = u.ms;
      num = s.substr(0, s.size() - u.suffix.size());
    }
  }
  auto v = ParseDouble(num);
  // Past the limit llround's result is undefined (it came back negative): refused instead.
  if (!v || *v < 0 || *v * scale > static_cast<double>(kMaxDurationMs)) return std::nullopt;
  return static_cast<int64_t>(std::llround(*v * scale));
}

}  // namespace

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace airtime
