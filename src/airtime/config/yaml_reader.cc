#include "airtime/config/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "airtime/base/file_read.h"
#include "airtime/base/strings.h"

namespace airtime::yaml_internal {

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string lower = ToLower(word);
  const std::string* best = nullptr;
  int best_distance = 3;
  for (const auto& c : candidates) {
    int d = EditDistance(lower, ToLower(c));
    if (d < best_distance && d < static_cast<int>(c.size())) {
      best_distance = d;
      best = &c;
    }
  }
  if (best == nullptr) return "";
  return " (did you mean '" + *best + "'?)";
}

std::string DescribeFound(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return node.size() == 0 ? "an empty list" : "a list";
  if (node.IsMap()) return node.size() == 0 ? "an empty mapping" : "a mapping";
  return "'" + node.Scalar() + "'";
}

YamlFile::YamlFile(std::string filename) : name_(std::move(filename)) {}

int YamlFile::Line(const YAML::Node& node, int fallback) const {
  if (!node.IsDefined()) return fallback;
  YAML::Mark m = node.Mark();
  return m.is_null() ? fallback : m.line + 1;
}

std::string YamlFile::Where(int line) const { return name_ + ":" + std::to_string(line); }

Status YamlFile::ErrorAt(int line, std::string_view message) const {
  return InvalidArgument(Where(line) + ": " + std::string(message));
}

