// Shell completion: `airtime completion bash` prints a bash script that completes airtime's
// subcommands, their flags, and the values of flags that take one of a few words (-o,
// --state, --for). It is generated from the CLI's own definition, so a new flag completes
// without a change here. Load it with `source <(airtime completion bash)`.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

namespace airtime {

// Words a flag's value completes to, by flag name ("-o", "--state").
using FlagValues = std::map<std::string, std::vector<std::string>>;

// The bash completion script for `app` (whose name the completed command has).
std::string BashCompletion(const CLI::App& app, const FlagValues& values);

// Registers `airtime completion bash`; the script is made when it runs, from `app` as it is
// then (every subcommand registered).
void AddCompletionCommand(CLI::App& app, const FlagValues& values);

}  // namespace airtime
