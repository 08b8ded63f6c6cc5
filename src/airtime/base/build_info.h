// The version and commit this binary was built from (`airtime_build_info` in /metrics).
//
// The version is the CMake project's; the commit is the source tree's `git rev-parse
// --short=12 HEAD` at build time, with "-dirty" when tracked files differed from it, or
// "unknown" outside a git checkout. The commit is read at every build (build_commit.cmake),
// so it follows the tree without a new configure.
#pragma once

namespace airtime {

const char* BuildVersion();
const char* BuildCommit();

}  // namespace airtime
