// The daemons' log, in Slurm's words: a line is "[2026-12-01T20:17:02.123] " (local time),
// then the level for every level but info ("error: ", "debug2: "), then the message. Levels
// and their names are Slurm's (quiet, fatal, error, info, verbose, debug, debug2..debug5);
// DebugFlags switch on extra lines of one subsystem. spdlog formats and writes the lines.
//
// A Logger writes to stderr, a file (reopened on request, after logrotate moved it), syslog
// at a level of its own, and any sink a test injects. Each daemon configures the process's
// logger, Log(), once at start; code logs through LogInfo() and its siblings. Thread-safe:
// the level and flags may change while other threads log.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/clock.h"

namespace loom::core {

enum class LogLevel { kQuiet, kFatal, kError, kInfo, kVerbose, kDebug, kDebug2, kDebug3, kDebug4,
                      kDebug5 };

// "quiet", "fatal", ..., "debug5".
std::string_view LogLevelName(LogLevel level);
// A level by Slurm's name (any case) or number (0 quiet .. 9 debug5), as SlurmctldDebug and
// `scontrol setdebug` take it; nullopt when it is neither.
std::optional<LogLevel> ParseLogLevel(std::string_view text);
// `level` made `steps` louder (a daemon's -v, once per v), debug5 at the most.
LogLevel RaiseLogLevel(LogLevel level, int steps);

// DebugFlags Loom knows (Slurm's names). Only some gate lines yet; the others are accepted,
// kept and shown, as docs/admin/slurm-conf.md says.
enum class DebugFlag : uint32_t { kBackfill, kScheduling, kSteps, kGres, kCgroup, kProtocol,
                                  kPriority, kDependency, kReservation, kTraceJobs, kCpuBind,
                                  kSelectType };
// Canonical names of the set flags, comma-joined in declaration order ("Backfill,Scheduling").
std::string DebugFlagsString(uint32_t flags);
// A DebugFlags value ("Backfill,Steps", any case) as a set.
absl::StatusOr<uint32_t> ParseDebugFlags(std::string_view text);
// `scontrol setdebugflags +Backfill,-Steps` applied to `flags`. Errors name the bad flag.
absl::StatusOr<uint32_t> ApplyDebugFlagChanges(uint32_t flags, std::string_view changes);
constexpr uint32_t FlagBit(DebugFlag f) { return uint32_t{1} << static_cast<uint32_t>(f); }

// "JobId=123", as Slurm writes job ids in its logs: LogInfo("{} started", JobId{id}).
struct JobId {
  uint64_t id;
};

class Logger {
 public:

  // `clock` stamps the lines; it must outlive the logger.
  explicit Logger(const Clock& clock = RealClock());
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // The level of stderr, the file and injected sinks (syslog keeps its own).
  void SetLevel(LogLevel level);
  LogLevel level() const { return level_.load(std::memory_order_relaxed); }
  void SetDebugFlags(uint32_t flags) { flags_.store(flags, std::memory_order_relaxed); }
  uint32_t debug_flags() const { return flags_.load(std::memory_order_relaxed); }
  bool FlagOn(DebugFlag f) const { return (debug_flags() & FlagBit(f)) != 0; }
  // Whether a line at `level` reaches any destination.
  bool Enabled(LogLevel level) const {
    return level != LogLevel::kQuiet && level <= threshold_.load(std::memory_order_relaxed);
  }

  // Destinations; each call replaces the earlier one of its kind.
  void ToStderr(bool on);
  // Appends to `path`, created when missing.
  absl::Status ToFile(const std::string& path);
  void ToSyslog(const std::string& ident, LogLevel level);
  // A test's sink: called with each whole line (prefix included, no newline).
  void ToSink(std::function<void(std::string_view line)> sink);
  // Closes and opens the file again at its path, so that a moved file is left to whoever
  // moved it; an error (the file cannot be created) keeps the old one.
  absl::Status Reopen();

  void Write(LogLevel level, std::string_view message);

 private:
  struct Sinks;
  void UpdateThreshold();

  const Clock& clock_;
  std::atomic<LogLevel> level_{LogLevel::kInfo};
  std::atomic<LogLevel> threshold_{LogLevel::kInfo};
  std::atomic<uint32_t> flags_{0};
  std::unique_ptr<Sinks> sinks_;
};

// The process's logger (stderr at info until the daemon configures it).
Logger& Log();

// How a daemon logs, from slurm.conf and its command line.
struct LogSettings {
  LogLevel level = LogLevel::kInfo;       // SlurmctldDebug / SlurmdDebug
  std::string file;                        // SlurmctldLogFile / SlurmdLogFile, expanded
  std::optional<LogLevel> syslog_level;    // *SyslogDebug, when set
  bool foreground = false;                 // -D: stderr too, even with a file
  uint32_t debug_flags = 0;
};
// Applies `settings` to `logger` under syslog identity `ident`: stderr when there is no file
// or in the foreground, the file when set.
absl::Status ConfigureLog(Logger& logger, const LogSettings& settings, const std::string& ident);
// A LogFile value with %n (this node's name) and %h (this host's name) replaced.
std::string ExpandLogFileName(std::string_view pattern, std::string_view node,
                              std::string_view host);

template <typename... Args>
void LogAt(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (Log().Enabled(level)) Log().Write(level, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void LogError(fmt::format_string<Args...> f, Args&&... args) {
  LogAt(LogLevel::kError, f, std::forward<Args>(args)...);
}
template <typename... Args>
void LogInfo(fmt::format_string<Args...> f, Args&&... args) {
  LogAt(LogLevel::kInfo, f, std::forward<Args>(args)...);
}
template <typename... Args>
void LogDebug2(fmt::format_string<Args...> f, Args&&... args) {
  LogAt(LogLevel::kDebug2, f, std::forward<Args>(args)...);
}
// A line of subsystem `flag`, written at info when the flag is on (as Slurm's DebugFlags
// lines are) and at debug2 otherwise.
template <typename... Args>
void LogFlagged(DebugFlag flag, fmt::format_string<Args...> f, Args&&... args) {
  LogAt(Log().FlagOn(flag) ? LogLevel::kInfo : LogLevel::kDebug2, f, std::forward<Args>(args)...);
}

}  // namespace loom::core

#ifndef ABSL_USES_STD_STRING_VIEW
// Debian's Abseil has a string_view of its own (a Status's message is one): written as text.
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(absl::string_view s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s.data(), s.size()), ctx);
  }
};
#endif

template <>
struct fmt::formatter<loom::core::JobId> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(loom::core::JobId j, Context& ctx) const {
    return fmt::format_to(ctx.out(), "JobId={}", j.id);
  }
};
