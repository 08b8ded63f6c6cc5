// `airtime policies`: the policies the registry holds, in registration order (the order
// `airtime sim` compares them in by default), each with its one-line description and its
// parameter keys. Plain text, --json, or --markdown (the table scripts/gen-docs.sh writes
// into docs/policies.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace airtime {

class PolicyRegistry;

enum class PolicyListFormat { kText, kJson, kMarkdown };

// The listing of `registry` in `format`, ending in a newline.
std::string FormatPolicyList(const PolicyRegistry& registry, PolicyListFormat format);

// Adds the `policies` subcommand to `app`; its callback sets `*exit_code`.
void AddPoliciesCommand(CLI::App& app, int* exit_code);

}  // namespace airtime
