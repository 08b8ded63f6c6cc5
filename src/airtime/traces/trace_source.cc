#include "airtime/traces/trace_source.h"

#include <cmath>
#include <optional>

#include "airtime/base/strings.h"
#include "airtime/traces/openb.h"
#include "airtime/traces/philly.h"

namespace airtime {
namespace {

// Reads the options of one format, remembering which were used.
class OptionReader {
 public:
  OptionReader(std::string format, const std::map<std::string, std::string>& options)
      : format_(std::move(format)), options_(options) {}

  Status Common(ImportOptions* o) {
    AIRTIME_RETURN_IF_ERROR(Bool("skip_bad_rows", &o->skip_bad_rows));
    int64_t limit = static_cast<int64_t>(o->limit);
    AIRTIME_RETURN_IF_ERROR(Int("limit", 0, &limit));
    o->limit = static_cast<size_t>(limit);
    return OkStatus();
  }

  const std::string* Get(const std::string& name) {
    known_.push_back(name);
    auto it = options_.find(name);
    return it == options_.end() ? nullptr : &it->second;
  }

  Status Bool(const std::string& name, bool* out) {
    const std::string* v = Get(name);
    if (!v) return OkStatus();
    std::string s = ToLower(Trim(*v));
    if (s == "true" || s == "yes" || s == "1") {
      *out = true;
    } else if (s == "false" || s == "no" || s == "0") {
      *out = false;
    } else {
      return Bad(name, "true or false", *v);
    }
    return OkStatus();
  }

  Status Int(const std::string& name, int64_t min, int64_t* out) {
    const std::string* v = Get(name);
    if (!v) return OkStatus();
    auto i = ParseInt(*v);
    if (!i || *i < min) return Bad(name, "an integer >= " + std::to_string(min), *v);
    *out = *i;
    return OkStatus();
  }

  // A finite number >= 0.
  Status NonNegative(const std::string& name, double* out) {
    const std::string* v = Get(name);
    if (!v) return OkStatus();
    auto d = ParseDouble(*v);
    if (!d || !std::isfinite(*d) || *d < 0) return Bad(name, "a number >= 0", *v);
    *out = *d;
    return OkStatus();
  }

  Status Duration(const std::string& name, DurationMs* out) {
    const std::string* v = Get(name);
    if (!v) return OkStatus();
    auto d = ParseDurationMs(*v);
    if (!d) return Bad(name, "a duration such as 30m or 90s", *v);
    *out = *d;
    return OkStatus();
  }

  Status Bad(const std::string& name, const std::string& expected, const std::string& got) {
    return InvalidArgument(format_ + " trace: option '" + name + "': expected " + expected +
                           ", got '" + got + "'");
  }

  // InvalidArgument naming the first option no reader asked for.
  Status CheckAllUsed() const {
    for (const auto& [name, value] : options_) {
      bool used = false;
      for (const auto& k : known_) used |= k == name;
      if (!used)
        return InvalidArgument(format_ + " trace: unknown option '" + name +
                               "' (known: " + Join(known_, ", ") + ")");
    }
    return OkStatus();
  }

 private:
  std::string format_;
  const std::map<std::string, std::string>& options_;
  std::vector<std::string> known_;
};

StatusOr<PhillyOptions> ReadPhillyOptions(OptionReader& r) {
  PhillyOptions o;
  AIRTIME_RETURN_IF_ERROR(r.Common(&o));
  if (const std::string* v = r.Get("reference_type")) {
    auto t = o.gpu_catalog().Find(*v);
    if (!t.ok()) return r.Bad("reference_type", "a GPU type name", *v);
    o.reference_type = *t;
  }
  if (const std::string* v = r.Get("clusters")) {
    for (std::string_view c : Split(*v, ',')) {
      c = Trim(c);
      if (c.empty()) return r.Bad("clusters", "cluster ids separated by commas", *v);
      o.clusters.emplace_back(c);
    }
  }
  int64_t per_node = o.gpus_per_node;
  AIRTIME_RETURN_IF_ERROR(r.Int("gpus_per_node", 1, &per_node));
  if (per_node > (1 << 20))
    return r.Bad("gpus_per_node", "an integer <= 1048576", std::to_string(per_node));
  o.gpus_per_node = static_cast<int>(per_node);
  AIRTIME_RETURN_IF_ERROR(r.Duration("checkpoint_interval", &o.checkpoint_interval));
  AIRTIME_RETURN_IF_ERROR(r.Duration("restart_cost", &o.restart_cost));
  AIRTIME_RETURN_IF_ERROR(r.Bool("preemptible", &o.preemptible));
  AIRTIME_RETURN_IF_ERROR(r.Bool("rebase_to_first_job", &o.rebase_to_first_job));
  if (const std::string* v = r.Get("tenant")) {
    o.tenant = std::string(Trim(*v));
    if (o.tenant.empty()) return r.Bad("tenant", "a tenant name", *v);
  }
  int64_t priority = o.priority;
  AIRTIME_RETURN_IF_ERROR(r.Int("priority", -(int64_t{1} << 30), &priority));
  if (priority > (int64_t{1} << 30))
    return r.Bad("priority", "an integer <= 1073741824", std::to_string(priority));
  o.priority = static_cast<int>(priority);
  AIRTIME_RETURN_IF_ERROR(r.NonNegative("value_per_gpu_hour", &o.value_per_gpu_hour));
  if (const std::string* v = r.Get("utilization")) {
    auto u = ParseDouble(*v);
    if (!u || !(*u > 0 && *u <= 1)) return r.Bad("utilization", "a share in (0, 1]", *v);
    o.utilization = *u;
  }
  AIRTIME_RETURN_IF_ERROR(r.CheckAllUsed());
  return o;
}

}  // namespace

std::vector<std::string> KnownWorkloadTraceFormats() { return {"openb", "philly"}; }

StatusOr<std::vector<WorkloadSpec>> ImportWorkloadTrace(
    std::string_view format, const std::string& path,
    const std::map<std::string, std::string>& options, ImportStats* stats) {
  const std::string name = ToLower(Trim(format));
  if (name == "philly") {
    OptionReader r(name, options);
    auto o = ReadPhillyOptions(r);
    if (!o.ok()) return o.status();
    return ImportPhilly(path, *o, stats);
  }
  if (name == "openb") {
    OptionReader r(name, options);
    ImportOptions o;
    AIRTIME_RETURN_IF_ERROR(r.Common(&o));
    AIRTIME_RETURN_IF_ERROR(r.CheckAllUsed());
    return ImportOpenbWorkloads(path, o, stats);
  }
  return InvalidArgument("unknown workload trace format '" + std::string(format) +
                         "' (known: " + Join(KnownWorkloadTraceFormats(), ", ") + ")");
}

}  // namespace airtime
