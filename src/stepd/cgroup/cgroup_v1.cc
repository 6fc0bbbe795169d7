// cgroup v1: the step's path in each hierarchy it needs (cpuset, memory, devices, freezer,
// cpuacct), processes added to each.
#include <signal.h>

#include <map>

#include "core/strings.h"
#include "stepd/cgroup/cgroup.h"
#include "stepd/cgroup/files.h"

namespace loom::stepd {
namespace {

using core::StrCat;
namespace files = cgroup_files;

constexpr const char* kHierarchies[] = {"cpuset", "memory", "devices", "freezer", "cpuacct"};

class StepV1 final : public StepCgroup {
 public:
  StepV1(std::string mountpoint, std::string scope, std::string rel,
         std::vector<std::string> used)
      : mount_(std::move(mountpoint)),
        scope_(std::move(scope)),
        rel_(std::move(rel)),
        used_(std::move(used)) {}

  Status Attach(pid_t pid) override {
    for (const std::string& h : used_) {
      RETURN_IF_ERROR(files::Write(Dir(h) + "/cgroup.procs", StrCat(pid)));
    }
    return absl::OkStatus();
  }

  Status Freeze(bool frozen) override {
    return files::Write(Dir("freezer") + "/freezer.state", frozen ? "FROZEN" : "THAWED");
  }

  Status KillAll() override {
    // Frozen, nothing can fork away while the signals go out.
    const bool froze = Freeze(true).ok();
    for (pid_t pid : Pids()) ::kill(pid, SIGKILL);
    if (froze) (void)Freeze(false);
    return absl::OkStatus();
  }

  StatusOr<CgroupUsage> Usage() const override {
    CgroupUsage u;
    if (auto ns = files::Read(Dir("cpuacct") + "/cpuacct.usage"); ns.ok()) {
      u.cpu_usec = core::ParseInt(core::Trim(*ns)).value_or(0) / 1000;
    }
    if (auto peak = files::Read(Dir("memory") + "/memory.max_usage_in_bytes"); peak.ok()) {
      u.memory_peak_bytes = core::ParseInt(core::Trim(*peak)).value_or(0);
    }
    if (auto oom = files::Read(Dir("memory") + "/memory.oom_control"); oom.ok()) {
      u.oom_kills = files::KeyedValue(*oom, "oom_kill");
    }
    return u;
  }

  Status Remove() override {
    Status first = absl::OkStatus();
    for (const std::string& h : used_) {
      Status s = files::RemoveUpTo(Dir(h), StrCat(mount_, "/", h, "/", scope_));
      if (first.ok() && !s.ok()) first = s;
    }
    return first;
  }

  std::vector<pid_t> Pids() const override {
    return files::Pids(Dir(used_.empty() ? "freezer" : used_.front()) + "/cgroup.procs");
  }

  std::vector<std::string> ProcsFiles() const override {
    std::vector<std::string> out;
    for (const std::string& h : used_) out.push_back(Dir(h) + "/cgroup.procs");
    return out;
  }

 private:
  std::string Dir(const std::string& h) const { return StrCat(mount_, "/", h, "/", rel_); }

  std::string mount_;
  std::string scope_;  // removal stops there: other jobs of the node use it
  std::string rel_;    // <scope>/job_N/step_M
  std::vector<std::string> used_;
};

class CgroupV1 final : public CgroupSystem {
 public:
  CgroupV1(std::string mountpoint, std::string scope)
      : mount_(std::move(mountpoint)), scope_(scope.empty() ? "loom" : std::move(scope)) {}
  std::string_view version() const override { return "v1"; }

  StatusOr<std::unique_ptr<StepCgroup>> Create(uint64_t job_id, std::string_view step,
                                               const StepLimits& limits) override {
    // Every level from the scope's first component down to the step.
    std::vector<std::string> rels;
    for (std::string_view part : core::Split(scope_, '/')) {
      if (part.empty()) continue;
      rels.push_back(rels.empty() ? std::string(part) : StrCat(rels.back(), "/", part));
    }
    rels.push_back(StrCat(scope_, "/job_", job_id));
    rels.push_back(StrCat(scope_, "/job_", job_id, "/step_", step));
    std::vector<std::string> used;
    for (const char* h : kHierarchies) {
      const std::string base = StrCat(mount_, "/", h);
      if (!files::Read(base + "/cgroup.procs").ok()) {
        if (std::string_view(h) == "freezer" || std::string_view(h) == "cpuacct") continue;
        const bool needed = (std::string_view(h) == "cpuset" && !limits.cpus.empty()) ||
                            (std::string_view(h) == "memory" && limits.memory_bytes > 0) ||
                            (std::string_view(h) == "devices" && !limits.denied_devices.empty());
        if (needed) {
          return absl::FailedPreconditionError(StrCat(
              "the cgroup v1 ", h, " hierarchy is not mounted at ", base,
              "; mount it or set CgroupMountpoint in cgroup.conf"));
        }
        continue;
      }
      for (const std::string& rel : rels) {
        const std::string dir = StrCat(base, "/", rel);
        RETURN_IF_ERROR(files::MakeDirs(dir));
        // A new cpuset has no CPUs or memory nodes: it starts with its parent's.
        if (std::string_view(h) == "cpuset") RETURN_IF_ERROR(InheritCpuset(dir));
      }
      used.push_back(h);
    }
    const std::string& rel = rels.back();
    auto dir = [&](const char* h) { return StrCat(mount_, "/", h, "/", rel); };
    if (!limits.cpus.empty()) RETURN_IF_ERROR(files::Write(dir("cpuset") + "/cpuset.cpus", limits.cpus));
    if (!limits.mems.empty()) RETURN_IF_ERROR(files::Write(dir("cpuset") + "/cpuset.mems", limits.mems));
    if (limits.memory_bytes > 0) {
      RETURN_IF_ERROR(files::Write(dir("memory") + "/memory.limit_in_bytes", StrCat(limits.memory_bytes)));
      if (limits.memory_swap_bytes >= limits.memory_bytes) {
        // memsw exists only with swap accounting; without it RAM is the limit that holds.
        (void)files::Write(dir("memory") + "/memory.memsw.limit_in_bytes",
                           StrCat(limits.memory_swap_bytes));
      }
    }
    for (const DeviceId& d : limits.denied_devices) {
      RETURN_IF_ERROR(files::Write(dir("devices") + "/devices.deny",
                                   StrCat(std::string(1, d.type), " ", d.major, ":", d.minor, " rwm")));
    }
    return std::unique_ptr<StepCgroup>(new StepV1(mount_, scope_, rel, std::move(used)));
  }

 private:
  static Status InheritCpuset(const std::string& dir) {
    const std::string parent = dir.substr(0, dir.rfind('/'));
    for (const char* f : {"cpuset.cpus", "cpuset.mems"}) {
      auto mine = files::Read(StrCat(dir, "/", f));
      if (mine.ok() && !core::Trim(*mine).empty()) continue;
      ASSIGN_OR_RETURN(std::string theirs, files::Read(StrCat(parent, "/", f)));
      RETURN_IF_ERROR(files::Write(StrCat(dir, "/", f), core::Trim(theirs)));
    }
    return absl::OkStatus();
  }

  std::string mount_;
  std::string scope_;
};

}  // namespace

std::unique_ptr<CgroupSystem> MakeCgroupV1(std::string mountpoint, std::string scope) {
  return std::make_unique<CgroupV1>(std::move(mountpoint), std::move(scope));
}

}  // namespace loom::stepd
