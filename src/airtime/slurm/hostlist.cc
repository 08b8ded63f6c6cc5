#include "airtime/slurm/hostlist.h"

#include <cstdint>
#include <cstdio>

namespace airtime::slurm {
namespace {

// Splits on commas outside brackets; fails on unbalanced brackets.
StatusOr<std::vector<std::string_view>> SplitTopLevel(std::string_view expr) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    if (c == '[') {
      if (++depth > 1) return InvalidArgument("nested '[' at offset " + std::to_string(i));
    } else if (c == ']') {
      if (--depth < 0) return InvalidArgument("unmatched ']' at offset " + std::to_string(i));
    } else if (c == ',' && depth == 0) {
      parts.push_back(expr.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return InvalidArgument("unclosed '['");
  parts.push_back(expr.substr(start));
  return parts;
}

bool IsDigits(std::string_view s) {
  if (s.empty() || s.size() > 9) return false;  // 9 digits fit an int32 with no overflow
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int64_t ToInt(std::string_view s) {
  int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

bool ValidNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
  size_t width = 0;  // zero padding ("01" -> 2), 0 when not padded
};

}  // namespace

StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view expr, size_t max_names) {
  auto error = [&](const std::string& why) {
    return InvalidArgument("hostlist '" + std::string(expr.substr(0, 200)) + "': " + why);
  };
  std::vector<std::string> names;
  if (expr.empty() || expr == "(null)") return names;
  auto parts = SplitTopLevel(expr);
  if (!parts.ok()) return error(parts.status().message());
  for (std::string_view part : *parts) {
    if (part.empty()) return error("empty name");
    const size_t open = part.find('[');
    if (open == std::string_view::npos) {
      for (char c : part)
        if (!ValidNameChar(c)) return error("unexpected character '" + std::string(1, c) + "'");
      if (names.size() >= max_names)
        return error("more than " + std::to_string(max_names) + " names");
      names.emplace_back(part);
      continue;
    }
    const size_t close = part.find(']', open);
    const std::string_view prefix = part.substr(0, open);
    const std::string_view suffix = part.substr(close + 1);
    for (char c : prefix)
      if (!ValidNameChar(c)) return error("unexpected character '" + std::string(1, c) + "'");
    for (char c : suffix)
      if (!ValidNameChar(c)) return error("unexpected character '" + std::string(1, c) + "'");
    std::vector<Range> ranges;
    size_t total = 0;
    size_t start = open + 1;
    for (size_t i = open + 1; i <= close; ++i) {
      if (i != close && part[i] != ',') continue;
      const std::string_view item = part.substr(start, i - start);
      start = i + 1;
      const size_t dash = item.find('-');
      const std::string_view lo = item.substr(0, dash);
      const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
      if (!IsDigits(lo) || !IsDigits(hi))
        return error("range '" + std::string(item) + "' is not N or N-M");
      Range r{ToInt(lo), ToInt(hi), lo.size() > 1 && lo[0] == '0' ? lo.size() : 0};
      if (r.hi < r.lo) return error("range '" + std::string(item) + "' runs backwards");
      total += static_cast<size_t>(r.hi - r.lo + 1);
      if (names.size() + total > max_names)
        return error("more than " + std::to_string(max_names) + " names");
      ranges.push_back(r);
    }
    for (const Range& r : ranges) {
      for (int64_t v = r.lo; v <= r.hi; ++v) {
        char num[32];
        std::snprintf(num, sizeof num, "%0*lld", static_cast<int>(r.width),
                      static_cast<long long>(v));
        names.push_back(std::string(prefix) + num + std::string(suffix));
      }
    }
  }
  return names;
}

bool ValidNodeName(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace airtime::slurm
