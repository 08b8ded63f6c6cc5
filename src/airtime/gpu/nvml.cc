// Nvml: dlopen/dlsym loading and the per-device reads (see nvml.h).
#include "airtime/gpu/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "airtime/gpu/nvml_api.h"

namespace airtime {

using namespace nvml_api;  // NOLINT: the C names of the ABI, local to this file

struct Nvml::Symbols {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  SystemStringFn driver_version = nullptr;
  DeviceCountFn device_count = nullptr;
  HandleByIndexFn handle_by_index = nullptr;
  DeviceStringFn name = nullptr;
  DeviceStringFn uuid = nullptr;
  MemoryInfoFn memory_info = nullptr;
  UtilizationFn utilization = nullptr;
  PowerUsageFn power_usage = nullptr;
  MigModeFn mig_mode = nullptr;
  MinorNumberFn minor_number = nullptr;
  ProcessesV2Fn processes_v3 = nullptr;
  ProcessesV2Fn processes_v2 = nullptr;
  ProcessesV1Fn processes_v1 = nullptr;
};

namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr uint64_t kSentinelWord = 0xA5A5A5A5A5A5A5A5ull;
constexpr unsigned char kSentinelByte = 0xA5;
constexpr unsigned int kV2RecordSize = sizeof(nvmlProcessInfo_v2_t);

template <typename Fn>
void Bind(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
}

std::unique_ptr<Nvml::Symbols> LoadSymbols(void* h) {
  auto s = std::make_unique<Nvml::Symbols>();
  Bind(h, "nvmlInit_v2", &s->init);
  Bind(h, "nvmlShutdown", &s->shutdown);
  Bind(h, "nvmlErrorString", &s->error_string);
  Bind(h, "nvmlSystemGetDriverVersion", &s->driver_version);
  Bind(h, "nvmlDeviceGetCount_v2", &s->device_count);
  Bind(h, "nvmlDeviceGetHandleByIndex_v2", &s->handle_by_index);
  Bind(h, "nvmlDeviceGetName", &s->name);
  Bind(h, "nvmlDeviceGetUUID", &s->uuid);
  Bind(h, "nvmlDeviceGetMemoryInfo", &s->memory_info);
  Bind(h, "nvmlDeviceGetUtilizationRates", &s->utilization);
  Bind(h, "nvmlDeviceGetPowerUsage", &s->power_usage);
  Bind(h, "nvmlDeviceGetMigMode", &s->mig_mode);
  Bind(h, "nvmlDeviceGetMinorNumber", &s->minor_number);
  Bind(h, "nvmlDeviceGetComputeRunningProcesses_v3", &s->processes_v3);
  Bind(h, "nvmlDeviceGetComputeRunningProcesses_v2", &s->processes_v2);
  Bind(h, "nvmlDeviceGetComputeRunningProcesses", &s->processes_v1);
  return s;
}

// The first required symbol that is missing, or "".
std::string MissingRequired(const Nvml::Symbols& s) {
  if (s.init == nullptr) return "nvmlInit_v2";
  if (s.shutdown == nullptr) return "nvmlShutdown";
  if (s.device_count == nullptr) return "nvmlDeviceGetCount_v2";
  if (s.handle_by_index == nullptr) return "nvmlDeviceGetHandleByIndex_v2";
  if (s.uuid == nullptr) return "nvmlDeviceGetUUID";
  return "";
}

std::optional<std::string> ReadString(DeviceStringFn fn, nvmlDevice_t d) {
  if (fn == nullptr) return std::nullopt;
  char buf[kStringBufferSize] = {};
  if (fn(d, buf, kStringBufferSize) != NVML_SUCCESS) return std::nullopt;
  buf[kStringBufferSize - 1] = '\0';
  return std::string(buf);
}

std::optional<nvmlMemory_t> ReadMemory(const Nvml::Symbols& s, nvmlDevice_t d) {
  nvmlMemory_t m{};
  if (s.memory_info == nullptr || s.memory_info(d, &m) != NVML_SUCCESS) return std::nullopt;
  return m;
}

// NOT_SUPPORTED means the GPU has no MIG at all, so MIG is known to be off.
std::optional<bool> ReadMig(const Nvml::Symbols& s, nvmlDevice_t d) {
  if (s.mig_mode == nullptr) return std::nullopt;
  unsigned int current = 0, pending = 0;
  nvmlReturn_t rc = s.mig_mode(d, &current, &pending);
  if (rc == NVML_ERROR_NOT_SUPPORTED) return false;
  if (rc != NVML_SUCCESS) return std::nullopt;
  return current == NVML_DEVICE_MIG_ENABLE;
}

std::optional<double> ReadUtilization(const Nvml::Symbols& s, nvmlDevice_t d) {
  nvmlUtilization_t u{};
  if (s.utilization == nullptr || s.utilization(d, &u) != NVML_SUCCESS) return std::nullopt;
  return std::clamp(u.gpu / 100.0, 0.0, 1.0);
}

std::optional<double> ReadPower(const Nvml::Symbols& s, nvmlDevice_t d) {
  unsigned int milliwatts = 0;
  if (s.power_usage == nullptr || s.power_usage(d, &milliwatts) != NVML_SUCCESS)
    return std::nullopt;
  return milliwatts / 1000.0;
}

// The records a process-list call wrote: room for `count` records of the largest known
// layout, pre-filled with a sentinel so that the written length can be seen afterwards.
struct RawRecords {
  std::vector<uint64_t> words;
  unsigned int count = 0;
  const unsigned char* bytes() const {
    return reinterpret_cast<const unsigned char*>(words.data());
  }
};

// Calls `call(&count, buffer)`, growing the buffer while NVML answers INSUFFICIENT_SIZE.
template <typename Call>
std::optional<RawRecords> FetchRecords(Call call) {
  unsigned int capacity = 64;
  for (int attempt = 0; attempt < 4; ++attempt) {
    RawRecords r;
    r.words.assign(size_t{capacity} * kProcessInfoR535Size / sizeof(uint64_t), kSentinelWord);
    r.count = capacity;
    nvmlReturn_t rc = call(&r.count, r.words.data());
    if (rc == NVML_SUCCESS) return r.count <= capacity ? std::optional(r) : std::nullopt;
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE) return std::nullopt;
    capacity = std::max(capacity * 2, r.count + 16);
  }
  return std::nullopt;
}

