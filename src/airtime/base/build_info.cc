#include "airtime/base/build_info.h"

#include "build_commit.inc"  // generated: #define AIRTIME_BUILD_COMMIT "..."

namespace airtime {

const char* BuildVersion() { return AIRTIME_VERSION; }
const char* BuildCommit() { return AIRTIME_BUILD_COMMIT; }

}  // namespace airtime
