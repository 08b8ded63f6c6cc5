// Reads an interference table (model/interference.h) from a CSV file, for a simulator that
// should slow shared work as a site measured it on its own GPUs rather than as Gavel did.
//
// Header `family,other,factor`, then one row per pair: the speed factor, in (0, 1], of work
// of `family` while work of `other` shares its GPU by fractions. A pair listed one way holds
// both ways; listed both ways, each direction has its own factor. The row `*,*,F` sets the
// factor of every pair not listed, work of no family included (default 1: no slowdown). Family
// names are matched without regard to case; `*` is not a family. Every error names the file
// and line: a missing column, a factor out of range, a pair listed twice in one direction,
// a family spelled two ways.
//
// scripts/device/interference-check.sh writes such a file (interference.csv) from what it
// measures.
#pragma once

#include <string>
#include <string_view>

#include "airtime/base/status.h"
#include "airtime/model/interference.h"

namespace airtime {

StatusOr<InterferenceModel> ParseInterferenceCsv(std::string text, std::string_view filename);
StatusOr<InterferenceModel> LoadInterferenceFile(const std::string& path);

}  // namespace airtime
