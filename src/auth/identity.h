// Who sent a request, and what that identity may do: the authenticated uid/gid that a MUNGE
// credential carries, the job ownership rule Slurm applies (owner, root or SlurmUser), and
// user/group lookups through the host's name service (passwd, group; NSS).
//
// Thread-safety: value types and free functions; every lookup uses the reentrant *_r calls, so
// all of them may be called from several threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "core/status.h"

namespace loom::auth {

inline constexpr uint32_t kRootUid = 0;

// The identity a verified credential vouches for.
struct Identity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  // When the client's munged encoded the credential.
  absl::Time encode_time = absl::InfinitePast();
};

// True when `who` may cancel, hold, release, requeue, signal or update a job owned by
// `job_uid`: root, the configured SlurmUser (`slurm_user_uid`) and the job's owner may; nobody
// else may.
bool MayActOnJob(const Identity& who, uint32_t job_uid, uint32_t slurm_user_uid);

// One passwd entry.
struct UserInfo {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;  // primary group
  std::string home;
  std::string shell;
};

// The passwd entry of `uid`. NotFound when the host has no such user.
StatusOr<UserInfo> LookupUserById(uint32_t uid);

// The passwd entry of the user called `name_or_uid`; a string of digits is taken as a uid when
// no user has it as a name (slurm.conf's SlurmUser accepts both). NotFound when there is none.
StatusOr<UserInfo> LookupUserByName(std::string_view name_or_uid);

// The name of group `gid`. NotFound when the host has no such group.
StatusOr<std::string> GroupName(uint32_t gid);

// The gid of the group called `name_or_gid` (digits are taken as a gid when no group has that
// name). NotFound when there is none.
StatusOr<uint32_t> LookupGroupId(std::string_view name_or_gid);

// Every group `user` belongs to: its primary group first, then its supplementary groups in the
// order the name service lists them, without duplicates.
StatusOr<std::vector<uint32_t>> UserGroupIds(const UserInfo& user);

}  // namespace loom::auth
