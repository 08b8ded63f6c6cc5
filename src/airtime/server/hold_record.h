// The 3 a.m. report as the daemon keeps it across restarts: the per-service summaries of the
// calls not saved one by one, and the newest calls (HoldBookState), as of a time.
//
// The daemon saves it in the store's meta table (key "holds") every minute and when it
// stops (daemon.h: DaemonOptions::holds_save_interval); the next daemon on the same store
// carries it on (HoldBook::Carry): the calls that stood at the save are closed then, scored
// as they were, since the policy that made them starts afresh.
#pragma once

#include <string>
#include <string_view>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/ledger/hold_book.h"

namespace airtime {

struct HoldRecord {
  TimeMs saved_at = 0;  // the time the scores reach
  HoldBookState state;
};

// JSON text: the fields of GET /v1/holds (hold_json.h) for the summaries ("services") and
// the calls ("decisions"), each call with what scoring needs besides (hours stood, replica
// GPUs, capacity, value per request, cold start).
std::string EncodeHoldRecord(const HoldRecord& record);
// The error names the field that is missing or wrong.
StatusOr<HoldRecord> DecodeHoldRecord(std::string_view text);

}  // namespace airtime
