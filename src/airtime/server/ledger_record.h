// The ledger as the daemon keeps it across restarts: the running totals of every bucket,
// the value earned, when counting began and how much of that time no daemon observed.
//
// The daemon saves it in the store's meta table (key "ledger") every few seconds and when
// it stops; the next daemon on the same store carries the totals on, and counts the time
// between the last save and its own start as not observed (the daemon was down, or killed
// after its last save): that time lands in no bucket, since nobody saw where it went.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/ledger/ledger.h"
#include "airtime/model/gpu_catalog.h"

namespace airtime {

struct LedgerRecord {
  TimeMs since = 0;           // when the first daemon on this store began counting
  TimeMs saved_at = 0;        // the time the totals reach
  DurationMs unobserved = 0;  // time within [since, saved_at] that no daemon counted
  LedgerTotals totals;        // by_type indexed by GpuTypeId of the catalogue given to the codec
  double value = 0;           // value earned, in the owner's units
  std::vector<double> value_by_type;  // of it, by the GPU type that earned it (GpuTypeId)
};

// JSON text, buckets by name (integer milli-GPU-milliseconds, so nothing is rounded), and
// the same per GPU type ("by_type") and value per type ("value_by_type"), types by their
// names in `catalog`.
std::string EncodeLedgerRecord(const LedgerRecord& record,
                               const GpuCatalog& catalog = GpuCatalog::Builtin());
// The error names the field that is missing or wrong. Buckets missing from the text (an
// older airtime) count as 0, as do by_type and value_by_type; unknown buckets and types are
// an error, as are totals (of all, or of a type) that do not add up.
StatusOr<LedgerRecord> DecodeLedgerRecord(std::string_view text,
                                          const GpuCatalog& catalog = GpuCatalog::Builtin());

}  // namespace airtime
