// The entry point every harness in fuzz/ defines (fuzz/README.md).
//
// A harness is one .cc with `int FuzzOne(const uint8_t* data, size_t size)`: it feeds the
// bytes to one parser and returns 0, whatever the input (bad input must come back as an error
// Status, never a crash, a leak, a hang or unbounded memory). The same function is linked two
// ways: with libfuzzer_main.cc into fuzz_NAME (clang, -fsanitize=fuzzer,address,undefined;
// the AIRTIME_FUZZ build), and with replay_main.cc into fuzz_replay_NAME (every normal build:
// replays fuzz/corpus/NAME and fuzz/regressions/NAME as the ctest fuzz_replay.NAME).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

int FuzzOne(const uint8_t* data, size_t size);

namespace airtime::fuzz {

// A path naming a memory file holding `data` (memfd; /proc/self/fd/N), for parsers that take a
// path. The file is reused: each call replaces its content. Aborts if no memfd can be made.
std::string AsFile(const uint8_t* data, size_t size);

// For a trace importer: `import(path, skip_bad_rows)` runs it on the input as a file, once
// stopping at the first broken row and once skipping broken rows.
template <typename Import>
int FuzzImporter(const uint8_t* data, size_t size, Import import) {
  const std::string path = AsFile(data, size);
  for (bool skip : {false, true}) import(path, skip);
  return 0;
}

}  // namespace airtime::fuzz
