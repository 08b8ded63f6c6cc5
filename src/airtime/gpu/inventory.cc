// OpenInventory and the GpuInventory defaults (see inventory.h).
#include "airtime/gpu/inventory.h"

#include "airtime/gpu/fake_inventory.h"
#include "airtime/gpu/nvml_inventory.h"

namespace airtime {
namespace {

constexpr char kFakeHint[] = "no GPUs; use --fake-gpus 8xH100 to simulate";

// A host without GPUs.
class EmptyInventory : public GpuInventory {
 public:
  std::vector<GpuDevice> Devices() const override { return {}; }
  std::vector<GpuSample> Sample(TimeMs) const override { return {}; }
};

void SetNote(std::string* note, std::string text) {
  if (note != nullptr) *note = std::move(text);
}

// The note for an NVML that could not be opened.
std::string UnavailableNote(const Status& st, const std::string& library) {
  if (st.code() == StatusCode::kUnavailable)
    return "NVML not found (" + library + "): " + kFakeHint;
  return st.message() + ": " + kFakeHint;
}

}  // namespace

Status GpuInventory::Report(const std::string& uuid, std::optional<double>, std::optional<int64_t>,
                            std::vector<int64_t>) {
  return FailedPrecondition("GPU '" + uuid +
                            "': telemetry reports are only taken for fake GPUs (this host's "
                            "GPUs are read through NVML)");
}

StatusOr<std::unique_ptr<GpuInventory>> OpenInventory(const std::string& fake_spec,
                                                      std::string* note,
                                                      const std::string& nvml_library) {
  if (!fake_spec.empty()) {
    auto fake = FakeInventory::Create(fake_spec);
    if (!fake.ok()) return fake.status();
    SetNote(note, "fake GPUs (" + fake_spec + "): " + std::to_string((*fake)->Devices().size()));
    return std::unique_ptr<GpuInventory>(std::move(*fake));
  }
  auto nvml = Nvml::Open(nvml_library);
  if (!nvml.ok()) {
    SetNote(note, UnavailableNote(nvml.status(), nvml_library));
    return std::unique_ptr<GpuInventory>(std::make_unique<EmptyInventory>());
  }
  auto inventory = NvmlInventory::Open(std::move(*nvml), note);
  if (!inventory.ok()) {
    SetNote(note, UnavailableNote(inventory.status(), nvml_library));
    return std::unique_ptr<GpuInventory>(std::make_unique<EmptyInventory>());
  }
  return std::unique_ptr<GpuInventory>(std::move(*inventory));
}

}  // namespace airtime
