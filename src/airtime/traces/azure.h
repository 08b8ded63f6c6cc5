// Importer for the Azure LLM inference traces of 2023 (one hour of requests each).
//
// File: `TIMESTAMP,ContextTokens,GeneratedTokens`, one request a row in time order, e.g.
// `2023-11-16 18:17:03.9799600,4808,10` (CRLF line ends). ReadAzureTrace keeps the arrival
// times (ms after the first request) and a token summary; a service's per-replica capacity
// depends on its prompt and answer lengths, so the summary travels with the demand curve.
// `limit` keeps the first N requests. Broken rows: wrong field count, a timestamp that is
// not "YYYY-MM-DD HH:MM:SS[.fraction]", a token count that is not an integer >= 0.
//
// AzureDemandCurve turns arrivals into a realtime demand curve: arrivals are counted per
// `bucket` (default 60 s) and each bucket becomes a DemandPoint{at = k x bucket, rps =
// count / bucket seconds}, time 0 being the first request; a last point with rps 0 marks
// the end of the data.
//
// With `diurnal_day`, time 0 is midnight and the curve covers `days` x 24 h: the hour's
// full buckets (a partial last bucket is dropped) are tiled end to end, bucket k taking
// pattern[k mod n], and each bucket is multiplied by the diurnal factor of the hour of day
// h at the bucket's middle:
//   phase(h) = (h - 4) / 10             for 4 <= h < 14   (rising, 10 h)
//            = 1 - ((h - 14) mod 24) / 14 otherwise       (falling, 14 h)
//   D(h)     = 0.25 + 0.75 x (1 - cos(pi x phase(h))) / 2
// so D is 0.25 at 04:00, 1.0 at 14:00, smooth (zero slope at both), never below 0.25:
// the recorded hour's rates are taken as the level at the daily peak. Days 5 and 6 of
// every week (day 0 is a Monday) are further multiplied by `weekend_factor`. Finally, if
// `peak_rps` > 0 the whole curve is scaled so its largest rps equals it. The bucket must
// divide 24 h when tiling. Deterministic; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/model/workload.h"
#include "airtime/traces/import_options.h"

namespace airtime {

struct AzureTokenSummary {
  size_t requests = 0;
  double mean_context_tokens = 0;
  double mean_generated_tokens = 0;
  int64_t max_context_tokens = 0;
  int64_t max_generated_tokens = 0;
};

struct AzureTrace {
  std::vector<DurationMs> arrivals;  // ms after the first request, file order
  int64_t first_request_ms = 0;      // the first request's timestamp read as UTC
  DurationMs span = 0;               // last arrival - first arrival
  AzureTokenSummary tokens;
};

// The most points a demand curve may have: about 1.9 years of minute buckets. A trace or
// options that need more are an InvalidArgument, never an allocation of that size.
inline constexpr size_t kMaxDemandPoints = 1'000'000;

struct AzureOptions : ImportOptions {
  DurationMs bucket = kMinute;
  bool diurnal_day = false;     // tile the hour over a day shaped by D(h) above
  double peak_rps = 0;          // > 0: scale so the curve's maximum is this
  int days = 1;                 // with diurnal_day: this many days
  double weekend_factor = 1.0;  // with diurnal_day: multiplies days 5 and 6 of each week
};

StatusOr<AzureTrace> ReadAzureTrace(const std::string& path, const ImportOptions& options = {},
                                    ImportStats* stats = nullptr);

// The diurnal factor D(h) of the header comment, for an hour of day h in [0, 24).
double DiurnalFactor(double hour_of_day);

// InvalidArgument for options that make no curve (bucket <= 0, days < 1, days > 1 without
// diurnal_day, a bucket that does not divide 24 h when tiling, negative factors) or for a
// trace without requests.
StatusOr<std::vector<DemandPoint>> AzureDemandCurve(const AzureTrace& trace,
                                                    const AzureOptions& options);

// ReadAzureTrace then AzureDemandCurve; the token summary goes to `tokens` if not null.
StatusOr<std::vector<DemandPoint>> ImportAzureDemand(const std::string& path,
                                                     const AzureOptions& options = {},
                                                     ImportStats* stats = nullptr,
                                                     AzureTokenSummary* tokens = nullptr);

}  // namespace airtime
