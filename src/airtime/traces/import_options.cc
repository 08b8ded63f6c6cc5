#include "airtime/traces/import_options.h"

namespace airtime {

Status HandleBadRow(Status error, const ImportOptions& options, ImportStats* stats) {
  if (error.ok() || !options.skip_bad_rows) return error;
  if (stats) {
    ++stats->rows_skipped;
    if (stats->first_errors.size() < ImportStats::kMaxKeptErrors)
      stats->first_errors.push_back(error.message());
  }
  return OkStatus();
}

}  // namespace airtime
