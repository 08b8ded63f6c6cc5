#include "airtime/cli/sim_args.h"

#include <iostream>

#include "airtime/base/strings.h"
#include "airtime/policies/registry.h"

namespace airtime {

std::string DefaultPolicies() { return Join(PolicyRegistry::Builtin().compared_names(), ","); }

bool OpenHtmlReport(const std::string& path, const char* who, std::ofstream* out) {
  out->open(path, std::ios::binary | std::ios::trunc);
  if (*out) return true;
  std::cerr << who << ": --html: cannot write " << path
            << " (does its folder exist, and may this user write there?)\n";
  return false;
}

bool WriteHtmlReport(const HtmlPage& page, const std::string& path, const char* who, bool quiet,
                     std::ofstream* out) {
  *out << page.Render();
  out->close();
  if (!*out) {
    std::cerr << who << ": --html: cannot write " << path << "\n";
    return false;
  }
  if (!quiet) std::cout << "HTML report written to " << path << "\n";
  return true;
}

}  // namespace airtime
