// Request parsing: query strings and the one-field JSON bodies.
#include "airtime/api/request_parse.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>

#include "airtime/api/bounded_json.h"
#include "airtime/base/strings.h"
#include "airtime/base/utf8.h"
#include "airtime/model/workload.h"

namespace airtime {

namespace {
// An integer in a query string, as written: digits with an optional '-', nothing around
// them (ParseInt would take " 1" and "+1" decoded to " 1").
std::optional<int64_t> QueryInt(std::string_view value) {
  int64_t v = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, v);
  if (value.empty() || ec != std::errc() || p != end) return std::nullopt;
  return v;
}
}  // namespace
namespace {

using nlohmann::json;

// Bodies of one small field: nothing needs more than a level or two. (The server bounds
// their size with --max-body.)
constexpr JsonLimits kSmallBody{1 << 20, 8};

// "" when `s` is fine as a query name or value, else what is wrong with it.
std::string TextProblem(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(s, i, &cp);
    if (n == 0) return "not valid UTF-8";
    if (cp == 0) return "contains a NUL byte";
    if (IsControlCodePoint(cp)) return "contains a control character";
    i += n;
  }
  return "";
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

StatusOr<std::string> Decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      const int hi = i + 2 < s.size() ? HexValue(s[i + 1]) : -1;
      const int lo = i + 2 < s.size() ? HexValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return InvalidArgument("query: malformed percent-escape at '" +
                               std::string(s.substr(i, 3)) + "' (expected %XX, two hex digits)");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The field of a small JSON body such as {"priority": 5}, and those of `optional` it has
// (null where it has not), in that order; errors name the field.
StatusOr<std::vector<json>> BodyFields(std::string_view body, const std::string& field,
                                       const std::vector<std::string>& optional,
                                       const std::string& example) {
  const std::string where = "field '" + field + "': ";
  auto parsed = ParseBoundedJson(body, "body", kSmallBody);
  if (!parsed.ok()) {
    // Too deep or too long is its own message; a syntax error gets the example, then what
    // the parser found and where (a number out of range, a lone surrogate, ...).
    if (parsed.status().message().find("not valid JSON") == std::string::npos)
      return parsed.status();
    return InvalidArgument(where + "expected a JSON object body such as " + example + "; " +
                           parsed.status().message());
  }
  json& j = *parsed;
  if (!j.is_object())
    return InvalidArgument(where + "expected a JSON object body such as " + example);
  for (const auto& [key, value] : j.items()) {
    if (key != field && std::find(optional.begin(), optional.end(), key) == optional.end())
      return InvalidArgument("field '" + ReplaceInvalidUtf8(key) + "': unknown (expected " +
                             example + ")");
  }
  if (!j.contains(field)) return InvalidArgument(where + "missing (expected " + example + ")");
  std::vector<json> out = {std::move(j[field])};
  for (const std::string& o : optional) out.push_back(j.contains(o) ? std::move(j[o]) : json());
  return out;
}

StatusOr<json> BodyField(std::string_view body, const std::string& field,
                         const std::string& example) {
  auto fields = BodyFields(body, field, {}, example);
  if (!fields.ok()) return fields.status();
  return std::move(fields->front());
}

std::string Dump(const json& j) {
  std::string s = DumpJson(j);
  if (s.size() > 80) {
    s.resize(80);
    s += "...";
  }
  return s;
}

}  // namespace

StatusOr<QueryParams> ParseQueryString(std::string_view query, const QueryLimits& limits) {
  if (query.size() > limits.max_bytes)
    return InvalidArgument("query: longer than " + std::to_string(limits.max_bytes) + " bytes");
  QueryParams out;
  size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(start, end - start);
    start = end + 1;
    if (part.empty()) {
      if (end == query.size()) break;
      continue;
    }
    if (out.size() >= limits.max_params)
      return InvalidArgument("query: more than " + std::to_string(limits.max_params) +
                             " parameters");
    const size_t eq = part.find('=');
    auto name = Decode(part.substr(0, eq));
    if (!name.ok()) return name.status();
    auto value = Decode(eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1));
    if (!value.ok()) return value.status();
    if (std::string p = TextProblem(*name); !p.empty())
      return InvalidArgument("query: a parameter name " + p);
    if (std::string p = TextProblem(*value); !p.empty())
      return InvalidArgument("query '" + *name + "': " + p);
    if (value->size() > limits.max_value_bytes)
      return InvalidArgument("query '" + *name + "': longer than " +
                             std::to_string(limits.max_value_bytes) + " bytes");
    out.emplace_back(std::move(*name), std::move(*value));
    if (end == query.size()) break;
  }
  return out;
}

