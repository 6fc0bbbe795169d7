#include "stepd/cgroup/device_filter.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace loom::stepd {
namespace {

using core::StrCat;

long Bpf(int cmd, union bpf_attr* attr) {
  return ::syscall(__NR_bpf, cmd, attr, sizeof(*attr));
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

}  // namespace

StatusOr<int> LoadDeviceFilter(const std::vector<DeviceId>& denied) {
  // r1 = struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; }
  std::vector<bpf_insn> prog;
  prog.push_back(Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_2, BPF_REG_1, 0, 0));  // access_type
  prog.push_back(Insn(BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF));     // device type
  prog.push_back(Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_3, BPF_REG_1, 4, 0));  // major
  prog.push_back(Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_4, BPF_REG_1, 8, 0));  // minor
  for (const DeviceId& d : denied) {
    const int32_t type = d.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
    // Not this device: skip the three tests and the "deny" that follow.
    prog.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 4, type));
    prog.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_3, 0, 3, static_cast<int32_t>(d.major)));
    prog.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 2, static_cast<int32_t>(d.minor)));
    prog.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));  // deny
    prog.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  }
  prog.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1));  // allow
  prog.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));

  static const char kLicense[] = "Apache-2.0";
  char log[4096] = {};
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<uint64_t>(prog.data());
  attr.insn_cnt = static_cast<uint32_t>(prog.size());
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  attr.log_buf = reinterpret_cast<uint64_t>(log);
  attr.log_size = sizeof log;
  attr.log_level = 1;
  const long fd = Bpf(BPF_PROG_LOAD, &attr);
  if (fd < 0) {
    return absl::FailedPreconditionError(StrCat(
        "cannot load the device filter (bpf BPF_PROG_LOAD): ", std::strerror(errno),
        log[0] ? StrCat("; verifier: ", log) : std::string()));
  }
  return static_cast<int>(fd);
}

Status AttachDeviceFilter(int prog_fd, const std::string& cgroup_dir) {
  const int dir = ::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    return absl::InternalError(StrCat("cannot open ", cgroup_dir, ": ", std::strerror(errno)));
  }
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.target_fd = static_cast<uint32_t>(dir);
  attr.attach_bpf_fd = static_cast<uint32_t>(prog_fd);
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  const long rc = Bpf(BPF_PROG_ATTACH, &attr);
  const int err = errno;
  ::close(dir);
  if (rc < 0) {
    return absl::FailedPreconditionError(StrCat("cannot attach the device filter to ", cgroup_dir,
                                                ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace loom::stepd
