#include "core/log.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <mutex>

#include <spdlog/details/log_msg.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/syslog_sink.h>

#include "core/mutex.h"
#include "core/strings.h"

namespace loom::core {
namespace {

constexpr std::array<std::string_view, 10> kLevelNames = {
    "quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"};

constexpr std::array<std::string_view, 12> kFlagNames = {
    "Backfill", "Scheduling", "Steps",     "Gres",        "Cgroup",    "Protocol",
    "Priority", "Dependency", "Reservation", "TraceJobs", "CPU_Bind", "SelectType"};

std::optional<uint32_t> FlagByName(std::string_view name) {
  for (size_t i = 0; i < kFlagNames.size(); ++i) {
    if (EqualsIgnoreCase(name, kFlagNames[i])) return uint32_t{1} << i;
  }
  return std::nullopt;
}

absl::Status UnknownFlag(std::string_view name) {
  return absl::InvalidArgumentError(
      fmt::format("Invalid DebugFlag: {} (known: {})", name, fmt::join(kFlagNames, ",")));
}

// A sink that hands each formatted line to a function: the tests' window on the log.
class FunctionSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit FunctionSink(std::function<void(std::string_view)> fn) : fn_(std::move(fn)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::string_view text(line.data(), line.size());
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    fn_(text);
  }
  void flush_() override {}

 private:
  std::function<void(std::string_view)> fn_;
};

constexpr const char* kPattern = "[%Y-%m-%dT%H:%M:%S.%e] %v";

}  // namespace

std::string_view LogLevelName(LogLevel level) { return kLevelNames[static_cast<size_t>(level)]; }

LogLevel RaiseLogLevel(LogLevel level, int steps) {
  const int raised = static_cast<int>(level) + std::max(0, steps);
  return static_cast<LogLevel>(std::min(raised, static_cast<int>(LogLevel::kDebug5)));
}

std::optional<LogLevel> ParseLogLevel(std::string_view text) {
  text = Trim(text);
  for (size_t i = 0; i < kLevelNames.size(); ++i) {
    if (EqualsIgnoreCase(text, kLevelNames[i])) return static_cast<LogLevel>(i);
  }
  if (std::optional<int64_t> n = ParseInt(text); n && *n >= 0 && *n <= 9) {
    return static_cast<LogLevel>(*n);
  }
  return std::nullopt;
}

std::string DebugFlagsString(uint32_t flags) {
  std::vector<std::string_view> names;
  for (size_t i = 0; i < kFlagNames.size(); ++i) {
    if (flags & (uint32_t{1} << i)) names.push_back(kFlagNames[i]);
  }
  return fmt::format("{}", fmt::join(names, ","));
}

absl::StatusOr<uint32_t> ParseDebugFlags(std::string_view text) {
  uint32_t flags = 0;
  for (std::string_view name : Split(text, ',')) {
    name = Trim(name);
    if (name.empty()) continue;
    std::optional<uint32_t> bit = FlagByName(name);
    if (!bit) return UnknownFlag(name);
    flags |= *bit;
  }
  return flags;
}

