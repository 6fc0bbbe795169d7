#include "stepd/records.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace loom::stepd {

using core::StrCat;

std::string StepdRoot(const std::string& spool) { return spool + "/stepd"; }

std::string HardwarePath(const std::string& spool, const std::string& node) {
  return StrCat(StepdRoot(spool), "/", node, ".hardware");
}

std::string RelaySocketPath(const std::string& spool, const std::string& node) {
  return StrCat(StepdRoot(spool), "/", node, ".relay");
}

std::string Describe(const StepRef& ref) {
  switch (ref.kind) {
    case StepRef::Kind::kBatch:
      return StrCat("job ", ref.job_id);
    case StepRef::Kind::kOnlyStep:
      return StrCat("job ", ref.job_id, "'s tasks");
    case StepRef::Kind::kStep:
      break;
  }
  return StrCat("step ", ref.job_id, ".", ref.step_id);
}

std::string StepArg(const StepRef& ref) {
  switch (ref.kind) {
    case StepRef::Kind::kBatch:
      return "";
    case StepRef::Kind::kOnlyStep:
      return "srun";
    case StepRef::Kind::kStep:
      break;
  }
  return StrCat(ref.step_id);
}

StatusOr<StepRef> ParseStepArg(uint64_t job, std::string_view arg) {
  if (arg.empty()) return StepRef::Batch(job);
  if (arg == "srun") return StepRef::OnlyStep(job);
  auto id = core::ParseInt(arg);
  if (!id || *id < 0 || *id > 0xfffffff0) {
    return absl::InvalidArgumentError(
        StrCat("'", arg, "' is not a step (a step id, or 'srun' for a job srun submitted)"));
  }
  return StepRef::Step(job, static_cast<uint32_t>(*id));
}

StepdPaths PathsOf(const std::string& spool, const std::string& node, const StepRef& ref) {
  StepdPaths p;
  const std::string step = StepArg(ref);
  p.dir = StrCat(StepdRoot(spool), "/", node, "_job", ref.job_id, step.empty() ? "" : ".", step);
  p.launch = p.dir + "/launch.pb";
  p.pid = p.dir + "/pid";
  p.tasks = p.dir + "/tasks";
  p.socket = p.dir + "/socket";
  p.result = p.dir + "/result";
  return p;
}

