// `airtime sim --protocol fgd`: the FGD placement experiment (wired once airtime_fgd lands).
#include <iostream>
#include <string>
#include <vector>

namespace airtime {

int RunProtocol(const std::string& protocol, const std::string&, const std::string&,
                const std::vector<std::string>&, int, const std::string&, bool) {
  std::cerr << "airtime sim: protocol '" << protocol << "' is not available in this build\n";
  return 2;
}

}  // namespace airtime
