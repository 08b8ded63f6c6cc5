#include "airtime/model/gpu_catalog.h"

#include "airtime/base/strings.h"

namespace airtime {
namespace {

// The standard seven-slice MIG layout of A100/H100/H200; memory per profile scales with the
// GPU's memory in eighths (1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb on an H100).
std::vector<MigProfile> Mig(double total_gb) {
  auto name = [](int g, double mem) {
    return std::to_string(g) + "g." + std::to_string(static_cast<int>(mem + 0.5)) + "gb";
  };
  const double e = total_gb / 8;
  return {
      {name(1, e), 1, e, 7},         {name(1, 2 * e), 1, 2 * e, 4},
      {name(2, 2 * e), 2, 2 * e, 3}, {name(3, 4 * e), 3, 4 * e, 2},
      {name(4, 4 * e), 4, 4 * e, 1}, {name(7, total_gb), 7, total_gb, 1},
  };
}

std::vector<GpuType> BuiltinTypes() {
  return {
      {"H200", {"H200-141GB", "H200-SXM"}, 141, 2.0, Mig(141)},
      {"H100", {"H100-80GB", "H100-SXM", "H100-SXM5-80GB"}, 80, 1.8, Mig(80)},
      {"A100-80GB", {"A100-SXM4-80GB", "A100-80G"}, 80, 1.0, Mig(80)},
      {"A100-40GB", {"A100", "A100-SXM4-40GB", "A100-40G"}, 40, 0.95, Mig(40)},
      {"L40S", {}, 48, 0.75, {}},
      {"L4", {}, 24, 0.3, {}},
      {"A10", {"A10G"}, 24, 0.35, {}},
      {"T4", {}, 16, 0.15, {}},
      {"V100", {"V100-32GB", "V100M32"}, 32, 0.45, {}},
      {"V100-16GB", {"V100M16"}, 16, 0.42, {}},
      {"P100", {}, 16, 0.2, {}},
      {"K80", {}, 12, 0.08, {}},
      // Alibaba's anonymised types: memory and speed are estimates (documented in docs/).
      {"G2", {}, 16, 0.3, {}},
      {"G3", {}, 32, 0.5, {}},
      {"MISC", {}, 16, 0.15, {}},
  };
}

}  // namespace

const MigProfile* GpuType::FindMig(std::string_view profile) const {
  for (const auto& p : mig_profiles)
    if (p.name == profile) return &p;
  return nullptr;
}

const GpuCatalog& GpuCatalog::Builtin() {
  static const GpuCatalog* catalog = new GpuCatalog(BuiltinTypes());
  return *catalog;
}

GpuCatalog::GpuCatalog(std::vector<GpuType> types) : types_(std::move(types)) {}

StatusOr<GpuTypeId> GpuCatalog::Find(std::string_view name) const {
  std::string want = ToLower(Trim(name));
  for (size_t i = 0; i < types_.size(); ++i) {
    if (ToLower(types_[i].name) == want) return static_cast<GpuTypeId>(i);
    for (const auto& a : types_[i].aliases)
      if (ToLower(a) == want) return static_cast<GpuTypeId>(i);
  }
  return NotFound("unknown GPU type '" + std::string(name) + "' (known: " + NamesForError() + ")");
}

std::string GpuCatalog::NamesForError() const {
  std::vector<std::string> names;
  for (const auto& t : types_) names.push_back(t.name);
  return Join(names, ", ");
}

}  // namespace airtime
