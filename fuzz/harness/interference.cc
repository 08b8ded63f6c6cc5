// Harness: the interference table reader (`airtime sim --interference FILE`).
#include "airtime/sim/interference_file.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string path = airtime::fuzz::AsFile(data, size);
  auto model = airtime::LoadInterferenceFile(path);
  (void)model;
  return 0;
}
