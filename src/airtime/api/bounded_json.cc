// Bounded JSON: the iterative depth scan, the strict parse and the surrogate-pair rewrite.
#include "airtime/api/bounded_json.h"

#include <cstdio>
#include <set>
#include <vector>

namespace airtime {

using nlohmann::json;

Status CheckJsonBounds(std::string_view text, std::string_view what, const JsonLimits& limits) {
  const std::string w(what);
  if (text.size() > limits.max_bytes)
    return InvalidArgument(w + ": longer than " + std::to_string(limits.max_bytes) + " bytes");
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth)
        return InvalidArgument(w + ": nested deeper than " + std::to_string(limits.max_depth) +
                               " levels (at byte " + std::to_string(i) + ")");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return OkStatus();
}

StatusOr<json> ParseBoundedJson(std::string_view text, std::string_view what,
                                const JsonLimits& limits) {
  AIRTIME_RETURN_IF_ERROR(CheckJsonBounds(text, what, limits));
  // A key given twice in one object is ambiguous (the library keeps the last): refused, as
  // the workload loader refuses it. One set of keys per open object (the depth is bounded).
  std::vector<std::set<std::string>> keys;
  std::string twice;
  const json::parser_callback_t note = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() && twice.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second)
      twice = parsed.get<std::string>();
    return true;
  };
  try {
    json j = json::parse(text, note);
    if (!twice.empty())
      return InvalidArgument(std::string(what) + ": field '" + twice.substr(0, 128) +
                             "' given twice");
    return j;
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1E400
    std::string message = e.what();
    // "[json.exception.parse_error.101] parse error at ...": keep what a user reads.
    if (message.rfind("[json.", 0) == 0 && message.find("] ") != std::string::npos)
      message = message.substr(message.find("] ") + 2);
    // "last read: '...'" quotes the token so far, which may be most of the body.
    if (message.size() > 240) message = message.substr(0, 240) + "...'";
    if (message.find("surrogate") != std::string::npos)
      message +=
          " (a lone UTF-16 surrogate is not a character: write both halves of the "
          "pair, e.g. \\ud83d\\ude00, or the character itself)";
    return InvalidArgument(std::string(what) + ": not valid JSON: " + message);
  }
}

std::string RewriteSurrogatePairs(std::string_view t) {
  const auto hex4 = [&](size_t at, unsigned* v) {
    if (at + 4 > t.size()) return false;
    unsigned x = 0;
    for (size_t k = at; k < at + 4; ++k) {
      const char c = t[k];
      x <<= 4;
      if (c >= '0' && c <= '9') {
        x |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        x |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        x |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *v = x;
    return true;
  };
  std::string out;
  out.reserve(t.size());
  bool in_string = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (!in_string) {
      in_string = c == '"';
      out += c;
      continue;
    }
    if (c == '"') {
      in_string = false;
      out += c;
      continue;
    }
    if (c != '\\' || i + 1 >= t.size()) {
      out += c;
      continue;
    }
    unsigned hi = 0, lo = 0;
    if (t[i + 1] == 'u' && hex4(i + 2, &hi) && hi >= 0xD800 && hi <= 0xDBFF && i + 11 < t.size() &&
        t[i + 6] == '\\' && t[i + 7] == 'u' && hex4(i + 8, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
      const unsigned cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\U%08X", cp);
      out += buf;
      i += 11;
      continue;
    }
    out += c;  // another escape: copy it whole so its second character is not read anew
    out += t[i + 1];
    ++i;
  }
  return out;
}

std::string DumpJson(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace airtime
