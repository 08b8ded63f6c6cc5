// Replays inputs through a harness's FuzzOne, without libFuzzer: the ctest fuzz_replay.NAME of
// every build (GCC, ASan, TSan) runs each file of fuzz/corpus/NAME and fuzz/regressions/NAME,
// so a crash fuzzing once found stays a failing test if it comes back.
//
// Usage: fuzz_replay_NAME PATH...  (files, or directories whose files are replayed in name
// order; a missing directory is skipped). Prints each file before running it, so that a crash
// names its input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_one.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p = argv[i];
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> in_dir;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file()) in_dir.push_back(e.path());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    }
  }
  for (const auto& f : files) {
    std::printf("replay %s\n", f.c_str());
    std::fflush(stdout);
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    FuzzOne(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return files.empty() ? 1 : 0;  // a harness without a seed corpus is a mistake
}
