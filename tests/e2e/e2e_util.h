// Helpers shared by the end-to-end test programs.
#pragma once

#include <unistd.h>

#include <fstream>
#include <iostream>
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

// The airtime binary named by --airtime=PATH among the arguments (gtest's removed first);
// "" with a message on stderr, naming `program`, when it is missing or not executable.
inline std::string AirtimeFlag(int argc, char** argv, const char* program) {
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--airtime=", 0) == 0) path = a.substr(10);
  }
  if (path.empty() || access(path.c_str(), X_OK) != 0) {
    std::cerr << program << ": pass the airtime binary as --airtime=PATH (got '" << path << "')\n";
    return "";
  }
  return path;
}

}  // namespace airtime::e2e
