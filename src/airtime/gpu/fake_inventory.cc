// FakeInventory and ParseFakeGpuSpec (see fake_inventory.h).
#include "airtime/gpu/fake_inventory.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

constexpr int64_t kMaxFakeGpus = 1024;

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// " (did you mean 'H100'?)" for the catalogue type whose name or alias is nearest to
// `word` within edit distance 2, else "".
std::string DidYouMean(std::string_view word, const GpuCatalog& catalog) {
  const std::string lower = ToLower(word);
  int best = 3;
  std::string hint;
  for (size_t i = 0; i < catalog.size(); ++i) {
    const GpuType& t = catalog.type(static_cast<GpuTypeId>(i));
    std::vector<std::string> names = t.aliases;
    names.insert(names.begin(), t.name);
    for (const auto& n : names) {
      int d = EditDistance(lower, ToLower(n));
      if (d < best && d < static_cast<int>(n.size())) {
        best = d;
        hint = t.name;
      }
    }
  }
  return hint.empty() ? "" : " (did you mean '" + hint + "'?)";
}

struct SpecItem {
  int64_t count = 1;
  GpuTypeId type = kNoGpuType;
};

// One "COUNTxTYPE" (or "TYPE") item.
StatusOr<SpecItem> ParseItem(std::string_view item, const GpuCatalog& catalog) {
  const std::string where = "fake GPU spec item '" + std::string(item) + "'";
  if (item.empty()) return InvalidArgument("fake GPU spec: empty item (expected e.g. 8xH100)");
  size_t digits = 0;
  while (digits < item.size() && std::isdigit(static_cast<unsigned char>(item[digits]))) ++digits;
  SpecItem out;
  std::string_view type = item;
  if (digits > 0) {
    if (digits == item.size() || (item[digits] != 'x' && item[digits] != 'X'))
      return InvalidArgument(where + ": expected COUNTxTYPE, e.g. 8xH100");
    auto n = ParseInt(item.substr(0, digits));
    if (!n || *n < 1 || *n > kMaxFakeGpus)
      return InvalidArgument(where + ": count must be 1.." + std::to_string(kMaxFakeGpus));
    out.count = *n;
    type = Trim(item.substr(digits + 1));
  }
  auto id = catalog.Find(type);
  if (!id.ok())
    return InvalidArgument(where + ": unknown GPU type '" + std::string(type) + "'" +
                           DidYouMean(type, catalog) + "; known: " + catalog.NamesForError());
  out.type = *id;
  return out;
}

// "GPU-fake-0003-a100-80gb-01".
std::string FakeUuid(int index, const std::string& type, int n_of_type) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "GPU-fake-%04d-", index);
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%02d", n_of_type);
  return prefix + ToLower(type) + suffix;
}

GpuDevice FakeDevice(int index, const GpuType& type, int n_of_type) {
  GpuDevice d;
  d.index = index;
  d.minor = index;
  d.uuid = FakeUuid(index, type.name, n_of_type);
  d.model = "airtime fake " + type.name;
  d.type = type.name;
  d.memory_mib = static_cast<int64_t>(type.memory_gb * 1024 + 0.5);
  d.fake = true;
  return d;
}

}  // namespace

StatusOr<std::vector<GpuDevice>> ParseFakeGpuSpec(std::string_view spec,
                                                  const GpuCatalog& catalog) {
  std::vector<GpuDevice> devices;
  std::map<GpuTypeId, int> per_type;
  for (std::string_view raw : Split(spec, ',')) {
    auto item = ParseItem(Trim(raw), catalog);
    if (!item.ok()) return item.status();
    if (static_cast<int64_t>(devices.size()) + item->count > kMaxFakeGpus)
      return InvalidArgument("fake GPU spec '" + std::string(spec) + "': more than " +
                             std::to_string(kMaxFakeGpus) + " GPUs");
    for (int64_t i = 0; i < item->count; ++i)
      devices.push_back(FakeDevice(static_cast<int>(devices.size()), catalog.type(item->type),
                                   per_type[item->type]++));
  }
  return devices;
}

StatusOr<std::unique_ptr<FakeInventory>> FakeInventory::Create(std::string_view spec,
                                                               const GpuCatalog& catalog) {
  auto devices = ParseFakeGpuSpec(spec, catalog);
  if (!devices.ok()) return devices.status();
  return std::unique_ptr<FakeInventory>(new FakeInventory(std::move(*devices)));
}

const GpuDevice* FakeInventory::Find(const std::string& uuid) const {
  for (const auto& d : devices_)
    if (d.uuid == uuid) return &d;
  return nullptr;
}

std::vector<GpuSample> FakeInventory::Sample(TimeMs now) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<GpuSample> out;
  for (const auto& d : devices_) {
    GpuSample s;
    s.uuid = d.uuid;
    s.at = now;
    if (auto it = reports_.find(d.uuid); it != reports_.end()) {
      s.utilization = it->second.utilization;
      s.memory_used_mib = it->second.memory_used_mib;
      s.pids = it->second.pids;
    }
    out.push_back(std::move(s));
  }
  return out;
}

Status FakeInventory::Report(const std::string& uuid, std::optional<double> utilization,
                             std::optional<int64_t> memory_used_mib, std::vector<int64_t> pids) {
  const GpuDevice* d = Find(uuid);
  if (d == nullptr) return NotFound("no fake GPU with UUID '" + uuid + "'");
  if (utilization && !(*utilization >= 0 && *utilization <= 1))
    return InvalidArgument(uuid + ": utilization must be within 0..1");
  if (memory_used_mib && (*memory_used_mib < 0 || *memory_used_mib > d->memory_mib))
    return InvalidArgument(uuid + ": memory used must be within 0.." +
                           std::to_string(d->memory_mib) + " MiB");
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  std::lock_guard<std::mutex> lock(mu_);
  reports_[uuid] = LastReport{utilization, memory_used_mib, std::move(pids)};
  return OkStatus();
}

}  // namespace airtime