absl::StatusOr<uint32_t> ApplyDebugFlagChanges(uint32_t flags, std::string_view changes) {
  for (std::string_view item : Split(changes, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    const char sign = item.front();
    if (sign != '+' && sign != '-') {
      return absl::InvalidArgumentError(
          StrCat("Invalid debug flag change: ", item, " (each flag needs + or -, e.g. +Backfill)"));
    }
    std::optional<uint32_t> bit = FlagByName(Trim(item.substr(1)));
    if (!bit) return UnknownFlag(item.substr(1));
    flags = sign == '+' ? (flags | *bit) : (flags & ~*bit);
  }
  return flags;
}

// The destinations, each with the level it writes up to.
struct Logger::Sinks {
  Mutex mu;
  std::shared_ptr<spdlog::sinks::sink> err ABSL_GUARDED_BY(mu);
  std::shared_ptr<spdlog::sinks::sink> file ABSL_GUARDED_BY(mu);
  std::string file_path ABSL_GUARDED_BY(mu);
  std::shared_ptr<spdlog::sinks::sink> syslog ABSL_GUARDED_BY(mu);
  LogLevel syslog_level ABSL_GUARDED_BY(mu) = LogLevel::kQuiet;
  std::shared_ptr<spdlog::sinks::sink> test ABSL_GUARDED_BY(mu);
};

Logger::Logger(const Clock& clock) : clock_(clock), sinks_(std::make_unique<Sinks>()) {}
Logger::~Logger() = default;

void Logger::SetLevel(LogLevel level) {
  level_.store(level, std::memory_order_relaxed);
  UpdateThreshold();
}

void Logger::UpdateThreshold() {
  MutexLock lock(&sinks_->mu);
  LogLevel t = level();
  if (sinks_->syslog && sinks_->syslog_level > t) t = sinks_->syslog_level;
  threshold_.store(t, std::memory_order_relaxed);
}

namespace {
std::shared_ptr<spdlog::sinks::sink> WithPattern(std::shared_ptr<spdlog::sinks::sink> s,
                                                 const char* pattern, const char* eol = "\n") {
  s->set_formatter(
      std::make_unique<spdlog::pattern_formatter>(pattern, spdlog::pattern_time_type::local, eol));
  return s;
}
}  // namespace

void Logger::ToStderr(bool on) {
  MutexLock lock(&sinks_->mu);
  sinks_->err = on ? WithPattern(std::make_shared<spdlog::sinks::stderr_sink_mt>(), kPattern)
                   : nullptr;
}

absl::Status Logger::ToFile(const std::string& path) {
  std::shared_ptr<spdlog::sinks::sink> file;
  try {
    file = WithPattern(std::make_shared<spdlog::sinks::basic_file_sink_mt>(path), kPattern);
  } catch (const spdlog::spdlog_ex& e) {
    return absl::UnavailableError(StrCat("cannot open the log file ", path, ": ", e.what()));
  }
  MutexLock lock(&sinks_->mu);
  sinks_->file = std::move(file);
  sinks_->file_path = path;
  return absl::OkStatus();
}

absl::Status Logger::Reopen() {
  std::string path;
  {
    MutexLock lock(&sinks_->mu);
    path = sinks_->file_path;
  }
  if (path.empty()) return absl::OkStatus();
  return ToFile(path);
}

void Logger::ToSyslog(const std::string& ident, LogLevel level) {
  {
    MutexLock lock(&sinks_->mu);
    sinks_->syslog = WithPattern(
        std::make_shared<spdlog::sinks::syslog_sink_mt>(ident, LOG_PID, LOG_DAEMON, false), "%v", "");
    sinks_->syslog_level = level;
  }
  UpdateThreshold();
}

void Logger::ToSink(std::function<void(std::string_view line)> sink) {
  MutexLock lock(&sinks_->mu);
  sinks_->test = WithPattern(std::make_shared<FunctionSink>(std::move(sink)), kPattern);
}

void Logger::Write(LogLevel level, std::string_view message) {
  if (!Enabled(level)) return;
  std::string text;
  if (level != LogLevel::kInfo) text = StrCat(LogLevelName(level), ": ");
  text += message;
  // syslog ranks a line by its spdlog level; the file and stderr show Slurm's word instead.
  const spdlog::level::level_enum rank = level <= LogLevel::kError  ? spdlog::level::err
                                         : level <= LogLevel::kVerbose ? spdlog::level::info
                                                                       : spdlog::level::debug;
  const auto now = clock_.Wall();
  const spdlog::details::log_msg msg(now, spdlog::source_loc{}, "", rank, text);
  MutexLock lock(&sinks_->mu);
  const bool at_level = level <= this->level();
  try {
    if (at_level && sinks_->err) sinks_->err->log(msg);
    if (at_level && sinks_->file) {
      sinks_->file->log(msg);
      sinks_->file->flush();
    }
    if (at_level && sinks_->test) sinks_->test->log(msg);
    if (sinks_->syslog && level <= sinks_->syslog_level) sinks_->syslog->log(msg);
  } catch (const spdlog::spdlog_ex&) {
    // A full disk or a closed descriptor: the line is lost, the daemon goes on.
  }
}

Logger& Log() {
  static Logger* logger = [] {
    auto* l = new Logger();
    l->ToStderr(true);
    return l;
  }();
  return *logger;
}

absl::Status ConfigureLog(Logger& logger, const LogSettings& settings, const std::string& ident) {
  logger.SetDebugFlags(settings.debug_flags);
  if (!settings.file.empty()) {
    if (absl::Status s = logger.ToFile(settings.file); !s.ok()) return s;
  }
  logger.ToStderr(settings.file.empty() || settings.foreground);
  if (settings.syslog_level) logger.ToSyslog(ident, *settings.syslog_level);
  logger.SetLevel(settings.level);
  return absl::OkStatus();
}

std::string ExpandLogFileName(std::string_view pattern, std::string_view node,
                              std::string_view host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() &&
        (pattern[i + 1] == 'n' || pattern[i + 1] == 'h')) {
      out += pattern[i + 1] == 'n' ? node : host;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace loom::core