std::vector<StepRef> ListSupervised(const std::string& spool, const std::string& node) {
  std::vector<StepRef> out;
  DIR* d = ::opendir(StepdRoot(spool).c_str());
  if (d == nullptr) return out;
  const std::string prefix = node + "_job";
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (!name.starts_with(prefix)) continue;
    name.remove_prefix(prefix.size());
    const size_t dot = name.find('.');
    auto id = core::ParseInt(name.substr(0, dot));
    if (!id || *id <= 0) continue;
    auto ref = ParseStepArg(static_cast<uint64_t>(*id),
                            dot == std::string_view::npos ? "" : name.substr(dot + 1));
    if (ref.ok() && (dot == std::string_view::npos || dot + 1 < name.size())) out.push_back(*ref);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<uint64_t> StartTimeOf(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  auto text = ReadFile(StrCat("/proc/", pid, "/stat"));
  if (!text.ok()) return std::nullopt;
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses; the last ')' ends it.
  const size_t close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::vector<std::string_view> fields =
      core::Split(std::string_view(*text).substr(close + 2), ' ');
  // fields[0] is field 3 (state); the start time is field 22.
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") return std::nullopt;
  auto start = core::ParseInt(fields[19]);
  if (!start || *start < 0) return std::nullopt;
  return static_cast<uint64_t>(*start);
}

std::optional<ProcessRef> RefOf(pid_t pid) {
  auto start = StartTimeOf(pid);
  if (!start) return std::nullopt;
  return ProcessRef{pid, *start};
}

bool IsAlive(const ProcessRef& p) {
  auto start = StartTimeOf(p.pid);
  return start && *start == p.start_time;
}

int OpenPidFd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

std::string FormatPidRecord(const PidRecord& r) {
  return StrCat(r.stepd.pid, " ", r.stepd.start_time, " ", r.job.pid, " ", r.job.start_time, "\n");
}

StatusOr<PidRecord> ParsePidRecord(std::string_view text, std::string_view where) {
  std::vector<int64_t> v;
  for (std::string_view f : core::Split(core::Trim(text), ' ')) {
    auto n = core::ParseInt(f);
    if (!n || *n < 0) break;
    v.push_back(*n);
  }
  if (v.size() != 4 || v[0] == 0) {
    return absl::InvalidArgumentError(StrCat(where, ": not a supervisor pid record ('",
                                             core::Trim(text), "'); remove the job's directory"));
  }
  PidRecord r;
  r.stepd = {static_cast<pid_t>(v[0]), static_cast<uint64_t>(v[1])};
  r.job = {static_cast<pid_t>(v[2]), static_cast<uint64_t>(v[3])};
  return r;
}

std::string FormatTaskRecords(const std::vector<TaskRecord>& tasks) {
  std::string out;
  for (const TaskRecord& t : tasks) {
    out += StrCat(t.task, " ", t.process.pid, " ", t.process.start_time, "\n");
  }
  return out;
}

StatusOr<std::vector<TaskRecord>> ParseTaskRecords(std::string_view text,
                                                   std::string_view where) {
  std::vector<TaskRecord> out;
  int line_no = 0;
  for (std::string_view line : core::Split(text, '\n')) {
    ++line_no;
    line = core::Trim(line);
    if (line.empty()) continue;
    std::vector<int64_t> v;
    for (std::string_view f : core::Split(line, ' ')) {
      auto n = core::ParseInt(f);
      if (!n || *n < 0) break;
      v.push_back(*n);
    }
    if (v.size() != 3 || v[1] == 0) {
      return absl::InvalidArgumentError(
          StrCat(where, ":", line_no, ": not a 'TASK PID START' line: '", line, "'"));
    }
    out.push_back(TaskRecord{static_cast<int32_t>(v[0]),
                             ProcessRef{static_cast<pid_t>(v[1]), static_cast<uint64_t>(v[2])}});
  }
  return out;
}

std::string FormatResult(const StepResult& r) {
  return StrCat("job_id=", r.job_id, "\nwait_status=", r.wait_status,
                "\nout_of_memory=", r.out_of_memory ? 1 : 0, "\nterminated=", r.terminated ? 1 : 0,
                "\nkilled=", r.killed ? 1 : 0, "\ntimed_out=", r.timed_out ? 1 : 0,
                "\nuser_cpu_us=", r.user_cpu_us, "\nsystem_cpu_us=", r.system_cpu_us,
                "\ncgroup_cpu_us=", r.cgroup_cpu_us, "\nmax_rss_bytes=", r.max_rss_bytes, "\n");
}

StatusOr<StepResult> ParseResult(std::string_view text, std::string_view where) {
  StepResult r;
  int line_no = 0;
  bool has_id = false, has_status = false;
  for (std::string_view line : core::Split(text, '\n')) {
    ++line_no;
    line = core::Trim(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    auto value = eq == std::string_view::npos ? std::nullopt : core::ParseInt(line.substr(eq + 1));
    if (!value) {
      return absl::InvalidArgumentError(
          StrCat(where, ":", line_no, ": not a 'key=number' line: '", line, "'"));
    }
    const std::string_view key = line.substr(0, eq);
    if (key == "job_id") {
      r.job_id = static_cast<uint64_t>(*value);
      has_id = true;
    } else if (key == "wait_status") {
      r.wait_status = static_cast<int32_t>(*value);
      has_status = true;
    } else if (key == "out_of_memory")
      r.out_of_memory = *value != 0;
    else if (key == "terminated")
      r.terminated = *value != 0;
    else if (key == "killed")
      r.killed = *value != 0;
    else if (key == "timed_out")
      r.timed_out = *value != 0;
    else if (key == "user_cpu_us")
      r.user_cpu_us = *value;
    else if (key == "system_cpu_us")
      r.system_cpu_us = *value;
    else if (key == "cgroup_cpu_us")
      r.cgroup_cpu_us = *value;
    else if (key == "max_rss_bytes")
      r.max_rss_bytes = *value;
    // Unknown keys come from a newer loom-stepd: ignored.
  }
  if (!has_id || !has_status) {
    return absl::InvalidArgumentError(
        StrCat(where, ": incomplete result (job_id and wait_status are required)"));
  }
  return r;
}

Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode,
                       Durability durability) {
  const bool sync = durability == Durability::kSurvivesCrash;
  const std::string tmp = StrCat(path, ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return absl::InternalError(StrCat("cannot create ", tmp, ": ", std::strerror(errno)));
  size_t done = 0;
  int err = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (err == 0 && sync && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return absl::InternalError(StrCat("cannot write ", path, ": ", std::strerror(err)));
  }
  if (!sync) return absl::OkStatus();
  const std::string dir =
      path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
  if (const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(StrCat(path, " does not exist"));
    return absl::InternalError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace loom::stepd
