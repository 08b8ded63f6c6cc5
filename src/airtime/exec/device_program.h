// Device rules and cgroup v2's device program: which device nodes a run may open.
//
// A rule reads as in cgroup v1's devices.allow: "TYPE MAJOR:MINOR ACCESS", TYPE `c`
// (character), `b` (block) or `a` (any), MAJOR and MINOR a number or `*`, ACCESS some of
// `r` (read), `w` (write) and `m` (mknod). Under cgroup v1 the rules are written to the
// run's devices.allow after an "a" in devices.deny. cgroup v2 has no devices controller: a
// BPF program of type BPF_PROG_TYPE_CGROUP_DEVICE, attached to the run's cgroup, answers
// each open or mknod (1 allows, 0 denies). DeviceProgram() compiles the rules into one
// (allow when a rule matches, deny otherwise), as runc and crun do; AttachDeviceProgram()
// loads it (libbpf) and attaches it with BPF_F_ALLOW_MULTI, so the programs of the cgroups
// above (systemd's, a container's) still apply: every program must allow.
#pragma once

#include <linux/bpf.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

struct DeviceRule {
  static constexpr int64_t kAny = -1;
  char type = 'a';       // 'c', 'b' or 'a'
  int64_t major = kAny;  // or kAny
  int64_t minor = kAny;  // or kAny
  bool read = false, write = false, mknod = false;
};

// "c 195:0 rwm" and the like; InvalidArgument naming what is wrong otherwise.
StatusOr<DeviceRule> ParseDeviceRule(std::string_view text);

// The program: allow an access when a rule matches its type, major, minor and every kind of
// access asked for; deny it otherwise.
std::vector<bpf_insn> DeviceProgram(const std::vector<DeviceRule>& rules);

// Parses `rules`, compiles them, loads the program and attaches it to the cgroup v2
// directory open as `cgroup_fd`. The program stays attached while the cgroup exists (the
// caller may close the descriptors). Errors carry the kernel's verifier log.
Status AttachDeviceProgram(int cgroup_fd, const std::vector<std::string>& rules);

}  // namespace airtime
