// Mapping NVML device names to airtime catalogue GPU types.
//
// NVML names a device by marketing name ("NVIDIA H200", "NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-32GB"); the catalogue (model/gpu_catalog.h) by
// type ("H200", "H100", "A100-80GB", "V100"). The family is the first word after the vendor
// prefix ("NVIDIA", "Tesla"), split at spaces and dashes, so that "GH200" is not "H200" and
// "A100" is not "A10". Where one family has two catalogue sizes (A100 40/80 GB, V100 16/32
// GB) the device's memory decides, or the name's "80GB"-style word when memory is unknown.
// Stateless: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "airtime/model/gpu_catalog.h"

namespace airtime {

// The catalogue type name for an NVML device name, or "" when airtime does not know the
// model (or `catalog` lacks the type). `memory_mib` is the device's memory, 0 if unknown.
std::string CatalogTypeForModel(std::string_view nvml_name, int64_t memory_mib,
                                const GpuCatalog& catalog = GpuCatalog::Builtin());

}  // namespace airtime
