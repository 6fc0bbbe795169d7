// MUNGE credentials, as Slurm uses them: every request carries a credential that the client's
// munged encoded and the receiving daemon's munged decodes, so the daemon learns the sender's
// uid and gid without trusting the client. The credential's payload is a digest of the request
// it travels with (RequestDigest), so a credential taken from one request cannot vouch for
// another.
//
// Decode rejects, each with an Unauthenticated status whose text says what was wrong and what
// to do: a missing credential, a forged or corrupted one (bad MAC, another key), an expired or
// rewound one (clock skew), a replayed one (munged's own replay cache, and a local one kept here
// for credentials decoded through another munged), and one issued for a different request.
// When munged cannot be reached the status is Unavailable and names the socket.
//
// Thread-safety: thread-safe. Every call creates its own libmunge context; the local replay
// cache is guarded by a mutex. One instance per daemon, shared by all its RPC threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "auth/identity.h"
#include "core/mutex.h"
#include "core/status.h"

namespace loom::auth {

struct MungeOptions {
  // The munged socket; empty means libmunge's default (/run/munge/munge.socket.2).
  // slurm.conf: AuthInfo=socket=PATH.
  std::string socket_path;
  // Lifetime of the credentials Encode makes, in seconds; 0 means munged's default (300 s),
  // which is what Slurm uses. munged caps it at its --max-ttl. slurm.conf: AuthInfo=ttl=N.
  int ttl_seconds = 0;
  // Most credentials the local replay cache remembers (each until it expires, 17 bytes each
  // in a table kept between 7/16 and 7/8 full); when full, the ones closest to expiry are forgotten
  // first. 0 turns the local cache off (munged's own replay detection still applies).
  size_t replay_cache_capacity = size_t{1} << 18;
};

// The payload a request's credential carries: SHA-256 over the request's method name and its
// serialized bytes (each length-prefixed, so no two (method, body) pairs share a digest).
// 32 raw bytes.
std::string RequestDigest(std::string_view method, std::string_view body);

// A credential munged has verified and this daemon has accepted (it is in the replay cache),
// with the payload it carries, not yet compared with the request it came with.
struct OpenedCredential {
  Identity who;
  std::string payload;
};

// `opened`'s sender when it carries `expected_payload`; Unauthenticated when it was made for
// another request.
StatusOr<Identity> CheckPayload(const OpenedCredential& opened, std::string_view expected_payload);

class MungeCredentials {
 public:
  explicit MungeCredentials(MungeOptions options = {});
  MungeCredentials(const MungeCredentials&) = delete;
  MungeCredentials& operator=(const MungeCredentials&) = delete;

  // A fresh credential for the calling process's uid and gid carrying `payload` (normally
  // RequestDigest of the request it will accompany). Unavailable when munged cannot be reached.
  StatusOr<std::string> Encode(std::string_view payload) const;

  // Verifies `credential` through munged and checks that it carries `expected_payload`.
  // Returns the sender's identity, or Unauthenticated (missing, invalid, expired, rewound,
  // replayed, other request), PermissionDenied (restricted to another decoder), Unavailable
  // (munged unreachable). A credential is accepted at most once by this instance.
  StatusOr<Identity> Decode(std::string_view credential, std::string_view expected_payload);

  // Decode in two steps, for a request whose credential arrives before its body: verifies
  // `credential` through munged and accepts it once, as Decode does; CheckPayload then compares
  // what it carries with the request.
  StatusOr<OpenedCredential> Open(std::string_view credential);

  // The socket actually used (libmunge's default when none was set).
  const std::string& socket_path() const { return socket_path_; }
  const MungeOptions& options() const { return options_; }

  // Credentials the local replay cache holds now.
  size_t replay_cache_size() const;

 private:
  // Records a credential munged accepted; false when this instance has already accepted it.
  // `key` identifies the decoded credential (96 bits of its SHA-256); it is remembered until
  // `expires`, `now` being the decoding munged's clock, both in Unix seconds.
  using ReplayKey = std::array<char, 12>;
  bool RememberOnce(const ReplayKey& key, int64_t expires, int64_t now);
  // Forgets the credentials expired at `now`; then, if the cache is still full, the ones
  // closest to expiry, so that at least one more fits.
  void Sweep(int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const MungeOptions options_;
  const std::string socket_path_;

  mutable core::Mutex mu_;
  // Each credential accepted, with the Unix second it expires: 16 bytes and a control byte per
  // entry, where a set plus an expiry-ordered multimap took about 150. Held for every request
  // of the last TTL (300 s), which at a few hundred requests a second is tens of thousands.
  absl::flat_hash_map<ReplayKey, uint32_t> seen_ ABSL_GUARDED_BY(mu_);
  // Expired entries are swept once one has expired, at most once a second.
  int64_t earliest_expiry_ ABSL_GUARDED_BY(mu_) = std::numeric_limits<int64_t>::max();
  int64_t last_sweep_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace loom::auth
