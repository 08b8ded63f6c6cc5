// Submission: a request body turned into the workload specs the daemon commits, with every
// check that needs no daemon state. Daemon::Submit calls it before anything is stored; the
// fuzzer (fuzz/http_body_fuzzer.cc) calls it alone.
//
// Rules for what a tenant sends (docs/workload-format.md):
//   - every string (name, tenant, command, env names and values, a model variant's command
//     and env, workdir, metrics path and names, mig, family) is valid UTF-8 and holds no NUL
//     byte;
//   - a label (a tenant, a request class's name) is also 1..128 bytes and holds no control
//     character (C0, DEL, C1, U+2028/9): labels are shown in lists and explanations and
//     exported as /metrics labels;
//   - a name is a label that is not all digits: the API reads an all-digit key as a
//     workload id, so such a name could not be reached by name;
//   - a JSON body may write characters beyond U+FFFF as surrogate pairs ("\ud83d\ude00");
//     a lone surrogate is refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "airtime/api/control_plane.h"
#include "airtime/base/status.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/model/workload.h"

namespace airtime {

inline constexpr size_t kMaxWorkloadNameBytes = 128;

// "" when `s` is valid UTF-8 without NUL, else what is wrong ("contains a NUL byte",
// "not valid UTF-8 (byte 3)").
std::string TextProblem(std::string_view s);
// TextProblem plus the label rules above.
std::string LabelProblem(std::string_view label);
// LabelProblem plus the name rule above.
std::string NameProblem(std::string_view name);
// Every string of `spec` against the rules; the error names the workload and the field:
// "request:1: workload 'x': field 'command[1]': contains a NUL byte".
Status CheckSubmittedText(const WorkloadSpec& spec);

struct Submission {
  std::vector<WorkloadSpec> specs;
  // The text the specs were parsed from: the body, with a JSON body's surrogate pairs
  // rewritten as YAML escapes. The store keeps this, so a restart reads it back the same.
  std::string body;
};

// Parses `body` (YAML, or JSON with surrogate pairs), refuses simulator-only parts and
// checks each workload's text; a tenant caller's workloads get its tenant (naming another is
// kPermissionDenied). A service with model variants comes back as its members
// (ExpandAllVariants), "<service>/<variant>", each running its variant's command. No daemon
// state: duplicate names are the daemon's to find.
StatusOr<Submission> ParseSubmission(const Caller& caller, std::string_view body,
                                     std::string_view origin);

// A submission the store kept, parsed back as ParseSubmission parsed it when it was accepted
// (services with variants expanded into their members, which the workload rows index).
StatusOr<Scenario> ParseStoredSubmission(std::string_view body, std::string_view origin);

}  // namespace airtime
