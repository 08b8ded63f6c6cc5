// Client commands: the `airtime` subcommands that talk to a running daemon over its HTTP API
// (submit, ls, wait, logs, events, describe, cancel, priority, demand, gpus, ledger, holds, top),
// and `completion bash`.
//
// Each takes --addr (default $AIRTIME_ADDR, else 127.0.0.1:8470), --token (default
// $AIRTIME_TOKEN, else the admin token of DIR/tokens when --data DIR is given), and -o
// (output_format.h; --json is -o json). An error answer prints
// "airtime: error: MESSAGE" on stderr and sets the exit code to 1.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "airtime/base/status.h"

namespace airtime {

void AddClientCommands(CLI::App& app, int* exit_code);

// The token a client command uses: `flag` if set, else $AIRTIME_TOKEN, else the admin token
// of DIR/tokens for `data_dir` DIR, else "". An unreadable token file is an error.
StatusOr<std::string> ResolveClientToken(const std::string& flag, const std::string& data_dir);
// `flag` if set, else $AIRTIME_ADDR, else 127.0.0.1:8470.
std::string ResolveClientAddress(const std::string& flag);

}  // namespace airtime
