// Helpers shared by the end-to-end test programs.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace airtime::e2e {

// The whole file at `path` ("" when it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace airtime::e2e