Status CheckNoQuery(std::string_view query, const QueryLimits& limits) {
  auto params = ParseQueryString(query, limits);
  if (!params.ok()) return params.status();
  if (params->empty()) return OkStatus();
  return InvalidArgument("query '" + params->front().first +
                         "': unknown (this endpoint takes no query parameters)");
}

StatusOr<ListFilter> ParseListQuery(std::string_view query, const Caller& caller,
                                    const QueryLimits& limits) {
  auto params = ParseQueryString(query, limits);
  if (!params.ok()) return params.status();
  ListFilter f;
  std::vector<std::string> seen;
  for (const auto& [name, value] : *params) {
    for (const std::string& s : seen)
      if (s == name) return InvalidArgument("query '" + name + "': given twice");
    seen.push_back(name);
    if (name == "state") {
      static const std::vector<std::string> kStates = {"active",    "queued", "running",
                                                       "succeeded", "failed", "cancelled"};
      bool known = value.empty();
      for (const std::string& s : kStates) known = known || s == value;
      if (!known)
        return InvalidArgument("query 'state': expected one of " + Join(kStates, ", ") +
                               ", found '" + value + "'");
      f.state = value;
    } else if (name == "kind") {
      const auto kind = ParseKind(value);
      if (!value.empty() && !kind.ok()) {
        std::vector<std::string> kinds;
        for (int i = 0; i < kWorkloadKindCount; ++i)
          kinds.push_back(KindName(static_cast<WorkloadKind>(i)));
        return InvalidArgument("query 'kind': expected one of " + Join(kinds, ", ") + ", found '" +
                               value + "'");
      }
      // A synonym a workload file takes (serving, inference) lists what it names there.
      f.kind = value.empty() ? value : KindName(*kind);
    } else if (name == "tenant") {
      f.tenant = value;
    } else if (name == "limit") {
      auto limit = QueryInt(value);
      if (!limit || *limit < 0 || *limit > INT_MAX)
        return InvalidArgument("query 'limit': expected an integer from 0 to " +
                               std::to_string(INT_MAX) + ", found '" + value + "'");
      f.limit = static_cast<int>(*limit);
    } else if (name == "offset") {
      auto offset = QueryInt(value);
      if (!offset || *offset < 0 || *offset > INT_MAX)
        return InvalidArgument("query 'offset': expected an integer from 0 to " +
                               std::to_string(INT_MAX) + ", found '" + value + "'");
      f.offset = static_cast<int>(*offset);
    } else {
      return InvalidArgument("query '" + name +
                             "': unknown (expected state, kind, tenant, limit or offset)");
    }
  }
  if (!caller.admin && !f.tenant.empty()) {
    if (f.tenant != caller.tenant) {
      return Status(StatusCode::kPermissionDenied,
                    "query 'tenant': only the admin may list another tenant's workloads");
    }
    f.tenant.clear();  // a tenant sees only its own anyway
  }
  return f;
}

StatusOr<HoldsFilter> ParseHoldsQuery(std::string_view query, const QueryLimits& limits) {
  auto params = ParseQueryString(query, limits);
  if (!params.ok()) return params.status();
  HoldsFilter f;
  std::vector<std::string> seen;
  for (const auto& [name, value] : *params) {
    for (const std::string& s : seen)
      if (s == name) return InvalidArgument("query '" + name + "': given twice");
    seen.push_back(name);
    if (name == "service") {
      f.service = value;
    } else if (name == "limit") {
      auto limit = QueryInt(value);
      if (!limit || *limit < 1 || *limit > kMaxHoldsLimit)
        return InvalidArgument("query 'limit': expected an integer from 1 to " +
                               std::to_string(kMaxHoldsLimit) + ", found '" + value + "'");
      f.limit = static_cast<int>(*limit);
    } else {
      return InvalidArgument("query '" + name + "': unknown (expected service or limit)");
    }
  }
  return f;
}

