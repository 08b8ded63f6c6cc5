// Slurm hostlist expressions: "n[1-3,7],gpu-a[01-02],login" names n1 n2 n3 n7 gpu-a01
// gpu-a02 login, in that order.
//
// Slurm reports a job's and a partition's nodes in this compressed form; airtime needs the
// names one by one. The input comes from Slurm and is untrusted: a malformed expression is an
// InvalidArgument naming it, and an expression that would expand to more than `max_names`
// names (a range such as n[0-999999999]) is refused before anything is expanded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"

namespace airtime::slurm {

inline constexpr size_t kMaxHostlistNames = 1 << 16;

StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view expr,
                                                  size_t max_names = kMaxHostlistNames);

// Whether `name` is one node's name as airtime sends it to Slurm: 1-256 of [A-Za-z0-9._-]
// (no hostlist brackets, commas or spaces).
bool ValidNodeName(std::string_view name);

}  // namespace airtime::slurm
