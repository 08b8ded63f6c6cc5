// airtime: the command-line entry point. Subcommands live in their own files.
#include <CLI/CLI.hpp>
#include <iostream>

#include "airtime/cli/client_commands.h"
#include "airtime/cli/policies_command.h"
#include "airtime/cli/server_command.h"
#include "airtime/cli/sim_command.h"

int main(int argc, char** argv) {
  if (auto shim = airtime::MaybeRunShim(argc, argv)) return *shim;
  CLI::App app{"airtime: a GPU orchestrator that schedules for return per installed GPU-hour"};
  app.require_subcommand(1);
  int exit_code = 0;
  airtime::AddSimCommand(app, &exit_code);
  airtime::AddPoliciesCommand(app, &exit_code);
  airtime::AddServerCommand(app, &exit_code);
  airtime::AddClientCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A malformed command line is a usage error, 2 as for every command (CLI11's own codes,
    // 100 and up, would read as a command's own failures); --help and --version are 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}
