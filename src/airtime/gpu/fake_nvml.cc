// A stand-in libnvidia-ml for tests: the NVML C symbols airtime uses, over two fixed
// "NVIDIA H200" devices, so that the dlopen path of nvml.h runs on machines without GPUs.
//
// Device 0: MIG off, 40% busy, 1024 MiB used, 350 W, compute processes 4242 and 4343.
// Device 1: MIG on, utilization NOT_SUPPORTED (as on a real MIG-enabled GPU), 0 MiB used,
// 90 W, no processes. Both have 143771 MiB; their device nodes' minor numbers are 4 and 7.
// fake_nvml_set_process_record_size(32) makes the _v3 process call write the 32-byte records of
// early R535 drivers. Test-only; not thread-safe.
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "airtime/gpu/nvml_api.h"

using namespace airtime::nvml_api;  // NOLINT: the C names of the ABI

namespace {

struct FakeDevice {
  const char* uuid;
  unsigned int mig;
  unsigned int utilization;  // percent
  unsigned long long used_mib;
  unsigned int power_mw;
  unsigned int pids[2];
  unsigned int pid_count;
};

constexpr unsigned long long kMiB = 1024ull * 1024;
constexpr unsigned long long kTotalMib = 143771;

FakeDevice g_devices[2] = {
    {"GPU-00000000-fake-nvml-0000-000000000000", 0, 40, 1024, 350000, {4343, 4242}, 2},
    {"GPU-11111111-fake-nvml-1111-111111111111", 1, 0, 0, 90000, {0, 0}, 0},
};
int g_init_count = 0;
unsigned int g_record_size = sizeof(nvmlProcessInfo_v2_t);

FakeDevice* Dev(nvmlDevice_t d) { return reinterpret_cast<FakeDevice*>(d); }

nvmlReturn_t CopyString(const char* s, char* out, unsigned int length) {
  if (std::strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::snprintf(out, length, "%s", s);
  return NVML_SUCCESS;
}

// Writes `dev`'s processes as records of `size` bytes (16, 24 or 32).
nvmlReturn_t WriteProcesses(nvmlDevice_t d, unsigned int* count, void* out, unsigned int size) {
  const FakeDevice& dev = *Dev(d);
  if (*count < dev.pid_count) {
    *count = dev.pid_count;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned int i = 0; i < dev.pid_count; ++i) {
    unsigned char record[32] = {};
    unsigned long long memory = 512 * kMiB;
    std::memcpy(record, &dev.pids[i], sizeof(unsigned int));
    std::memcpy(record + 8, &memory, sizeof memory);
    std::memset(record + 16, 0xFF, 8);  // gpuInstanceId, computeInstanceId: N/A
    std::memcpy(static_cast<unsigned char*>(out) + i * size, record, size);
  }
  *count = dev.pid_count;
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

void fake_nvml_set_process_record_size(unsigned int bytes) { g_record_size = bytes; }
int fake_nvml_init_count() { return g_init_count; }

nvmlReturn_t nvmlInit_v2() {
  ++g_init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown() {
  --g_init_count;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t rc) {
  return rc == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* out, unsigned int length) {
  return CopyString("550.0-fake", out, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = 2;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = reinterpret_cast<nvmlDevice_t>(&g_devices[index]);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t, char* out, unsigned int length) {
  return CopyString("NVIDIA H200", out, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* out, unsigned int length) {
  return CopyString(Dev(d)->uuid, out, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* memory) {
  memory->total = kTotalMib * kMiB;
  memory->used = Dev(d)->used_mib * kMiB;
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  if (Dev(d)->mig) return NVML_ERROR_NOT_SUPPORTED;
  u->gpu = Dev(d)->utilization;
  u->memory = Dev(d)->utilization / 2;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* milliwatts) {
  *milliwatts = Dev(d)->power_mw;
  return NVML_SUCCESS;
}

// Minor numbers 4 and 7 (not the indices), as on a host whose /dev/nvidiaN do not follow them.
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int* minor) {
  *minor = Dev(d) == &g_devices[0] ? 4 : 7;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  *current = *pending = Dev(d)->mig;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  return WriteProcesses(d, count, infos, g_record_size);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  return WriteProcesses(d, count, infos, sizeof(nvmlProcessInfo_v2_t));
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  return WriteProcesses(d, count, infos, sizeof(nvmlProcessInfo_v1_t));
}

}  // extern "C"

// The fake's functions have exactly the types airtime looks them up as.
#define AIRTIME_SAME_TYPE(fn, type) static_assert(std::is_same_v<decltype(&fn), type>, #fn)
AIRTIME_SAME_TYPE(nvmlInit_v2, InitFn);
AIRTIME_SAME_TYPE(nvmlShutdown, ShutdownFn);
AIRTIME_SAME_TYPE(nvmlErrorString, ErrorStringFn);
AIRTIME_SAME_TYPE(nvmlSystemGetDriverVersion, SystemStringFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetCount_v2, DeviceCountFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetHandleByIndex_v2, HandleByIndexFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetName, DeviceStringFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetUUID, DeviceStringFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetMemoryInfo, MemoryInfoFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetUtilizationRates, UtilizationFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetPowerUsage, PowerUsageFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetMigMode, MigModeFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetMinorNumber, MinorNumberFn);
AIRTIME_SAME_TYPE(nvmlDeviceGetComputeRunningProcesses_v3, ProcessesV2Fn);
AIRTIME_SAME_TYPE(nvmlDeviceGetComputeRunningProcesses_v2, ProcessesV2Fn);
AIRTIME_SAME_TYPE(nvmlDeviceGetComputeRunningProcesses, ProcessesV1Fn);
