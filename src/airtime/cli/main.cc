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
    return app.exit(e);
  }
  return exit_code;
}
