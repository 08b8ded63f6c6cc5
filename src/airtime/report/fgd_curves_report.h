// The sections of `airtime sim --html` for the FGD placement protocol: each policy's
// allocation ratio against arrived demand (mean over the seeds) beside the published curve
// of the same policy (fgd/fgd_expected.h), and the figures at 50, 80, 100 and 130%.
#pragma once

#include <string>
#include <vector>

#include "airtime/fgd/fgd_expected.h"
#include "airtime/fgd/fgd_protocol.h"
#include "airtime/html/page.h"

namespace airtime {

// Appends the sections (level-3 headings) for `report`. `published`: the published curves
// (null when there are none: a note says so, naming `published_note`), of which those of
// `workload` (the pod list's name in them) are drawn.
void AddFgdSections(HtmlPage& page, const FgdReport& report,
                    const std::vector<FgdPublishedCurve>* published, const std::string& workload,
                    const std::string& published_note);

}  // namespace airtime