namespace {

// Counts documents for the guard in LoadAll, ignoring their content.
class DocumentCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

StatusOr<std::vector<YAML::Node>> YamlFile::LoadAll(std::string_view text,
                                                    const YamlBudget& budget) const {
  // First guard: libyaml checks the syntax and the budgets (yaml_budget.h says why).
  auto shape = CheckYamlBudget(text, name_, budget);
  if (!shape.ok()) return shape.status();
  try {
    const std::string owned(text);
    // Second guard: yaml-cpp's own parser must end within the documents libyaml found (plus
    // one, for an empty trailing document the two may count differently) before
    // YAML::LoadAll, which has no bound of its own, runs.
    {
      std::istringstream in(owned);
      YAML::Parser parser(in);
      DocumentCounter counter;
      for (size_t n = 0; parser.HandleNextDocument(counter);)
        if (++n > shape->documents + 1)
          return ErrorAt(1, "YAML syntax error: the parser found more than the " +
                                std::to_string(shape->documents) +
                                " documents the text holds; refusing it");
    }
    return YAML::LoadAll(owned);
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    return ErrorAt(line, "YAML syntax error: " + e.msg);
  }
}

std::string YamlFile::ResolvePath(std::string_view path) const {
  std::filesystem::path p{std::string(path)};
  if (p.is_absolute()) return p.lexically_normal().string();
  std::filesystem::path dir = std::filesystem::path(name_).parent_path();
  if (dir.empty()) return p.lexically_normal().string();
  return (dir / p).lexically_normal().string();
}

StatusOr<std::string> ReadFileToString(const std::string& path, std::string_view what) {
  return ReadFileBounded(path, YamlBudget{}.max_bytes, what);
}

std::string NamedSubject(const YAML::Node& node, std::string_view kind, size_t index) {
  if (node.IsMap()) {
    for (const auto& kv : node)
      if (kv.first.IsScalar() && kv.first.Scalar() == "name" && kv.second.IsScalar() &&
          !kv.second.Scalar().empty())
        return std::string(kind) + " '" + kv.second.Scalar() + "'";
  }
  return std::string(kind) + " #" + std::to_string(index + 1);
}

StatusOr<GpuTypeId> FindGpuType(const GpuCatalog& catalog, std::string_view name) {
  auto id = catalog.Find(name);
  if (id.ok()) return id;
  std::vector<std::string> names;
  for (size_t i = 0; i < catalog.size(); ++i) {
    const GpuType& t = catalog.type(static_cast<GpuTypeId>(i));
    names.push_back(t.name);
  }
  std::string hint = DidYouMean(name, names);
  if (hint.empty()) {
    for (size_t i = 0; i < catalog.size(); ++i)
      for (const auto& a : catalog.type(static_cast<GpuTypeId>(i)).aliases)
        if (EditDistance(ToLower(name), ToLower(a)) <= 2)
          hint = " (did you mean '" + catalog.type(static_cast<GpuTypeId>(i)).name + "'?)";
  }
  return InvalidArgument("expected a GPU type (known: " + catalog.NamesForError() + "), found '" +
                         std::string(name) + "'" + hint);
}

StatusOr<MapReader> MapReader::Open(const YamlFile& file, const YAML::Node& node,
                                    std::string subject, std::string field,
                                    const std::vector<std::string>& known, int line_hint) {
  return OpenImpl(file, node, std::move(subject), std::move(field), &known, line_hint);
}

StatusOr<MapReader> MapReader::OpenAnyKeys(const YamlFile& file, const YAML::Node& node,
                                           std::string subject, std::string field, int line_hint) {
  return OpenImpl(file, node, std::move(subject), std::move(field), nullptr, line_hint);
}

namespace {
// YAML's merge key: a plain `<<` ("<<" in quotes is an ordinary key).
bool IsMergeKey(const YAML::Node& key) {
  return key.IsScalar() && key.Scalar() == "<<" && key.Tag() != "!";
}
}  // namespace

StatusOr<MapReader> MapReader::OpenImpl(const YamlFile& file, const YAML::Node& node,
                                        std::string subject, std::string field,
                                        const std::vector<std::string>* known, int line_hint) {
  MapReader r;
  r.file_ = &file;
  r.subject_ = std::move(subject);
  r.field_ = std::move(field);
  r.line_ = file.Line(node, line_hint);
  if (!node.IsMap()) {
    std::string what = r.field_.empty() ? "" : "field '" + r.field_ + "': ";
    return file.ErrorAt(
        r.line_, r.subject_ + ": " + what + "expected a mapping, found " + DescribeFound(node));
  }
  // Keys seen, for the check of keys given twice: a set, not a scan of the entries, so that a
  // mapping of many keys (a tenant's `env`) costs time in proportion to its size.
  std::unordered_map<std::string, size_t> seen;
  std::vector<std::pair<YAML::Node, int>> merges;
  for (const auto& kv : node) {
    const YAML::Node& k = kv.first;
    int kline = file.Line(k, r.line_);
    if (!k.IsScalar())
      return file.ErrorAt(kline, r.subject_ + ": expected a field name, found " + DescribeFound(k));
    if (IsMergeKey(k)) {
      if (!merges.empty())
        return file.ErrorAt(kline, r.subject_ + ": field '" + r.Prefix() +
                                       "<<' given twice (first at line " +
                                       std::to_string(merges.front().second) +
                                       "): merge several mappings with <<: [*a, *b]");
      merges.push_back({kv.second, kline});
      continue;
    }
    std::string key = k.Scalar();
    if (auto prior = seen.find(key); prior != seen.end())
      return file.ErrorAt(
          kline, r.subject_ + ": field '" + r.Prefix() + key + "' given twice (first at line " +
                     std::to_string(file.Line(r.entries_[prior->second].key_node)) + ")");
    AIRTIME_RETURN_IF_ERROR(r.AddEntry(std::move(key), k, kv.second, kline, &seen, known));
  }
  size_t budget = 0;
  for (const auto& [value, line] : merges)
    AIRTIME_RETURN_IF_ERROR(r.Merge(value, line, &seen, known, 0, &budget));
  return r;
}

Status MapReader::AddEntry(std::string key, const YAML::Node& key_node, const YAML::Node& value,
                           int line, std::unordered_map<std::string, size_t>* seen,
                           const std::vector<std::string>* known) {
  if (known != nullptr && std::find(known->begin(), known->end(), key) == known->end()) {
    std::string hint = DidYouMean(key, *known);
    if (hint.empty()) hint = " (known fields: " + Join(*known, ", ") + ")";
    return file_->ErrorAt(line, subject_ + ": unknown field '" + Prefix() + key + "'" + hint);
  }
  seen->emplace(key, entries_.size());
  entries_.push_back({std::move(key), key_node, value});
  return OkStatus();
}

Status MapReader::Merge(const YAML::Node& value, int line,
                        std::unordered_map<std::string, size_t>* seen,
                        const std::vector<std::string>* known, int depth, size_t* budget) {
  // Aliases make a small file name a mapping many times over: the fields read through merges
  // are counted, and so is the nesting, which is also what stops a mapping that merges
  // itself (an anchor named again, as yaml-cpp resolves it, can point back at its own node).
  constexpr int kMaxDepth = 8;
  constexpr size_t kMaxMergedFields = 100'000;
  auto error = [&](int at, const std::string& what) {
    return file_->ErrorAt(at, subject_ + ": field '" + Prefix() + "<<' (a YAML merge): " + what);
  };
  if (depth >= kMaxDepth)
    return error(line, "merges nested more than " + std::to_string(kMaxDepth) +
                           " deep, or a mapping that merges itself");
  const std::string expected = "expected a mapping (such as *defaults) or a list of them";
  std::vector<YAML::Node> sources;
  if (value.IsMap()) {
    sources.push_back(value);
  } else if (value.IsSequence()) {
    for (const YAML::Node& s : value) {
      if (!s.IsMap()) return error(file_->Line(s, line), expected + ", found " + DescribeFound(s));
      sources.push_back(s);
    }
  } else {
    return error(line, expected + ", found " + DescribeFound(value));
  }
  for (const YAML::Node& source : sources) {
    // A merged mapping is held to the rules of one written in place: no field twice.
    std::unordered_map<std::string, int> own;
    std::vector<std::pair<YAML::Node, int>> nested;
    for (const auto& kv : source) {
      const YAML::Node& k = kv.first;
      const int kline = file_->Line(k, line);
      if (++*budget > kMaxMergedFields)
        return error(line, "more than " + std::to_string(kMaxMergedFields) + " fields merged");
      if (!k.IsScalar())
        return file_->ErrorAt(kline,
                              subject_ + ": expected a field name, found " + DescribeFound(k));
      const std::string key = IsMergeKey(k) ? "<<" : k.Scalar();
      if (auto [prior, fresh] = own.emplace(key, kline); !fresh)
        return file_->ErrorAt(kline, subject_ + ": field '" + Prefix() + key +
                                         "' given twice in a merged mapping (first at line " +
                                         std::to_string(prior->second) + ")");
      if (IsMergeKey(k)) {
        nested.push_back({kv.second, kline});
        continue;
      }
      // Given by this mapping itself or by an earlier merged one: that one stands.
      if (seen->count(key)) continue;
      AIRTIME_RETURN_IF_ERROR(AddEntry(key, k, kv.second, kline, seen, known));
    }
    for (const auto& [v, l] : nested)
      AIRTIME_RETURN_IF_ERROR(Merge(v, l, seen, known, depth + 1, budget));
  }
  return OkStatus();
}

StatusOr<MapReader> MapReader::Sub(std::string_view key,
                                   const std::vector<std::string>& known) const {
  return SubImpl(key, &known);
}

StatusOr<MapReader> MapReader::SubAnyKeys(std::string_view key) const {
  return SubImpl(key, nullptr);
}

StatusOr<MapReader> MapReader::SubImpl(std::string_view key,
                                       const std::vector<std::string>* known) const {
  const Entry* e = Find(key);
  if (e == nullptr) {
    MapReader r;
    r.file_ = file_;
    r.subject_ = subject_;
    r.field_ = Prefix() + std::string(key);
    r.line_ = line_;
    return r;
  }
  return OpenImpl(*file_, e->value, subject_, Prefix() + std::string(key), known, LineOf(key));
}

const MapReader::Entry* MapReader::Find(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

std::string MapReader::Prefix() const { return field_.empty() ? "" : field_ + "."; }

YAML::Node MapReader::Get(std::string_view key) const {
  const Entry* e = Find(key);
  return e ? e->value : YAML::Node();
}

int MapReader::LineOf(std::string_view key) const {
  const Entry* e = Find(key);
  if (e == nullptr) return line_;
  const int key_line = file_->Line(e->key_node, line_);
  // yaml-cpp places an empty value where the next token starts, often on a later line.
  if (e->value.IsNull()) return key_line;
  return file_->Line(e->value, key_line);
}

std::string MapReader::FieldName(std::string_view key) const {
  return subject_ + ": field '" + Prefix() + std::string(key) + "'";
}

Status MapReader::FieldError(std::string_view key, std::string_view message) const {
  return file_->ErrorAt(LineOf(key), FieldName(key) + ": " + std::string(message));
}

Status MapReader::Expected(std::string_view key, std::string_view expected,
                           std::string_view hint) const {
  return FieldError(key, "expected " + std::string(expected) + ", found " +
                             DescribeFound(Get(key)) + std::string(hint));
}

Status MapReader::Missing(std::string_view key, std::string_view hint) const {
  return file_->ErrorAt(line_, subject_ + ": missing required field '" + Prefix() +
                                   std::string(key) + "'" + std::string(hint));
}

Status MapReader::Require(std::string_view key, std::string_view hint) const {
  return Has(key) ? OkStatus() : Missing(key, hint);
}

Status MapReader::OneOf(std::string_view a, std::string_view b) const {
  if (Has(a) && Has(b))
    return FieldError(b, "give either '" + Prefix() + std::string(a) + "' or '" + Prefix() +
                             std::string(b) + "', not both");
  return OkStatus();
}

Status MapReader::String(std::string_view key, std::string* out) const {
  const Entry* e = Find(key);
  if (e == nullptr) return OkStatus();
  if (!e->value.IsScalar() || e->value.Scalar().empty()) return Expected(key, "a non-empty string");
  *out = e->value.Scalar();
  return OkStatus();
}

namespace {
std::string IntExpected(int64_t lo, int64_t hi) {
  const bool no_lo = lo <= std::numeric_limits<int>::min();
  const bool no_hi = hi >= std::numeric_limits<int>::max();
  if (no_lo && no_hi) return "an integer";
  if (no_hi) return "an integer >= " + std::to_string(lo);
  if (no_lo) return "an integer <= " + std::to_string(hi);
  return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}
}  // namespace

Status MapReader::Int(std::string_view key, int64_t* out, int64_t lo, int64_t hi) const {
  const Entry* e = Find(key);
  if (e == nullptr) return OkStatus();
  const std::string expected = IntExpected(lo, hi);
  if (!e->value.IsScalar()) return Expected(key, expected);
  auto v = ParseInt(e->value.Scalar());
  if (!v) return Expected(key, expected);
  if (*v < lo || *v > hi) {
    // Beyond a bound the short form leaves unsaid (an int's range): name both.
    const bool unsaid = (*v > hi && hi >= std::numeric_limits<int>::max()) ||
                        (*v < lo && lo <= std::numeric_limits<int>::min());
    return Expected(
        key, unsaid ? "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                    : expected);
  }
  *out = *v;
  return OkStatus();
}

Status MapReader::Int(std::string_view key, int* out, int64_t lo, int64_t hi) const {
  lo = std::max<int64_t>(lo, std::numeric_limits<int>::min());
  hi = std::min<int64_t>(hi, std::numeric_limits<int>::max());
  int64_t v = *out;
  AIRTIME_RETURN_IF_ERROR(Int(key, &v, lo, hi));
  *out = static_cast<int>(v);
  return OkStatus();
}

namespace {
std::string FormatNumber(double v) {
  std::ostringstream ss;
  ss << v;
  return ss.str();
}
}  // namespace

Status MapReader::Number(std::string_view key, double* out, double lo, double hi,
                         bool lo_open) const {
  const Entry* e = Find(key);
  if (e == nullptr) return OkStatus();
  std::string expected;
  if (std::isinf(hi))
    expected = std::string("a number ") + (lo_open ? "> " : ">= ") + FormatNumber(lo);
  else
    expected = std::string("a number in ") + (lo_open ? "(" : "[") + FormatNumber(lo) + ", " +
               FormatNumber(hi) + "]";
  if (!e->value.IsScalar()) return Expected(key, expected);
  auto v = ParseDouble(e->value.Scalar());
  if (!v || *v < lo || (lo_open && *v == lo) || *v > hi) return Expected(key, expected);
  *out = *v;
  return OkStatus();
}

Status MapReader::Bool(std::string_view key, bool* out) const {
  const Entry* e = Find(key);
  if (e == nullptr) return OkStatus();
  if (e->value.IsScalar()) {
    std::string s = ToLower(e->value.Scalar());
    if (s == "true" || s == "yes" || s == "on") {
      *out = true;
      return OkStatus();
    }
    if (s == "false" || s == "no" || s == "off") {
      *out = false;
      return OkStatus();
    }
  }
  return Expected(key, "true or false");
}

Status MapReader::Duration(std::string_view key, DurationMs* out) const {
  const Entry* e = Find(key);
  if (e == nullptr) return OkStatus();
  if (!e->value.IsScalar()) return Expected(key, kDurationExpected);
  auto v = ParseDurationMs(e->value.Scalar());
  if (!v) return Expected(key, kDurationExpected);
  *out = *v;
  return OkStatus();
}

Status MapReader::StringList(std::string_view key,
                             std::vector<std::pair<std::string, int>>* out) const {
  const Entry* e = Find(key);
  if (e == nullptr) return OkStatus();
  constexpr std::string_view kExpected = "a name or a list of names";
  if (e->value.IsScalar() && !e->value.Scalar().empty()) {
    out->push_back({e->value.Scalar(), LineOf(key)});
    return OkStatus();
  }
  if (!e->value.IsSequence() || e->value.size() == 0) return Expected(key, kExpected);
  for (const auto& item : e->value) {
    if (!item.IsScalar() || item.Scalar().empty())
      return file_->ErrorAt(file_->Line(item, LineOf(key)),
                            FieldName(key) + ": expected " + std::string(kExpected) + ", found " +
                                DescribeFound(item) + " in the list");
    out->push_back({item.Scalar(), file_->Line(item, LineOf(key))});
  }
  return OkStatus();
}

}  // namespace airtime::yaml_internal
