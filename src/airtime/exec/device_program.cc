// Device rules and cgroup v2's device program: see device_program.h.
#include "airtime/exec/device_program.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>

#include "airtime/exec/run_files.h"

namespace airtime {
namespace {

// The kernel's limits: MAJOR has 12 bits and MINOR 20 (linux/kdev_t.h).
constexpr int64_t kMaxMajor = (1 << 12) - 1;
constexpr int64_t kMaxMinor = (1 << 20) - 1;

StatusOr<int64_t> ParseNumber(std::string_view text, int64_t max, const char* what,
                              std::string_view rule) {
  if (text == "*") return DeviceRule::kAny;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0 || v > max)
    return InvalidArgument("device rule '" + std::string(rule) + "': " + what + " '" +
                           std::string(text) + "' is not '*' or a number from 0 to " +
                           std::to_string(max));
  return v;
}

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst;
  i.src_reg = src;
  i.off = off;
  i.imm = imm;
  return i;
}
bpf_insn LoadWord(uint8_t dst, int16_t offset) {
  return Insn(BPF_LDX | BPF_MEM | BPF_W, dst, BPF_REG_1, offset, 0);
}
bpf_insn Alu(uint8_t op, uint8_t dst, int32_t imm) {
  return Insn(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm);
}
bpf_insn MoveReg(uint8_t dst, uint8_t src) {
  return Insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0);
}
bpf_insn JumpIfNot(uint8_t reg, int32_t imm) {  // offset filled in by the caller
  return Insn(BPF_JMP | BPF_JNE | BPF_K, reg, 0, 0, imm);
}
bpf_insn Exit() { return Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

// Registers of the program.
constexpr uint8_t kType = BPF_REG_2;    // BPF_DEVCG_DEV_BLOCK or _CHAR
constexpr uint8_t kAccess = BPF_REG_3;  // BPF_DEVCG_ACC_* bits asked for
constexpr uint8_t kMajor = BPF_REG_4;
constexpr uint8_t kMinor = BPF_REG_5;
constexpr uint8_t kScratch = BPF_REG_6;

}  // namespace

StatusOr<DeviceRule> ParseDeviceRule(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("device rule '" + std::string(text) + "': " + why +
                           " (the form is 'TYPE MAJOR:MINOR ACCESS', as 'c 195:0 rw')");
  };
  const size_t sp1 = text.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : text.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || text.find(' ', sp2 + 1) != std::string_view::npos)
    return bad("not three fields");
  const std::string_view type = text.substr(0, sp1);
  const std::string_view number = text.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view access = text.substr(sp2 + 1);
  DeviceRule rule;
  if (type != "c" && type != "b" && type != "a") return bad("type is not 'c', 'b' or 'a'");
  rule.type = type[0];
  const size_t colon = number.find(':');
  if (colon == std::string_view::npos) return bad("no ':' between major and minor");
  auto major = ParseNumber(number.substr(0, colon), kMaxMajor, "major", text);
  if (!major.ok()) return major.status();
  auto minor = ParseNumber(number.substr(colon + 1), kMaxMinor, "minor", text);
  if (!minor.ok()) return minor.status();
  rule.major = *major;
  rule.minor = *minor;
  if (access.empty()) return bad("no access");
  for (char c : access) {
    bool* flag = c == 'r' ? &rule.read : c == 'w' ? &rule.write : c == 'm' ? &rule.mknod : nullptr;
    if (flag == nullptr || *flag) return bad("access is not some of 'r', 'w' and 'm'");
    *flag = true;
  }
  return rule;
}

std::vector<bpf_insn> DeviceProgram(const std::vector<DeviceRule>& rules) {
  // R1 points at struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; }, the
  // access_type being (access << 16) | type.
  std::vector<bpf_insn> prog = {
      LoadWord(kType, offsetof(bpf_cgroup_dev_ctx, access_type)),
      MoveReg(kAccess, kType),
      Alu(BPF_AND, kType, 0xffff),
      Alu(BPF_RSH, kAccess, 16),
      LoadWord(kMajor, offsetof(bpf_cgroup_dev_ctx, major)),
      LoadWord(kMinor, offsetof(bpf_cgroup_dev_ctx, minor)),
  };
  for (const DeviceRule& rule : rules) {
    // One block per rule: each test jumps past the block's end when it fails; the block
    // ends in "return 1".
    std::vector<bpf_insn> block;
    if (rule.type != 'a')
      block.push_back(
          JumpIfNot(kType, rule.type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
    if (rule.major != DeviceRule::kAny)
      block.push_back(JumpIfNot(kMajor, static_cast<int32_t>(rule.major)));
    if (rule.minor != DeviceRule::kAny)
      block.push_back(JumpIfNot(kMinor, static_cast<int32_t>(rule.minor)));
    const int32_t allowed = (rule.read ? BPF_DEVCG_ACC_READ : 0) |
                            (rule.write ? BPF_DEVCG_ACC_WRITE : 0) |
                            (rule.mknod ? BPF_DEVCG_ACC_MKNOD : 0);
    if (allowed != (BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD)) {
      // Nothing asked for beyond what the rule allows: (access & ~allowed) == 0.
      block.push_back(MoveReg(kScratch, kAccess));
      block.push_back(Alu(BPF_AND, kScratch, ~allowed));
      block.push_back(JumpIfNot(kScratch, 0));
    }
    block.push_back(Alu(BPF_MOV, BPF_REG_0, 1));
    block.push_back(Exit());
    for (size_t i = 0; i < block.size(); ++i) {
      if (block[i].code == (BPF_JMP | BPF_JNE | BPF_K))
        block[i].off = static_cast<int16_t>(block.size() - i - 1);
    }
    prog.insert(prog.end(), block.begin(), block.end());
  }
  prog.push_back(Alu(BPF_MOV, BPF_REG_0, 0));
  prog.push_back(Exit());
  return prog;
}

Status AttachDeviceProgram(int cgroup_fd, const std::vector<std::string>& rules) {
  std::vector<DeviceRule> parsed;
  for (const std::string& text : rules) {
    auto rule = ParseDeviceRule(text);
    if (!rule.ok()) return rule.status();
    parsed.push_back(*rule);
  }
  const std::vector<bpf_insn> prog = DeviceProgram(parsed);
  auto load = [&](bpf_prog_load_opts* opts) {
    return bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "airtime_devices", "GPL", prog.data(),
                         prog.size(), opts);
  };
  int prog_fd = load(nullptr);
  if (prog_fd < 0) {
    // Again with the verifier's log, to say why.
    std::string log(64 * 1024, '\0');
    bpf_prog_load_opts opts{};
    opts.sz = sizeof opts;
    opts.log_level = 1;
    opts.log_size = static_cast<__u32>(log.size());
    opts.log_buf = log.data();
    prog_fd = load(&opts);
    if (prog_fd < 0) {
      log.resize(strnlen(log.c_str(), log.size()));
      return Internal(ErrnoMessage("loading the cgroup v2 device program (bpf)", -prog_fd) +
                      (log.empty() ? "" : "; the verifier said: " + log));
    }
  }
  const int err = bpf_prog_attach(prog_fd, cgroup_fd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI);
  close(prog_fd);
  if (err < 0) return Internal(ErrnoMessage("attaching the cgroup v2 device program (bpf)", -err));
  return OkStatus();
}

}  // namespace airtime