// _v3 wrote 24-byte records on current drivers and 32-byte ones on early R535: the bytes
// after `count` 24-byte records are untouched in the first case only.
unsigned int DetectV3Stride(const RawRecords& r) {
  const unsigned char* b = r.bytes();
  for (size_t i = size_t{r.count} * kV2RecordSize; i < size_t{r.count} * kProcessInfoR535Size; ++i)
    if (b[i] != kSentinelByte) return kProcessInfoR535Size;
  return kV2RecordSize;
}

std::vector<int64_t> PidsOf(const RawRecords& r, unsigned int stride) {
  std::vector<int64_t> pids;
  for (unsigned int i = 0; i < r.count; ++i) {
    unsigned int pid = 0;
    std::memcpy(&pid, r.bytes() + size_t{i} * stride, sizeof pid);
    pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

std::optional<std::vector<int64_t>> ReadPids(const Nvml::Symbols& s, nvmlDevice_t d) {
  if (s.processes_v3 != nullptr) {
    auto r = FetchRecords([&](unsigned int* n, void* buf) {
      return s.processes_v3(d, n, static_cast<nvmlProcessInfo_v2_t*>(buf));
    });
    if (!r) return std::nullopt;
    return PidsOf(*r, DetectV3Stride(*r));
  }
  if (s.processes_v2 != nullptr) {
    auto r = FetchRecords([&](unsigned int* n, void* buf) {
      return s.processes_v2(d, n, static_cast<nvmlProcessInfo_v2_t*>(buf));
    });
    return r ? std::optional(PidsOf(*r, kV2RecordSize)) : std::nullopt;
  }
  if (s.processes_v1 != nullptr) {
    auto r = FetchRecords([&](unsigned int* n, void* buf) {
      return s.processes_v1(d, n, static_cast<nvmlProcessInfo_v1_t*>(buf));
    });
    return r ? std::optional(PidsOf(*r, sizeof(nvmlProcessInfo_v1_t))) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Nvml::Nvml(void* handle, std::string library, std::unique_ptr<Symbols> sym)
    : handle_(handle), library_(std::move(library)), sym_(std::move(sym)) {}

Nvml::~Nvml() {
  if (initialised_) sym_->shutdown();
  dlclose(handle_);
}

StatusOr<std::unique_ptr<Nvml>> Nvml::Open(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status(StatusCode::kUnavailable, "NVML not available: cannot load " + library + ": " +
                                                (why != nullptr ? why : "dlopen failed"));
  }
  auto sym = LoadSymbols(handle);
  if (std::string missing = MissingRequired(*sym); !missing.empty()) {
    dlclose(handle);
    return FailedPrecondition("NVML unusable: " + library + " has no " + missing);
  }
  std::unique_ptr<Nvml> nvml(new Nvml(handle, library, std::move(sym)));
  AIRTIME_RETURN_IF_ERROR(nvml->Init());
  return nvml;
}

Status Nvml::Init() {
  nvmlReturn_t rc = sym_->init();
  if (rc != NVML_SUCCESS)
    return FailedPrecondition("NVML unusable: nvmlInit_v2 failed: " + ErrorText(rc));
  initialised_ = true;
  char buf[kStringBufferSize] = {};
  if (sym_->driver_version != nullptr &&
      sym_->driver_version(buf, kStringBufferSize) == NVML_SUCCESS) {
    buf[kStringBufferSize - 1] = '\0';
    driver_version_ = buf;
  }
  return OkStatus();
}

const char* Nvml::process_api() const {
  if (sym_->processes_v3 != nullptr) return "v3";
  if (sym_->processes_v2 != nullptr) return "v2";
  if (sym_->processes_v1 != nullptr) return "v1";
  return "";
}

std::string Nvml::ErrorText(int code) const {
  const char* text = sym_->error_string != nullptr ? sym_->error_string(code) : nullptr;
  return std::string(text != nullptr ? text : "NVML error") + " (" + std::to_string(code) + ")";
}

StatusOr<int> Nvml::DeviceCount() const {
  unsigned int n = 0;
  nvmlReturn_t rc = sym_->device_count(&n);
  if (rc != NVML_SUCCESS) return Internal("nvmlDeviceGetCount_v2 failed: " + ErrorText(rc));
  return static_cast<int>(n);
}

namespace {

// The device handle of `index`, or an error naming the GPU.
StatusOr<nvmlDevice_t> HandleOf(const Nvml& nvml, const Nvml::Symbols& s, int index) {
  nvmlDevice_t d = nullptr;
  nvmlReturn_t rc = s.handle_by_index(static_cast<unsigned int>(index), &d);
  if (rc != NVML_SUCCESS)
    return Internal("GPU " + std::to_string(index) + ": no handle: " + nvml.ErrorText(rc));
  return d;
}

}  // namespace

StatusOr<NvmlDeviceInfo> Nvml::Device(int index) const {
  auto handle = HandleOf(*this, *sym_, index);
  if (!handle.ok()) return handle.status();
  nvmlDevice_t d = *handle;
  NvmlDeviceInfo info;
  info.index = index;
  auto uuid = ReadString(sym_->uuid, d);
  if (!uuid || uuid->empty())
    return Internal("GPU " + std::to_string(index) + ": nvmlDeviceGetUUID failed");
  info.uuid = *uuid;
  info.name = ReadString(sym_->name, d).value_or("");
  if (auto m = ReadMemory(*sym_, d)) info.memory_total_mib = static_cast<int64_t>(m->total / kMiB);
  info.mig_enabled = ReadMig(*sym_, d);
  unsigned int minor = 0;
  if (sym_->minor_number != nullptr && sym_->minor_number(d, &minor) == NVML_SUCCESS)
    info.minor = static_cast<int>(minor);
  return info;
}

StatusOr<NvmlTelemetry> Nvml::Telemetry(int index) const {
  auto handle = HandleOf(*this, *sym_, index);
  if (!handle.ok()) return handle.status();
  nvmlDevice_t d = *handle;
  NvmlTelemetry t;
  t.utilization = ReadUtilization(*sym_, d);
  if (auto m = ReadMemory(*sym_, d)) t.memory_used_mib = static_cast<int64_t>(m->used / kMiB);
  t.power_w = ReadPower(*sym_, d);
  t.pids = ReadPids(*sym_, d);
  return t;
}

}  // namespace airtime
