#include "airtime/slurm/gres.h"

#include <algorithm>

#include "airtime/base/strings.h"

namespace airtime::slurm {
namespace {

constexpr int kMaxIndex = 4095;

bool IsCount(std::string_view s) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool ValidWord(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

StatusOr<Gres> ParseEntry(std::string_view entry) {
  auto error = [&](const std::string& why) {
    return InvalidArgument("GRES '" + std::string(entry.substr(0, 200)) + "': " + why);
  };
  Gres g;
  std::string_view spec = entry;
  std::string_view attrs;
  if (const size_t open = entry.find('('); open != std::string_view::npos) {
    if (entry.back() != ')') return error("'(' without a closing ')' at the end");
    spec = entry.substr(0, open);
    attrs = entry.substr(open + 1, entry.size() - open - 2);
  }
  if (spec.rfind("gres:", 0) == 0) spec.remove_prefix(5);  // tres_per_node's form
  std::vector<std::string_view> fields = Split(spec, ':');
  // "no_consume" may sit before the count; it changes nothing that airtime reads.
  std::erase(fields, std::string_view("no_consume"));
  if (fields.empty() || fields.size() > 3) return error("expected name[:type][:count]");
  if (!ValidWord(fields[0])) return error("bad name '" + std::string(fields[0]) + "'");
  g.name = std::string(fields[0]);
  g.count = 1;
  if (fields.size() == 2) {
    if (IsCount(fields[1])) {
      g.count = *ParseInt(fields[1]);
    } else if (ValidWord(fields[1])) {
      g.type = std::string(fields[1]);
    } else {
      return error("bad type or count '" + std::string(fields[1]) + "'");
    }
  } else if (fields.size() == 3) {
    if (!ValidWord(fields[1])) return error("bad type '" + std::string(fields[1]) + "'");
    if (!IsCount(fields[2])) return error("bad count '" + std::string(fields[2]) + "'");
    g.type = std::string(fields[1]);
    g.count = *ParseInt(fields[2]);
  }
  // Attributes: "S:0-1", "IDX:0-2", "IDX:N/A"; several may be comma-separated.
  if (!attrs.empty()) {
    size_t idx = attrs.find("IDX:");
    if (idx != std::string_view::npos) {
      std::string_view list = attrs.substr(idx + 4);
      // The index list ends at the next attribute ("...,S:0"), if any.
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i] == ':') {
          const size_t comma = list.rfind(',', i);
          if (comma == std::string_view::npos) return error("bad IDX list");
          list = list.substr(0, comma);
          break;
        }
      }
      auto indices = ParseIndexList(list);
      if (!indices.ok()) return error(indices.status().message());
      g.indices = std::move(*indices);
    }
  }
  return g;
}

}  // namespace

StatusOr<std::vector<int>> ParseIndexList(std::string_view text) {
  std::vector<int> out;
  text = Trim(text);
  if (text.empty() || text == "N/A") return out;
  for (std::string_view item : Split(text, ',')) {
    const size_t dash = item.find('-');
    const std::string_view lo = item.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    if (!IsCount(lo) || !IsCount(hi))
      return InvalidArgument("index list '" + std::string(text.substr(0, 200)) + "': item '" +
                             std::string(item) + "' is not N or N-M");
    const int64_t a = *ParseInt(lo);
    const int64_t b = *ParseInt(hi);
    if (b < a || b > kMaxIndex)
      return InvalidArgument("index list '" + std::string(text.substr(0, 200)) + "': item '" +
                             std::string(item) + "' is out of order or above " +
                             std::to_string(kMaxIndex));
    for (int64_t v = a; v <= b; ++v) out.push_back(static_cast<int>(v));
  }
  return out;
}

StatusOr<std::vector<Gres>> ParseGresList(std::string_view text) {
  std::vector<Gres> out;
  text = Trim(text);
  if (text.empty() || text == "(null)" || text == "N/A") return out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size()) {
      if (text[i] == '(') ++depth;
      if (text[i] == ')') --depth;
      if (depth < 0 || depth > 1)
        return InvalidArgument("GRES '" + std::string(text.substr(0, 200)) +
                               "': unbalanced parentheses");
      if (text[i] != ',' || depth != 0) continue;
    }
    auto g = ParseEntry(text.substr(start, i - start));
    if (!g.ok()) return g.status();
    out.push_back(std::move(*g));
    start = i + 1;
  }
  if (depth != 0)
    return InvalidArgument("GRES '" + std::string(text.substr(0, 200)) + "': unclosed '('");
  return out;
}

namespace {

// The counts of the entries named `name`, summed; capped at 2^62 (each count has at most 12
// digits, but a hostile list may have any number of entries).
int64_t CountOf(const std::vector<Gres>& list, std::string_view name) {
  constexpr int64_t kCap = int64_t{1} << 62;
  int64_t n = 0;
  for (const Gres& g : list)
    if (g.name == name) n = std::min(kCap, n + g.count);
  return n;
}

}  // namespace

int64_t GpuCount(const std::vector<Gres>& list) { return CountOf(list, "gpu"); }

int64_t ShardCount(const std::vector<Gres>& list) { return CountOf(list, "shard"); }

}  // namespace airtime::slurm
