#include "airtime/traces/azure.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "airtime/traces/csv_reader.h"
#include "airtime/traces/datetime.h"

namespace airtime {
namespace {

struct AzureColumns {
  size_t timestamp, context, generated;
};

Status ParseRequest(const CsvReader& r, const AzureColumns& c, int64_t* at, int64_t* context,
                    int64_t* generated) {
  AIRTIME_RETURN_IF_ERROR(r.CheckFieldCount());
  auto t = ParseTraceTimeMs(r.field(c.timestamp));
  if (!t)
    return r.FieldError(c.timestamp, "a date and time like '2023-11-16 18:17:03.9799600', " +
                                         std::string(kTraceTimeRange));
  auto ctx = r.Int(c.context);
  if (!ctx.ok() || *ctx < 0) return r.FieldError(c.context, "a token count >= 0");
  auto gen = r.Int(c.generated);
  if (!gen.ok() || *gen < 0) return r.FieldError(c.generated, "a token count >= 0");
  *at = *t;
  *context = *ctx;
  *generated = *gen;
  return OkStatus();
}

Status CheckOptions(const AzureOptions& o) {
  if (o.bucket <= 0) return InvalidArgument("azure: bucket must be > 0");
  if (o.days < 1) return InvalidArgument("azure: days must be >= 1");
  if (o.diurnal_day && kDay / o.bucket * o.days > static_cast<int64_t>(kMaxDemandPoints))
    return InvalidArgument("azure: " + std::to_string(o.days) + " days of " +
                           std::to_string(o.bucket) + " ms buckets are more than the " +
                           std::to_string(kMaxDemandPoints) + " points a demand curve may have");
  if (o.days > 1 && !o.diurnal_day) return InvalidArgument("azure: days > 1 needs diurnal_day");
  if (o.diurnal_day && kDay % o.bucket != 0)
    return InvalidArgument("azure: with diurnal_day the bucket must divide 24 h");
  if (!(o.peak_rps >= 0 && o.peak_rps <= kMaxRps))
    return InvalidArgument("azure: peak_rps must be from 0 to 1e9 requests a second");
  if (!(o.weekend_factor >= 0 && o.weekend_factor <= 1000))
    return InvalidArgument("azure: weekend_factor must be from 0 to 1000");
  return OkStatus();
}

}  // namespace

StatusOr<AzureTrace> ReadAzureTrace(const std::string& path, const ImportOptions& options,
                                    ImportStats* stats) {
  ImportStats local;
  ImportStats* st = stats ? stats : &local;
  *st = ImportStats{};
  auto reader = CsvReader::Open(path);
  if (!reader.ok()) return reader.status();
  CsvReader& r = *reader;
  AIRTIME_RETURN_IF_ERROR(r.ReadHeader());
  AzureColumns c{};
  for (auto [name, slot] : {std::pair<const char*, size_t*>{"TIMESTAMP", &c.timestamp},
                            {"ContextTokens", &c.context},
                            {"GeneratedTokens", &c.generated}}) {
    auto col = r.RequireColumn(name);
    if (!col.ok()) return col.status();
    *slot = *col;
  }
  AzureTrace trace;
  std::vector<int64_t> times;
  double context_sum = 0, generated_sum = 0;
  while ((options.limit == 0 || times.size() < options.limit) && r.Next()) {
    ++st->rows_read;
    int64_t at = 0, context = 0, generated = 0;
    Status s = ParseRequest(r, c, &at, &context, &generated);
    if (!s.ok()) {
      AIRTIME_RETURN_IF_ERROR(HandleBadRow(std::move(s), options, st));
      continue;
    }
    times.push_back(at);
    context_sum += static_cast<double>(context);
    generated_sum += static_cast<double>(generated);
    trace.tokens.max_context_tokens = std::max(trace.tokens.max_context_tokens, context);
    trace.tokens.max_generated_tokens = std::max(trace.tokens.max_generated_tokens, generated);
  }
  st->rows_imported = times.size();
  trace.tokens.requests = times.size();
  if (times.empty()) return trace;
  const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  trace.first_request_ms = *lo;
  trace.span = *hi - *lo;
  trace.arrivals.reserve(times.size());
  for (int64_t t : times) trace.arrivals.push_back(t - *lo);
  const double n = static_cast<double>(times.size());
  trace.tokens.mean_context_tokens = context_sum / n;
  trace.tokens.mean_generated_tokens = generated_sum / n;
  return trace;
}

double DiurnalFactor(double h) {
  h = std::fmod(h, 24.0);
  if (h < 0) h += 24.0;
  double phase = 0;
  if (h >= 4 && h < 14) {
    phase = (h - 4) / 10;
  } else {
    phase = 1 - std::fmod(h - 14 + 24, 24.0) / 14;
  }
  return 0.25 + 0.75 * (1 - std::cos(std::numbers::pi * phase)) / 2;
}

StatusOr<std::vector<DemandPoint>> AzureDemandCurve(const AzureTrace& trace,
                                                    const AzureOptions& options) {
  AIRTIME_RETURN_IF_ERROR(CheckOptions(options));
  if (trace.arrivals.empty()) return InvalidArgument("azure: the trace has no requests");
  const DurationMs bucket = options.bucket;
  const double bucket_s = ToSeconds(bucket);
  // A trace whose requests lie years apart (or a tiny bucket) would need billions of buckets.
  if (trace.span < 0 || trace.span / bucket >= static_cast<int64_t>(kMaxDemandPoints))
    return InvalidArgument("azure: the requests span " + std::to_string(trace.span / 1000) +
                           " s, more than the " + std::to_string(kMaxDemandPoints) +
                           " buckets of " + std::to_string(bucket) +
                           " ms a demand curve may have; is a timestamp wrong?");
  const size_t n = static_cast<size_t>(trace.span / bucket) + 1;
  std::vector<int64_t> counts(n, 0);
  for (DurationMs t : trace.arrivals) ++counts[static_cast<size_t>(t / bucket)];
  std::vector<double> rps(n);
  for (size_t k = 0; k < n; ++k) rps[k] = static_cast<double>(counts[k]) / bucket_s;

  std::vector<DemandPoint> points;
  if (!options.diurnal_day) {
    points.reserve(n + 1);
    for (size_t k = 0; k < n; ++k) points.push_back({static_cast<TimeMs>(k) * bucket, rps[k]});
    points.push_back({static_cast<TimeMs>(n) * bucket, 0.0});
  } else {
    const size_t full = static_cast<size_t>(trace.span / bucket);
    const size_t pattern = full > 0 ? full : n;
    const size_t per_day = static_cast<size_t>(kDay / bucket);
    const size_t days = static_cast<size_t>(options.days);
    points.reserve(per_day * days + 1);
    for (size_t d = 0; d < days; ++d) {
      const double week = d % 7 >= 5 ? options.weekend_factor : 1.0;
      for (size_t j = 0; j < per_day; ++j) {
        const TimeMs in_day = static_cast<TimeMs>(j) * bucket;
        const double hour = (static_cast<double>(in_day) + bucket / 2.0) / kHour;
        const size_t k = d * per_day + j;
        points.push_back({static_cast<TimeMs>(d) * kDay + in_day,
                          rps[k % pattern] * DiurnalFactor(hour) * week});
      }
    }
    points.push_back({static_cast<TimeMs>(days) * kDay, 0.0});
  }
  if (options.peak_rps > 0) {
    double peak = 0;
    for (const auto& p : points) peak = std::max(peak, p.rps);
    if (peak > 0)
      for (auto& p : points) p.rps *= options.peak_rps / peak;
  }
  for (auto& p : points) p.rps = std::min(p.rps, kMaxRps);  // as a demand a file gives
  return points;
}

StatusOr<std::vector<DemandPoint>> ImportAzureDemand(const std::string& path,
                                                     const AzureOptions& options,
                                                     ImportStats* stats,
                                                     AzureTokenSummary* tokens) {
  AIRTIME_RETURN_IF_ERROR(CheckOptions(options));
  auto trace = ReadAzureTrace(path, options, stats);
  if (!trace.ok()) return trace.status();
  if (tokens) *tokens = trace->tokens;
  if (trace->arrivals.empty()) return InvalidArgument(path + ": no requests");
  return AzureDemandCurve(*trace, options);
}

}  // namespace airtime
