// airtime: the command-line entry point. Subcommands live in their own files.
#include <CLI/CLI.hpp>
#include <iostream>

#include "airtime/cli/sim_command.h"

int main(int argc, char** argv) {
  CLI::App app{"airtime: a GPU orchestrator that schedules for return per installed GPU-hour"};
  app.require_subcommand(1);
  int exit_code = 0;
  airtime::AddSimCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
