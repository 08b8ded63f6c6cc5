// exec_shim_for_test: a stand-in for `airtime _shim` in the executor tests.
//
// Usage (the executor's calling convention): exec_shim_for_test _shim --run-dir DIR
// [--user U] [--cgroup DIR]... -- ARGV...
#include <cstdio>
#include <string>
#include <vector>

#include "airtime/exec/shim.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] != "_shim") {
    std::fprintf(stderr, "%s: %s\n", argv[0], airtime::kShimUsage);
    return airtime::kShimSetupFailed;
  }
  auto parsed = airtime::ParseShimArgs(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], parsed.status().message().c_str());
    return airtime::kShimSetupFailed;
  }
  return airtime::RunShim(*parsed);
}