StatusOr<LogQuery> ParseLogQuery(std::string_view query, const QueryLimits& limits) {
  auto params = ParseQueryString(query, limits);
  if (!params.ok()) return params.status();
  LogQuery q;
  std::vector<std::string> seen;
  for (const auto& [name, value] : *params) {
    for (const std::string& s : seen)
      if (s == name) return InvalidArgument("query '" + name + "': given twice");
    seen.push_back(name);
    auto v = QueryInt(value);
    if (name == "run") {
      if (!v || *v < 0)
        return InvalidArgument("query 'run': expected a run id (0: the latest), found '" + value +
                               "'");
      q.run = *v;
    } else if (name == "offset") {
      if (!v || *v < -1)
        return InvalidArgument("query 'offset': expected a byte offset (-1: the end), found '" +
                               value + "'");
      q.offset = *v;
    } else if (name == "stream") {
      if (value != "stdout" && value != "stderr")
        return InvalidArgument("query 'stream': expected stdout or stderr, found '" + value + "'");
      q.stderr_log = value == "stderr";
    } else if (name == "limit") {
      if (!v || *v < 1 || *v > kMaxLogLimit)
        return InvalidArgument("query 'limit': expected an integer from 1 to " +
                               std::to_string(kMaxLogLimit) + ", found '" + value + "'");
      q.limit = *v;
    } else {
      return InvalidArgument("query '" + name +
                             "': unknown (expected run, stream, offset or limit)");
    }
  }
  return q;
}

StatusOr<HistoryFilter> ParseHistoryQuery(std::string_view query, const QueryLimits& limits) {
  auto params = ParseQueryString(query, limits);
  if (!params.ok()) return params.status();
  HistoryFilter f;
  std::vector<std::string> seen;
  for (const auto& [name, value] : *params) {
    for (const std::string& s : seen)
      if (s == name) return InvalidArgument("query '" + name + "': given twice");
    seen.push_back(name);
    if (name == "gpu") {
      f.gpu = value;
    } else if (name == "minutes") {
      auto minutes = QueryInt(value);
      if (!minutes || *minutes < 1 || *minutes > kMaxHistoryMinutes)
        return InvalidArgument("query 'minutes': expected an integer from 1 to " +
                               std::to_string(kMaxHistoryMinutes) + ", found '" + value + "'");
      f.minutes = static_cast<int>(*minutes);
    } else {
      return InvalidArgument("query '" + name + "': unknown (expected gpu or minutes)");
    }
  }
  return f;
}

StatusOr<int> ParsePriorityBody(std::string_view body) {
  auto v = BodyField(body, "priority", "{\"priority\": 5}");
  if (!v.ok()) return v.status();
  if (!v->is_number_integer() || *v < INT_MIN || *v > INT_MAX) {
    return InvalidArgument("field 'priority': expected an integer from " + std::to_string(INT_MIN) +
                           " to " + std::to_string(INT_MAX) + ", got " + Dump(*v));
  }
  return v->get<int>();
}

StatusOr<DemandReport> ParseDemandBody(std::string_view body) {
  auto f =
      BodyFields(body, "rps", {"class"}, "{\"rps\": 12.5} or {\"rps\": 12.5, \"class\": \"code\"}");
  if (!f.ok()) return f.status();
  const json& rps = (*f)[0];
  const json& cls = (*f)[1];
  if (!rps.is_number() || !std::isfinite(rps.get<double>()) || rps.get<double>() < 0 ||
      rps.get<double>() > kMaxRps)
    return InvalidArgument("field 'rps': expected a request rate from 0 to 1e9 a second, got " +
                           Dump(rps));
  DemandReport out{rps.get<double>() + 0.0, ""};  // -0.0 is 0
  if (!cls.is_null()) {
    if (!cls.is_string() || cls.get<std::string>().empty() ||
        !TextProblem(cls.get<std::string>()).empty())
      return InvalidArgument(
          "field 'class': expected the name of one of the service's request "
          "classes, got " +
          Dump(cls));
    out.request_class = cls.get<std::string>();
  }
  return out;
}

}  // namespace airtime
