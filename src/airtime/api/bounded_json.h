// Bounded JSON: request bodies are checked for size and nesting depth by one iterative pass
// before nlohmann::json (whose copies, comparisons and dumps recurse) sees them.
//
// A body nested 60,000 levels deep once overflowed a worker's stack when the parsed value
// was copied; with the depth bounded first, nothing recursive runs deeper than max_depth.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

struct JsonLimits {
  size_t max_bytes = 1 << 20;  // longer text is refused
  int max_depth = 64;          // arrays and objects nested deeper are refused
};

// Checks `text`'s size and how deep its '[' and '{' nest (outside double-quoted strings),
// without parsing it: valid JSON, YAML flow style or garbage alike. kInvalidArgument naming
// `what` ("request", "body") and the byte where the limit was passed.
Status CheckJsonBounds(std::string_view text, std::string_view what, const JsonLimits& limits = {});

// CheckJsonBounds, then a strict parse (RFC 8259, UTF-8). Errors name `what` and say where:
// "body: not valid JSON: parse error at line 1, column 3: ...".
StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, std::string_view what,
                                          const JsonLimits& limits = {});

// Valid JSON text with each escaped UTF-16 surrogate pair ("\ud83d\ude00") rewritten as the
// one 8-digit escape YAML reads ("\U0001F600"); nothing else changes, lines stay where they
// were. YAML parsers refuse the pair's halves as characters of their own.
std::string RewriteSurrogatePairs(std::string_view json_text);

// j.dump(indent) that never throws: a string that is not UTF-8 (a row from an older store)
// is written with U+FFFD for its bad bytes.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

}  // namespace airtime
