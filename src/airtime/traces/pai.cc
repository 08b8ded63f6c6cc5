#include "airtime/traces/pai.h"

#include <string_view>
#include <unordered_map>
#include <vector>

#include "airtime/traces/csv_reader.h"

namespace airtime {
namespace {

enum PaiColumn : size_t { kMachine, kGpuType, kCpu, kMem, kGpus };

StatusOr<int64_t> Count(const CsvReader& r, size_t col, std::string_view what) {
  auto v = r.Int(col);
  if (!v.ok() || *v < 0) return r.FieldError(col, what);
  return *v;
}

// The catalogue name for a PAI gpu_type (see the header).
std::string_view CatalogName(std::string_view pai_type) {
  if (pai_type == "V100") return "V100-16GB";
  if (pai_type == "V100M32") return "V100";
  return pai_type;
}

Status ParseMachine(const CsvReader& r, const GpuCatalog& catalog, Node* node) {
  AIRTIME_RETURN_IF_ERROR(r.CheckFieldCount());
  if (r.field(kMachine).empty()) return r.FieldError(kMachine, "a machine id");
  auto cpu = Count(r, kCpu, "a number of CPU cores >= 0");
  if (!cpu.ok()) return cpu.status();
  auto mem = Count(r, kMem, "a memory size in GB >= 0");
  if (!mem.ok()) return mem.status();
  auto gpus = Count(r, kGpus, "a GPU count >= 0");
  if (!gpus.ok()) return gpus.status();
  if (*gpus > 1024) return r.FieldError(kGpus, "a GPU count <= 1024");
  if (*cpu > (int64_t{1} << 40) || *mem > (int64_t{1} << 40))
    return r.Error("CPU or memory capacity out of range");
  std::string_view type_name = r.field(kGpuType);
  GpuTypeId type = kNoGpuType;
  if (type_name == "CPU") {
    if (*gpus != 0) return r.FieldError(kGpus, "0 on a CPU machine");
  } else {
    if (type_name.empty()) return r.FieldError(kGpuType, "a GPU type or CPU");
    auto t = catalog.Find(CatalogName(type_name));
    if (!t.ok()) return r.ColumnError(kGpuType, t.status().message());
    if (*gpus == 0)
      return r.FieldError(kGpus, "at least one GPU on a " + std::string(type_name) + " machine");
    type = *t;
  }
  node->name.assign(r.field(kMachine));
  node->gpu_type = type;
  node->gpu_count = static_cast<int>(*gpus);
  node->cpu_milli = *cpu * 1000;
  node->memory_mib = *mem * 1024;
  return OkStatus();
}

}  // namespace

StatusOr<Cluster> ImportPaiMachines(const std::string& path, const PaiOptions& options,
                                    ImportStats* stats) {
  ImportStats local;
  ImportStats* st = stats ? stats : &local;
  *st = ImportStats{};
  const GpuCatalog& catalog = options.gpu_catalog();
  auto reader = CsvReader::Open(path);
  if (!reader.ok()) return reader.status();
  CsvReader& r = *reader;
  r.SetColumns({"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"});
  std::vector<Node> nodes;
  std::unordered_map<std::string, int> first_line;
  bool first = true;
  while ((options.limit == 0 || nodes.size() < options.limit) && r.Next()) {
    if (first && r.field(kMachine) == "machine") {  // an optional header line
      first = false;
      continue;
    }
    first = false;
    ++st->rows_read;
    Node node;
    Status s = ParseMachine(r, catalog, &node);
    if (s.ok()) {
      auto [it, fresh] = first_line.emplace(node.name, r.line());
      if (!fresh)
        s = r.ColumnError(kMachine,
                          "machine '" + node.name + "' repeats line " + std::to_string(it->second));
    }
    if (!s.ok()) {
      AIRTIME_RETURN_IF_ERROR(HandleBadRow(std::move(s), options, st));
      continue;
    }
    if (node.gpu_count == 0 && !options.include_cpu_nodes) {
      ++st->rows_filtered;
      continue;
    }
    nodes.push_back(std::move(node));
  }
  st->rows_imported = nodes.size();
  return Cluster::Build("pai-2020", std::move(nodes), catalog);
}

}  // namespace airtime
