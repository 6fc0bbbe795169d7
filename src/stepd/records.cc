#include "stepd/records.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace loom::stepd {

using core::StrCat;

std::string StepdRoot(const std::string& spool) { return spool + "/stepd"; }

StepdPaths PathsOf(const std::string& spool, const std::string& node, uint64_t job_id) {
  StepdPaths p;
  p.dir = StrCat(StepdRoot(spool), "/", node, "_job", job_id);
  p.launch = p.dir + "/launch.pb";
  p.pid = p.dir + "/pid";
  p.socket = p.dir + "/socket";
  p.result = p.dir + "/result";
  return p;
}

std::vector<uint64_t> ListJobs(const std::string& spool, const std::string& node) {
  std::vector<uint64_t> jobs;
  DIR* d = ::opendir(StepdRoot(spool).c_str());
  if (d == nullptr) return jobs;
  const std::string prefix = node + "_job";
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (!name.starts_with(prefix)) continue;
    if (auto id = core::ParseInt(name.substr(prefix.size())); id && *id > 0) {
      jobs.push_back(static_cast<uint64_t>(*id));
    }
  }
  ::closedir(d);
  std::sort(jobs.begin(), jobs.end());
  return jobs;
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

Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode) {
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
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return absl::InternalError(StrCat("cannot write ", path, ": ", std::strerror(err)));
  }
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
