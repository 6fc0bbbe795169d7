// A site's Lua policy script (job_submit.lua, cli_filter.lua) loaded into a Lua 5.4 state
// with the `slurm` table of Slurm's Lua API: the log_* and user_msg helpers, the return codes
// (slurm.SUCCESS, slurm.ERROR, slurm.ESLURM_*), and the NO_VAL / INFINITE constants. Values
// cross between C++ and Lua as JSON: objects and arrays become tables, and tables passed to
// a function are read back after it returns, with whatever the script changed in them.
// Thread-compatible: one script per thread (job_submit.lua runs in helper processes, see
// docs/admin/job-submit.md; cli_filter.lua in the submitting command).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

struct lua_State;

namespace loom::policy {

// Slurm's "not set" and "unlimited" values as the Lua API shows them.
inline constexpr int64_t kNoVal = 0xfffffffe;
inline constexpr int64_t kNoVal16 = 0xfffe;
inline constexpr int64_t kInfinite = 0xffffffff;
inline constexpr int64_t kInfinite16 = 0xffff;
inline constexpr int64_t kNoVal64 = static_cast<int64_t>(0xfffffffffffffffeULL);
inline constexpr int64_t kInfinite64 = static_cast<int64_t>(0xffffffffffffffffULL);

// Return codes a script may give: slurm.SUCCESS (0), slurm.ERROR / slurm.FAILURE (-1), and
// the ESLURM_* codes of Slurm's Lua API.
inline constexpr int64_t kSuccess = 0;
inline constexpr int64_t kError = -1;

// What a return code means to the submitter ("Invalid partition name specified"), as
// Slurm's commands print it; "Unspecified error" for codes it does not know.
std::string ReturnCodeText(int64_t rc);

// One line a script logged through slurm.log_*: the level ("error", "info", "verbose",
// "debug" .. "debug5") and the text.
struct LogLine {
  std::string level;
  std::string text;
};

// What one call of a script's function gave back.
struct CallResult {
  int64_t rc = kSuccess;               // the function's number (slurm.SUCCESS when it returns none)
  std::vector<nlohmann::json> args;    // the arguments, as the function left them
  std::vector<std::string> user_msgs;  // slurm.user_msg / slurm.log_user, in order
  std::vector<LogLine> log;
};

class LuaScript {
 public:
  // Loads and runs `text` once (its top level defines the functions). `name` is the file's
  // path: errors read "PATH:LINE: what" as Lua words them, e.g. a syntax error.
  static StatusOr<std::unique_ptr<LuaScript>> Load(std::string_view text, std::string_view name);
  ~LuaScript();
  LuaScript(const LuaScript&) = delete;
  LuaScript& operator=(const LuaScript&) = delete;

  bool Defines(const char* function) const;
  // Calls `function` with `args` (tables for objects and arrays, nil for null). Errors
  // (InvalidArgument) carry the script's own message with PATH:LINE when it raises one, or
  // say that the function is missing or returned something other than a number.
  StatusOr<CallResult> Call(const char* function, std::vector<nlohmann::json> args);

  const std::string& name() const { return name_; }

 private:
  LuaScript() = default;
  lua_State* L_ = nullptr;
  std::string name_;
};

}  // namespace loom::policy
