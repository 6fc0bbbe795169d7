// cgroup v2: one directory per step under <root>/<scope>/job_<id>/step_<name>.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "stepd/cgroup/cgroup.h"
#include "stepd/cgroup/device_filter.h"
#include "stepd/cgroup/files.h"

namespace loom::stepd {
namespace {

using core::StrCat;
namespace files = cgroup_files;

class StepV2 final : public StepCgroup {
 public:
  // `stop`: the scope's directory, which Remove leaves (other jobs of the node use it).
  StepV2(std::string stop, std::string dir) : root_(std::move(stop)), dir_(std::move(dir)) {}

  Status Attach(pid_t pid) override { return files::Write(dir_ + "/cgroup.procs", StrCat(pid)); }

  Status Freeze(bool frozen) override {
    return files::Write(dir_ + "/cgroup.freeze", frozen ? "1" : "0");
  }

  Status KillAll() override {
    // cgroup.kill (Linux 5.14) kills everything at once, forks in flight included.
    if (files::Write(dir_ + "/cgroup.kill", "1").ok()) return absl::OkStatus();
    for (pid_t pid : Pids()) ::kill(pid, SIGKILL);
    return absl::OkStatus();
  }

  StatusOr<CgroupUsage> Usage() const override {
    CgroupUsage u;
    if (auto cpu = files::Read(dir_ + "/cpu.stat"); cpu.ok()) {
      u.cpu_usec = files::KeyedValue(*cpu, "usage_usec");
    }
    if (auto peak = files::Read(dir_ + "/memory.peak"); peak.ok()) {
      u.memory_peak_bytes = core::ParseInt(core::Trim(*peak)).value_or(0);
    }
    if (auto events = files::Read(dir_ + "/memory.events"); events.ok()) {
      u.oom_kills = files::KeyedValue(*events, "oom_kill");
    }
    return u;
  }

  Status Remove() override { return files::RemoveUpTo(dir_, root_); }
  std::vector<pid_t> Pids() const override { return files::Pids(dir_ + "/cgroup.procs"); }
  std::vector<std::string> ProcsFiles() const override { return {dir_ + "/cgroup.procs"}; }

 private:
  std::string root_;
  std::string dir_;
};

class CgroupV2 final : public CgroupSystem {
 public:
  CgroupV2(std::string root, std::string scope)
      : root_(std::move(root)), scope_(scope.empty() ? "loom" : std::move(scope)) {}
  std::string_view version() const override { return "v2"; }

  StatusOr<std::unique_ptr<StepCgroup>> Create(uint64_t job_id, std::string_view step_name,
                                               const StepLimits& limits) override {
    // The levels above the step: the root, each component of the scope, the job.
    std::vector<std::string> levels = {root_};
    for (std::string_view part : core::Split(scope_, '/')) {
      if (!part.empty()) levels.push_back(StrCat(levels.back(), "/", part));
    }
    const std::string job = StrCat(levels.back(), "/job_", job_id);
    levels.push_back(job);
    const std::string step = StrCat(job, "/step_", step_name);
    RETURN_IF_ERROR(files::MakeDirs(step));
    // Each level hands the controllers it has down to the next, so the step can use them.
    for (const std::string& dir : levels) RETURN_IF_ERROR(Delegate(dir, limits));
    if (!limits.cpus.empty()) RETURN_IF_ERROR(files::Write(step + "/cpuset.cpus", limits.cpus));
    if (!limits.mems.empty()) RETURN_IF_ERROR(files::Write(step + "/cpuset.mems", limits.mems));
    if (limits.memory_bytes > 0) {
      RETURN_IF_ERROR(files::Write(step + "/memory.max", StrCat(limits.memory_bytes)));
      const int64_t swap = limits.memory_swap_bytes > limits.memory_bytes
                               ? limits.memory_swap_bytes - limits.memory_bytes
                               : 0;
      if (limits.memory_swap_bytes > 0) {
        RETURN_IF_ERROR(files::Write(step + "/memory.swap.max", StrCat(swap)));
      }
      // An OOM kill ends the whole step, as Slurm's step ends OUT_OF_MEMORY.
      (void)files::Write(step + "/memory.oom.group", "1");
    }
    if (!limits.denied_devices.empty()) {
      ASSIGN_OR_RETURN(const int prog, LoadDeviceFilter(limits.denied_devices));
      Status attached = AttachDeviceFilter(prog, step);
      ::close(prog);  // the attachment keeps the program alive
      RETURN_IF_ERROR(attached);
    }
    return std::unique_ptr<StepCgroup>(new StepV2(StrCat(root_, "/", scope_), step));
  }

 private:
  // Enables in `dir`'s subtree the controllers the limits need, among those `dir` has.
  static Status Delegate(const std::string& dir, const StepLimits& limits) {
    auto available = files::Read(dir + "/cgroup.controllers");
    if (!available.ok()) return available.status();
    std::vector<std::string_view> have = core::Split(core::Trim(*available), ' ');
    auto has = [&](std::string_view c) {
      for (std::string_view h : have) if (h == c) return true;
      return false;
    };
    std::string want;
    auto need = [&](std::string_view c, bool needed) -> Status {
      if (!needed) return absl::OkStatus();
      if (!has(c)) {
        return absl::FailedPreconditionError(StrCat(
            "the ", c, " controller is not available in ", dir,
            " (cgroup.controllers: '", core::Trim(*available), "'); enable it in the parent's "
            "cgroup.subtree_control, or set CgroupPlugin=cgroup/v1 in cgroup.conf"));
      }
      want += StrCat(want.empty() ? "" : " ", "+", c);
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(need("cpuset", !limits.cpus.empty() || !limits.mems.empty()));
    RETURN_IF_ERROR(need("memory", limits.memory_bytes > 0));
    if (has("cpu")) want += StrCat(want.empty() ? "" : " ", "+cpu");  // for cpu.stat usage
    if (want.empty()) return absl::OkStatus();
    return files::Write(dir + "/cgroup.subtree_control", want);
  }

  std::string root_;
  std::string scope_;
};

}  // namespace

std::unique_ptr<CgroupSystem> MakeCgroupV2(std::string root, std::string scope) {
  return std::make_unique<CgroupV2>(std::move(root), std::move(scope));
}

}  // namespace loom::stepd
