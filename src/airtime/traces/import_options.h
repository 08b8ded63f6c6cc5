// ImportOptions and ImportStats: what every trace importer is told and what it reports.
//
// A broken row (wrong field count, a field that does not parse, a value out of range, an
// unknown GPU type) stops the import with InvalidArgument "FILE:LINE: column 'NAME': ..."
// unless `skip_bad_rows` is set; then the row is left out, counted in `rows_skipped`, and
// its message kept in `first_errors` (the first kMaxKeptErrors only). A row that is well
// formed but not wanted (a filter, the limit) counts in `rows_filtered`, so that
// rows_read == rows_imported + rows_skipped + rows_filtered whenever an import succeeds
// (an importer that stops at its limit reads no further rows). Importers clear the stats
// they are given before they start, and accept a null pointer. Plain value types.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/gpu_catalog.h"

namespace airtime {

struct ImportOptions {
  bool skip_bad_rows = false;
  size_t limit = 0;  // at most this many rows imported; 0: all (each importer says which)
  const GpuCatalog* catalog = nullptr;  // GPU types to resolve names in; null: Builtin()

  const GpuCatalog& gpu_catalog() const { return catalog ? *catalog : GpuCatalog::Builtin(); }
};

struct ImportStats {
  static constexpr size_t kMaxKeptErrors = 10;

  size_t rows_read = 0;                   // data rows seen (blank lines and the header not counted)
  size_t rows_imported = 0;               // rows that became part of the result
  size_t rows_skipped = 0;                // broken rows left out under skip_bad_rows
  size_t rows_filtered = 0;               // good rows left out by a filter or the limit
  std::vector<std::string> first_errors;  // messages of the first skipped rows
};

// What an importer does with a broken row: returns `error` unless `options.skip_bad_rows`;
// then it counts the row as skipped in `stats` (if not null), keeps the message while
// fewer than kMaxKeptErrors are kept, and returns OK so the import goes on.
Status HandleBadRow(Status error, const ImportOptions& options, ImportStats* stats);

}  // namespace airtime
