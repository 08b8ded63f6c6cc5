#include "airtime/traces/openb.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "airtime/base/strings.h"
#include "airtime/traces/csv_reader.h"

namespace airtime {
namespace {

// The file name without directories and without ".csv".
std::string Stem(std::string_view base) {
  if (base.ends_with(".csv")) base.remove_suffix(4);
  return std::string(base);
}

// A whole number from 0 to `most` (beyond any host or replay: kept within what the engine's
// integer milli-cores, MiB and milliseconds hold once summed).
StatusOr<int64_t> Count(const CsvReader& r, size_t col, std::string_view what,
                        int64_t most = 1'000'000'000'000) {
  auto v = r.Int(col);
  if (!v.ok() || *v < 0 || *v > most)
    return r.FieldError(col, std::string(what) + " (at most " + std::to_string(most) + ")");
  return *v;
}

struct NodeColumns {
  size_t sn, cpu, mem, gpu, model;
};

Status ParseNode(const CsvReader& r, const NodeColumns& c, const GpuCatalog& catalog, Node* node) {
  AIRTIME_RETURN_IF_ERROR(r.CheckFieldCount());
  if (r.field(c.sn).empty()) return r.FieldError(c.sn, "a node name");
  auto cpu = Count(r, c.cpu, "a CPU capacity in milli-cores >= 0");
  if (!cpu.ok()) return cpu.status();
  auto mem = Count(r, c.mem, "a memory size in MiB >= 0");
  if (!mem.ok()) return mem.status();
  auto gpus = Count(r, c.gpu, "a GPU count >= 0");
  if (!gpus.ok()) return gpus.status();
  if (*gpus > 1024) return r.FieldError(c.gpu, "a GPU count <= 1024");
  GpuTypeId type = kNoGpuType;
  std::string_view model = r.field(c.model);
  if (!model.empty()) {
    auto t = catalog.Find(model);
    if (!t.ok()) return r.ColumnError(c.model, t.status().message());
    type = *t;
  } else if (*gpus > 0) {
    return r.FieldError(c.model, "a GPU model for a node with GPUs");
  }
  node->name.assign(r.field(c.sn));
  node->cpu_milli = *cpu;
  node->memory_mib = *mem;
  node->gpu_count = static_cast<int>(*gpus);
  node->gpu_type = type;
  return OkStatus();
}

// Columns of a pod list; the optional ones are absent in some lists.
struct PodColumns {
  size_t name, cpu, mem, num_gpu, milli;
  std::optional<size_t> spec, qos, phase, created, deleted, scheduled;
};

StatusOr<PodColumns> FindPodColumns(const CsvReader& r) {
  PodColumns c{};
  for (auto [name, slot] : {std::pair<const char*, size_t*>{"name", &c.name},
                            {"cpu_milli", &c.cpu},
                            {"memory_mib", &c.mem},
                            {"num_gpu", &c.num_gpu},
                            {"gpu_milli", &c.milli}}) {
    auto col = r.RequireColumn(name);
    if (!col.ok()) return col.status();
    *slot = *col;
  }
  c.spec = r.Column("gpu_spec");
  c.qos = r.Column("qos");
  c.phase = r.Column("pod_phase");
  c.created = r.Column("creation_time");
  c.deleted = r.Column("deletion_time");
  c.scheduled = r.Column("scheduled_time");
  return c;
}

Status ParseGpuSpec(const CsvReader& r, size_t col, const GpuCatalog& catalog,
                    std::vector<GpuTypeId>* allowed) {
  std::string_view spec = r.field(col);
  if (spec.empty()) return OkStatus();
  for (std::string_view part : Split(spec, '|')) {
    part = Trim(part);
    if (part.empty()) return r.FieldError(col, "GPU types separated by '|'");
    auto t = catalog.Find(part);
    if (!t.ok()) return r.ColumnError(col, t.status().message());
    if (std::find(allowed->begin(), allowed->end(), *t) == allowed->end()) allowed->push_back(*t);
  }
  return OkStatus();
}

Status ParseTime(const CsvReader& r, std::optional<size_t> col, int64_t* out) {
  if (!col) return OkStatus();
  auto v = Count(r, *col, "a time in seconds >= 0");
  if (!v.ok()) return v.status();
  *out = *v;
  return OkStatus();
}

Status ParsePod(const CsvReader& r, const PodColumns& c, const GpuCatalog& catalog, OpenbPod* pod) {
  AIRTIME_RETURN_IF_ERROR(r.CheckFieldCount());
  if (r.field(c.name).empty()) return r.FieldError(c.name, "a pod name");
  auto cpu = Count(r, c.cpu, "a CPU request in milli-cores >= 0");
  if (!cpu.ok()) return cpu.status();
  auto mem = Count(r, c.mem, "a memory request in MiB >= 0");
  if (!mem.ok()) return mem.status();
  auto num_gpu = Count(r, c.num_gpu, "a GPU count >= 0");
  if (!num_gpu.ok()) return num_gpu.status();
  if (*num_gpu > 1024) return r.FieldError(c.num_gpu, "a GPU count <= 1024");
  auto milli = r.Int(c.milli);
  if (!milli.ok()) return milli.status();
  if (*num_gpu == 0 && *milli != 0) return r.FieldError(c.milli, "0 for a pod without GPUs");
  if (*num_gpu > 0 && (*milli < 1 || *milli > 1000))
    return r.FieldError(c.milli, "a share per GPU in 1..1000");
  if (*num_gpu > 1 && *milli != 1000)
    return r.FieldError(c.milli, "1000 for a pod with more than one GPU");
  if (*num_gpu == 0 && *cpu == 0 && *mem == 0)
    return r.Error("a pod without GPUs must ask for CPU or memory");
  pod->allowed.clear();
  if (c.spec) AIRTIME_RETURN_IF_ERROR(ParseGpuSpec(r, *c.spec, catalog, &pod->allowed));
  pod->creation_time = pod->deletion_time = 0;
  AIRTIME_RETURN_IF_ERROR(ParseTime(r, c.created, &pod->creation_time));
  AIRTIME_RETURN_IF_ERROR(ParseTime(r, c.deleted, &pod->deletion_time));
  pod->scheduled_time.reset();
  if (c.scheduled && !r.field(*c.scheduled).empty()) {
    int64_t t = 0;
    AIRTIME_RETURN_IF_ERROR(ParseTime(r, c.scheduled, &t));
    if (t < pod->creation_time) return r.FieldError(*c.scheduled, "a time >= creation_time");
    pod->scheduled_time = t;
  }
  if (c.deleted) {
    int64_t start = pod->scheduled_time.value_or(pod->creation_time);
    if (pod->deletion_time < start)
      return r.FieldError(
          *c.deleted, pod->scheduled_time ? "a time >= scheduled_time" : "a time >= creation_time");
  }
  pod->name.assign(r.field(c.name));
  pod->cpu_milli = *cpu;
  pod->memory_mib = *mem;
  pod->num_gpu = static_cast<int>(*num_gpu);
  pod->gpu_milli = static_cast<int>(*milli);
  pod->qos.assign(c.qos ? r.field(*c.qos) : std::string_view());
  pod->pod_phase.assign(c.phase ? r.field(*c.phase) : std::string_view());
  pod->line = r.line();
  return OkStatus();
}

}  // namespace

StatusOr<Cluster> ImportOpenbNodes(const std::string& path, const ImportOptions& options,
                                   ImportStats* stats) {
  ImportStats local;
  ImportStats* st = stats ? stats : &local;
  *st = ImportStats{};
  const GpuCatalog& catalog = options.gpu_catalog();
  auto reader = CsvReader::Open(path);
  if (!reader.ok()) return reader.status();
  CsvReader& r = *reader;
  AIRTIME_RETURN_IF_ERROR(r.ReadHeader());
  NodeColumns c{};
  for (auto [name, slot] : {std::pair<const char*, size_t*>{"sn", &c.sn},
                            {"cpu_milli", &c.cpu},
                            {"memory_mib", &c.mem},
                            {"gpu", &c.gpu},
                            {"model", &c.model}}) {
    auto col = r.RequireColumn(name);
    if (!col.ok()) return col.status();
    *slot = *col;
  }
  std::vector<Node> nodes;
  std::unordered_map<std::string, int> first_line;
  while ((options.limit == 0 || nodes.size() < options.limit) && r.Next()) {
    ++st->rows_read;
    Node node;
    Status s = ParseNode(r, c, catalog, &node);
    if (s.ok()) {
      auto [it, fresh] = first_line.emplace(node.name, r.line());
      if (!fresh)
        s = r.ColumnError(
            c.sn, "node name '" + node.name + "' repeats line " + std::to_string(it->second));
    }
    if (!s.ok()) {
      AIRTIME_RETURN_IF_ERROR(HandleBadRow(std::move(s), options, st));
      continue;
    }
    nodes.push_back(std::move(node));
  }
  st->rows_imported = nodes.size();
  return Cluster::Build(Stem(r.base_name()), std::move(nodes), catalog);
}

StatusOr<std::vector<OpenbPod>> ImportOpenbPods(const std::string& path,
                                                const ImportOptions& options, ImportStats* stats) {
  ImportStats local;
  ImportStats* st = stats ? stats : &local;
  *st = ImportStats{};
  const GpuCatalog& catalog = options.gpu_catalog();
  auto reader = CsvReader::Open(path);
  if (!reader.ok()) return reader.status();
  CsvReader& r = *reader;
  AIRTIME_RETURN_IF_ERROR(r.ReadHeader());
  auto cols = FindPodColumns(r);
  if (!cols.ok()) return cols.status();
  const std::string source_prefix = std::string(r.base_name()) + ":";
  std::vector<OpenbPod> pods;
  std::unordered_map<std::string, int> first_line;
  OpenbPod pod;
  while ((options.limit == 0 || pods.size() < options.limit) && r.Next()) {
    ++st->rows_read;
    Status s = ParsePod(r, *cols, catalog, &pod);
    if (s.ok()) {
      auto [it, fresh] = first_line.emplace(pod.name, r.line());
      if (!fresh)
        s = r.ColumnError(cols->name,
                          "pod name '" + pod.name + "' repeats line " + std::to_string(it->second));
    }
    if (!s.ok()) {
      AIRTIME_RETURN_IF_ERROR(HandleBadRow(std::move(s), options, st));
      continue;
    }
    pod.source = source_prefix + std::to_string(pod.line);
    pods.push_back(pod);
  }
  st->rows_imported = pods.size();
  return pods;
}

WorkloadSpec ToWorkloadSpec(const OpenbPod& pod, const GpuCatalog& catalog) {
  WorkloadSpec w;
  w.name = pod.name;
  w.kind = WorkloadKind::kBatch;
  w.tenant = pod.qos.empty() ? "openb" : "openb-" + pod.qos;
  w.shape.gpu_count = pod.num_gpu;
  if (pod.num_gpu == 1 && pod.gpu_milli < 1000) {
    w.shape.mode = ShareMode::kFraction;
    w.shape.gpu_milli = pod.gpu_milli;
  } else {
    w.shape.mode = ShareMode::kWhole;
    w.shape.gpu_milli = 1000;
  }
  w.shape.allowed_types = pod.allowed;
  w.shape.locality = Locality::kNode;
  w.shape.cpu_milli = pod.cpu_milli;
  w.shape.memory_mib = pod.memory_mib;
  w.submit_at = pod.creation_time * kSecond;
  const int64_t start = pod.scheduled_time.value_or(pod.creation_time);
  w.work_seconds = static_cast<double>(std::max<int64_t>(1, pod.deletion_time - start));
  w.speed_overrides.reserve(catalog.size());
  for (size_t t = 0; t < catalog.size(); ++t)
    w.speed_overrides.emplace_back(static_cast<GpuTypeId>(t), 1.0);
  w.preemptible = false;
  w.source = pod.source;
  return w;
}

StatusOr<std::vector<WorkloadSpec>> ImportOpenbWorkloads(const std::string& path,
                                                         const ImportOptions& options,
                                                         ImportStats* stats) {
  auto pods = ImportOpenbPods(path, options, stats);
  if (!pods.ok()) return pods.status();
  std::vector<size_t> order(pods->size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const OpenbPod& x = (*pods)[a];
    const OpenbPod& y = (*pods)[b];
    return x.creation_time != y.creation_time ? x.creation_time < y.creation_time : x.line < y.line;
  });
  std::vector<WorkloadSpec> specs;
  specs.reserve(order.size());
  const GpuCatalog& catalog = options.gpu_catalog();
  for (size_t i : order) specs.push_back(ToWorkloadSpec((*pods)[i], catalog));
  return specs;
}

}  // namespace airtime
