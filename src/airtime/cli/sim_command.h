// `airtime sim`: replay a scenario (or run a placement protocol) under several policies.
#pragma once

#include <CLI/CLI.hpp>

namespace airtime {

// Adds the `sim` subcommand to `app`; its callback sets `*exit_code`.
void AddSimCommand(CLI::App& app, int* exit_code);

}  // namespace airtime
