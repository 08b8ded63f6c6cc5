// The slice of NVML's C ABI that airtime uses, declared here so that the build needs no
// NVIDIA headers or libraries (NVML is loaded with dlopen at run time; see nvml.h).
//
// Layouts and values follow nvml.h of CUDA 12 (checked against the published header):
// return codes are plain ints, a device is an opaque pointer, nvmlMemory_t is the v1 struct
// {total, free, used} in bytes. Process lists come in three layouts: the unversioned call
// fills ProcessInfoV1 (16 bytes); _v2 fills ProcessInfoV2 (24 bytes); _v3 fills
// ProcessInfoV2 on current drivers but filled a 32-byte struct (one more 64-bit field,
// usedGpuCcProtectedMemory) on early R535 drivers, so callers must not trust the stride of
// _v3 blindly. Also used by the test's fake libnvidia-ml (fake_nvml.cc). Declarations only.
#pragma once

namespace airtime::nvml_api {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;
// Large enough for the v2 name (96), UUID (96) and driver version (80) buffers.
inline constexpr unsigned int kStringBufferSize = 96;

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlUtilization_t {
  unsigned int gpu;     // percent of time a kernel ran, 0..100
  unsigned int memory;  // percent of time memory was read or written, 0..100
};

struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
// The early-R535 _v3 record: nvmlProcessInfo_v2_t plus one unsigned long long.
inline constexpr unsigned int kProcessInfoR535Size = 32;

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using SystemStringFn = nvmlReturn_t (*)(char*, unsigned int);
using DeviceCountFn = nvmlReturn_t (*)(unsigned int*);
using HandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using DeviceStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using MemoryInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using UtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using PowerUsageFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // milliwatts
// nvmlDeviceGetMinorNumber: N of the device node /dev/nvidiaN.
using MinorNumberFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using MigModeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using ProcessesV1Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*);
using ProcessesV2Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*);

}  // namespace airtime::nvml_api
