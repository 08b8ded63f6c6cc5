// exec_shim_for_test: a stand-in for `airtime _shim` in the executor tests.
//
// Usage (the executor's calling convention): exec_shim_for_test _shim --run-dir DIR -- ARGV...
#include <cstdio>
#include <string>
#include <vector>

#include "airtime/exec/shim.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 5 || args[0] != "_shim" || args[1] != "--run-dir" || args[3] != "--") {
    std::fprintf(stderr, "usage: %s _shim --run-dir DIR -- PROGRAM [ARGS...]\n", argv[0]);
    return airtime::kShimSetupFailed;
  }
  return airtime::RunShim(args[2], std::vector<std::string>(args.begin() + 4, args.end()));
}
