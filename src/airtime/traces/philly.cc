#include "airtime/traces/philly.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "airtime/traces/csv_reader.h"
#include "airtime/traces/datetime.h"

namespace airtime {
namespace {

struct PhillyRow {
  int64_t at_ms = 0;
  double duration_s = 0;
  int gpus = 0;
  std::string_view cluster;  // into the reader's buffer
  int line = 0;
  size_t row = 0;  // 1-based data row
};

struct PhillyColumns {
  size_t timestamp, duration, num_gpus, cluster;
};

StatusOr<PhillyColumns> FindColumns(const CsvReader& r) {
  PhillyColumns c{};
  for (auto [name, slot] : {std::pair<const char*, size_t*>{"timestamp", &c.timestamp},
                            {"duration", &c.duration},
                            {"num_gpus", &c.num_gpus},
                            {"cluster", &c.cluster}}) {
    auto col = r.RequireColumn(name);
    if (!col.ok()) return col.status();
    *slot = *col;
  }
  return c;
}

// Parses the current record; `row` is filled only when OK.
Status ParseRow(const CsvReader& r, const PhillyColumns& c, PhillyRow* row) {
  AIRTIME_RETURN_IF_ERROR(r.CheckFieldCount());
  auto at = ParseTraceTimeMs(r.field(c.timestamp));
  if (!at)
    return r.FieldError(
        c.timestamp, "a date and time like '2017-10-09 07:01:55', " + std::string(kTraceTimeRange));
  auto duration = r.Double(c.duration);
  if (!duration.ok()) return duration.status();
  if (!(*duration > 0 && *duration <= 1e12))
    return r.FieldError(c.duration, "a positive number of seconds (at most 1e12)");
  auto gpus = r.WholeNumber(c.num_gpus);
  if (!gpus.ok()) return gpus.status();
  if (*gpus < 1 || *gpus > (1 << 20)) return r.FieldError(c.num_gpus, "a GPU count >= 1");
  if (r.field(c.cluster).empty()) return r.FieldError(c.cluster, "a virtual cluster id");
  row->at_ms = *at;
  row->duration_s = *duration;
  row->gpus = static_cast<int>(*gpus);
  row->cluster = r.field(c.cluster);
  row->line = r.line();
  return OkStatus();
}

bool Selected(const PhillyOptions& o, std::string_view cluster) {
  if (o.clusters.empty()) return true;
  return std::find(o.clusters.begin(), o.clusters.end(), cluster) != o.clusters.end();
}

}  // namespace

StatusOr<std::vector<WorkloadSpec>> ImportPhilly(const std::string& path,
                                                 const PhillyOptions& options, ImportStats* stats) {
  ImportStats local;
  ImportStats* st = stats ? stats : &local;
  *st = ImportStats{};
  const GpuCatalog& catalog = options.gpu_catalog();
  GpuTypeId ref = options.reference_type;
  if (ref == kNoGpuType) {
    auto v100 = catalog.Find("V100");
    if (!v100.ok()) return v100.status();
    ref = *v100;
  }
  if (ref < 0 || static_cast<size_t>(ref) >= catalog.size())
    return InvalidArgument("philly: reference_type " + std::to_string(ref) +
                           " is not in the GPU catalogue");
  if (options.gpus_per_node < 1) return InvalidArgument("philly: gpus_per_node must be >= 1");
  if (!(options.value_per_gpu_hour >= 0))
    return InvalidArgument("philly: value_per_gpu_hour must be >= 0");
  if (!(options.utilization > 0 && options.utilization <= 1))
    return InvalidArgument("philly: utilization must be in (0, 1]");
  const double ref_speed = catalog.type(ref).relative_speed;

  auto reader = CsvReader::Open(path);
  if (!reader.ok()) return reader.status();
  CsvReader& r = *reader;
  AIRTIME_RETURN_IF_ERROR(r.ReadHeader());
  auto cols = FindColumns(r);
  if (!cols.ok()) return cols.status();

  std::vector<PhillyRow> rows;
  std::vector<bool> cluster_seen(options.clusters.size(), false);
  int64_t earliest = INT64_MAX;
  while (r.Next()) {
    ++st->rows_read;
    PhillyRow row;
    Status s = ParseRow(r, *cols, &row);
    if (!s.ok()) {
      AIRTIME_RETURN_IF_ERROR(HandleBadRow(std::move(s), options, st));
      continue;
    }
    row.row = st->rows_read;
    earliest = std::min(earliest, row.at_ms);
    for (size_t i = 0; i < options.clusters.size(); ++i)
      if (options.clusters[i] == row.cluster) cluster_seen[i] = true;
    if (!Selected(options, row.cluster)) {
      ++st->rows_filtered;
      continue;
    }
    rows.push_back(row);
  }
  for (size_t i = 0; i < options.clusters.size(); ++i)
    if (!cluster_seen[i])
      return InvalidArgument(path + ": no job of cluster '" + options.clusters[i] + "'");

  std::sort(rows.begin(), rows.end(), [](const PhillyRow& a, const PhillyRow& b) {
    return a.at_ms != b.at_ms ? a.at_ms < b.at_ms : a.line < b.line;
  });
  if (options.limit > 0 && rows.size() > options.limit) {
    st->rows_filtered += rows.size() - options.limit;
    rows.resize(options.limit);
  }
  const int64_t origin =
      options.rebase_to_first_job && !rows.empty() ? rows.front().at_ms : earliest;
  const std::string source_prefix = std::string(r.base_name()) + ":";

  std::vector<WorkloadSpec> specs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const PhillyRow& row = rows[i];
    WorkloadSpec& w = specs[i];
    w.name = "philly-" + std::to_string(row.row);
    w.kind = WorkloadKind::kTraining;
    if (options.tenant.empty()) {
      w.tenant.assign(row.cluster);
    } else {
      w.tenant = options.tenant;
    }
    w.priority = options.priority;
    w.shape.gpu_count = row.gpus;
    w.shape.mode = ShareMode::kWhole;
    w.shape.locality = row.gpus <= options.gpus_per_node ? Locality::kNode : Locality::kAny;
    w.work_seconds = row.duration_s * ref_speed;
    w.submit_at = row.at_ms - origin;
    w.checkpoint_interval = options.checkpoint_interval;
    w.restart_cost = options.restart_cost;
    w.preemptible = options.preemptible;
    w.utilization = options.utilization;
    w.value.on_completion = options.value_per_gpu_hour * row.gpus * row.duration_s / 3600.0;
    w.source = source_prefix + std::to_string(row.line);
  }
  st->rows_imported = specs.size();
  return specs;
}

}  // namespace airtime
