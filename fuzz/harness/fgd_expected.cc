// Harness: the FGD paper's published allocation curves (fgd_expected_allocation.csv), read by
// the FGD protocol.
#include "airtime/fgd/fgd_expected.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string path = airtime::fuzz::AsFile(data, size);
  auto curves = airtime::ReadFgdPublished(path);
  (void)curves;
  return 0;
}
