// User and group lookups over the reentrant NSS calls, and the job ownership rule.
#include "auth/identity.h"

#include <grp.h>
#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "core/strings.h"

namespace loom::auth {
namespace {

using core::StrCat;

// Buffers for getpw*_r/getgr*_r start here and double on ERANGE up to the cap (a group with
// thousands of members needs a large one).
constexpr size_t kInitialBuffer = 1024;
constexpr size_t kMaxBuffer = size_t{64} << 20;

constexpr std::string_view kNssHint =
    "create it (useradd/groupadd) or check the name service configuration "
    "(/etc/nsswitch.conf) on this host";

// Calls `lookup(buffer, size, &result)` (one of the *_r functions, wrapped) growing the buffer
// on ERANGE. Returns the function's error number; 0 with `*found == false` means "no entry".
template <typename Entry, typename Lookup>
int LookupWithBuffer(Entry* entry, std::vector<char>* buffer, bool* found, Lookup lookup) {
  buffer->resize(kInitialBuffer);
  while (true) {
    Entry* result = nullptr;
    int rc = lookup(entry, buffer->data(), buffer->size(), &result);
    if (rc == ERANGE && buffer->size() < kMaxBuffer) {
      buffer->resize(buffer->size() * 2);
      continue;
    }
    // Some NSS modules report "not found" as ENOENT/ESRCH/EBADF/EPERM instead of 0.
    if (rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM) rc = 0;
    *found = rc == 0 && result != nullptr;
    return rc;
  }
}

UserInfo FromPasswd(const passwd& pw) {
  return UserInfo{pw.pw_name ? pw.pw_name : "", static_cast<uint32_t>(pw.pw_uid),
                  static_cast<uint32_t>(pw.pw_gid), pw.pw_dir ? pw.pw_dir : "",
                  pw.pw_shell ? pw.pw_shell : ""};
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 10 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool MayActOnJob(const Identity& who, uint32_t job_uid, uint32_t slurm_user_uid) {
  return who.uid == kRootUid || who.uid == slurm_user_uid || who.uid == job_uid;
}

StatusOr<UserInfo> LookupUserById(uint32_t uid) {
  passwd pw{};
  std::vector<char> buffer;
  bool found = false;
  int rc = LookupWithBuffer(&pw, &buffer, &found, [uid](passwd* e, char* b, size_t n, passwd** r) {
    return getpwuid_r(static_cast<uid_t>(uid), e, b, n, r);
  });
  if (rc != 0) {
    return absl::UnavailableError(StrCat("cannot look up uid ", uid, ": ", std::strerror(rc),
                                         "; check the name service (/etc/nsswitch.conf)"));
  }
  if (!found)
    return absl::NotFoundError(StrCat("no user has uid ", uid, " on this host; ", kNssHint));
  return FromPasswd(pw);
}

StatusOr<UserInfo> LookupUserByName(std::string_view name_or_uid) {
  if (name_or_uid.empty()) return absl::InvalidArgumentError("user name is empty");
  std::string name(name_or_uid);
  passwd pw{};
  std::vector<char> buffer;
  bool found = false;
  int rc =
      LookupWithBuffer(&pw, &buffer, &found, [&name](passwd* e, char* b, size_t n, passwd** r) {
        return getpwnam_r(name.c_str(), e, b, n, r);
      });
  if (rc != 0) {
    return absl::UnavailableError(StrCat("cannot look up user '", name, "': ", std::strerror(rc),
                                         "; check the name service (/etc/nsswitch.conf)"));
  }
  if (found) return FromPasswd(pw);
  if (AllDigits(name)) {
    std::optional<int64_t> uid = core::ParseInt(name);
    if (uid && *uid <= UINT32_MAX) return LookupUserById(static_cast<uint32_t>(*uid));
  }
  return absl::NotFoundError(StrCat("no user named '", name, "' on this host; ", kNssHint));
}

StatusOr<std::string> GroupName(uint32_t gid) {
  group gr{};
  std::vector<char> buffer;
  bool found = false;
  int rc = LookupWithBuffer(&gr, &buffer, &found, [gid](group* e, char* b, size_t n, group** r) {
    return getgrgid_r(static_cast<gid_t>(gid), e, b, n, r);
  });
  if (rc != 0) {
    return absl::UnavailableError(StrCat("cannot look up gid ", gid, ": ", std::strerror(rc),
                                         "; check the name service (/etc/nsswitch.conf)"));
  }
  if (!found)
    return absl::NotFoundError(StrCat("no group has gid ", gid, " on this host; ", kNssHint));
  return std::string(gr.gr_name ? gr.gr_name : "");
}

StatusOr<uint32_t> LookupGroupId(std::string_view name_or_gid) {
  if (name_or_gid.empty()) return absl::InvalidArgumentError("group name is empty");
  std::string name(name_or_gid);
  group gr{};
  std::vector<char> buffer;
  bool found = false;
  int rc = LookupWithBuffer(&gr, &buffer, &found, [&name](group* e, char* b, size_t n, group** r) {
    return getgrnam_r(name.c_str(), e, b, n, r);
  });
  if (rc != 0) {
    return absl::UnavailableError(StrCat("cannot look up group '", name, "': ", std::strerror(rc),
                                         "; check the name service (/etc/nsswitch.conf)"));
  }
  if (found) return static_cast<uint32_t>(gr.gr_gid);
  if (AllDigits(name)) {
    std::optional<int64_t> gid = core::ParseInt(name);
    if (gid && *gid <= UINT32_MAX) {
      ASSIGN_OR_RETURN(std::string ignored, GroupName(static_cast<uint32_t>(*gid)));
      (void)ignored;
      return static_cast<uint32_t>(*gid);
    }
  }
  return absl::NotFoundError(StrCat("no group named '", name, "' on this host; ", kNssHint));
}

StatusOr<std::vector<uint32_t>> UserGroupIds(const UserInfo& user) {
  if (user.name.empty()) return absl::InvalidArgumentError("user name is empty");
  std::vector<gid_t> groups(64);
  while (true) {
    int count = static_cast<int>(groups.size());
    int rc = getgrouplist(user.name.c_str(), static_cast<gid_t>(user.gid), groups.data(), &count);
    if (rc >= 0) {
      groups.resize(static_cast<size_t>(count));
      break;
    }
    // `count` now holds the number needed (glibc); grow at least by doubling otherwise.
    if (groups.size() >= (size_t{1} << 20)) {
      return absl::ResourceExhaustedError(
          StrCat("user '", user.name, "' belongs to more than ", groups.size(), " groups"));
    }
    groups.resize(std::max(static_cast<size_t>(count), groups.size() * 2));
  }
  std::vector<uint32_t> out;
  out.reserve(groups.size());
  out.push_back(user.gid);
  for (gid_t g : groups) {
    uint32_t id = static_cast<uint32_t>(g);
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

}  // namespace loom::auth
