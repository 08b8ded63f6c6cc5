// CheckYamlBudget: validates and measures YAML text with libyaml before yaml-cpp parses it.
//
// Why: yaml-cpp 0.7.0 (Debian 12) cannot be trusted with hostile text. Its LoadAll loops
// forever on a document that starts with a token the parser does not consume (a lone ","
// at the top level): HandleNextDocument sees the ',' (FLOW_ENTRY), builds a null document
// without popping the token, and returns "one more document" again and again, so a one-byte
// file or request body grows memory until the process is killed. yaml-cpp has a recursion
// guard (depth 2000) but no size, document or alias budget.
//
// So every YAML text airtime reads (cluster and workload files, workload submissions to the
// daemon) is first run through libyaml's event parser (the reference C implementation,
// fuzzed in OSS-Fuzz for years), which checks the syntax and counts, with budgets:
//   bytes            the whole text (the caller's limit: a file or request body budget)
//   depth            nested collections
//   nodes            scalars and collections, with each alias counted as the size of the
//                    node it names (so an alias "billion laughs" bomb is over budget long
//                    before anything expands it)
//   aliases          alias references
//   documents        documents in the stream
//   scalar bytes     one scalar's length
// Only text that passes reaches yaml-cpp. A syntax error is
//   "FILE:LINE: YAML syntax error: <libyaml's problem> at column C[ (while <context>)]"
// and an exceeded budget "FILE:LINE: YAML too large: <what> (the limit is N)". Thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime::yaml_internal {

struct YamlBudget {
  size_t max_bytes = size_t{16} << 20;  // 16 MiB; the largest example is under 1 MiB
  int max_depth = 64;
  size_t max_nodes = 1'000'000;
  size_t max_aliases = 10'000;
  size_t max_documents = 1'000;
  size_t max_scalar_bytes = size_t{1} << 20;
};

// What CheckYamlBudget measured.
struct YamlShape {
  size_t documents = 0;
  size_t nodes = 0;  // aliases counted at the size of what they name
  int depth = 0;
};

// Checks `text` as described above; `filename` names it in messages.
StatusOr<YamlShape> CheckYamlBudget(std::string_view text, std::string_view filename,
                                    const YamlBudget& budget = {});

}  // namespace airtime::yaml_internal
