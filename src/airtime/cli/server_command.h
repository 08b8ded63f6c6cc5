// `airtime server`: the live control plane on this machine (daemon + HTTP API), and the
// hidden `airtime _shim` that the executor runs in front of every workload process.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

namespace airtime {

void AddServerCommand(CLI::App& app, int* exit_code);

// argv[1] == "_shim": runs the run supervisor (exec/shim.h) and returns its exit code;
// nullopt for any other command line. Handled before CLI parsing: the workload's own
// arguments must reach it untouched.
std::optional<int> MaybeRunShim(int argc, char** argv);

}  // namespace airtime
