#include "cli/command_line.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "cli/format/text.h"
#include "core/strings.h"

namespace loom::cli {

std::string LocalAcctTime(int64_t t) {
  if (t <= 0) return "Unknown";
  const time_t tt = static_cast<time_t>(t);
  struct tm tm;
  localtime_r(&tt, &tm);
  return format::FormatIsoTime(t, static_cast<int32_t>(tm.tm_gmtoff));
}

int PrintText(std::string_view text) {
  const bool written = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  return written && std::fflush(stdout) == 0 ? 0 : 1;
}

std::string CurrentUserName() {
  const uid_t uid = ::getuid();
  struct passwd entry;
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

int BadOption(const CommandText& text, const Status& error) {
  std::string line = core::StrCat(std::string(error.message()), "\n");
  if (text.try_help) {
    line += core::StrCat("Try \"", text.program, " --help\" for more information\n");
  }
  std::fputs(line.c_str(), stderr);
  return 1;
}

int NotSupported(std::string_view program, std::string_view long_name) {
  std::fputs(
      core::StrCat(program, ": error: --", long_name, " is not supported by Loom yet\n").c_str(),
      stderr);
  return 1;
}

}  // namespace loom::cli
