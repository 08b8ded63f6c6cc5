// libFuzzer's entry point for a harness (the AIRTIME_FUZZ build).
#include "fuzz_one.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return FuzzOne(data, size);
}
