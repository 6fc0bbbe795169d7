// libmunge adapter: one context per call; munge error numbers become Status values whose text
// says what was wrong and what to do.
#include "auth/munge_auth.h"

#include <munge.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "core/mutex.h"
#include "core/sha256.h"
#include "core/strings.h"

namespace loom::auth {
namespace {

using core::StrCat;

// Longer than any credential munged makes for a request digest; longer input is refused
// before it reaches munged.
constexpr size_t kMaxCredentialBytes = 64 * 1024;
constexpr size_t kDigestBytes = 32;
constexpr size_t kMaxPayloadBytes = 1024 * 1024;

struct ContextDeleter {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter>;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

std::string DefaultSocketPath() {
  Context ctx(munge_ctx_create());
  char* path = nullptr;
  if (ctx && munge_ctx_get(ctx.get(), MUNGE_OPT_SOCKET, &path) == EMUNGE_SUCCESS && path) {
    return path;
  }
  return "/run/munge/munge.socket.2";
}

StatusOr<Context> NewContext(const std::string& socket_path) {
  Context ctx(munge_ctx_create());
  if (!ctx) return absl::ResourceExhaustedError("cannot create a MUNGE context: out of memory");
  if (munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket_path.c_str()) != EMUNGE_SUCCESS) {
    return absl::InternalError(StrCat("cannot set the MUNGE socket to ", socket_path, ": ",
                                      munge_ctx_strerror(ctx.get())));
  }
  return ctx;
}

std::string MungeText(munge_ctx_t ctx, munge_err_t err) {
  const char* text = ctx ? munge_ctx_strerror(ctx) : nullptr;
  return text ? text : munge_strerror(err);
}

std::string FormatLocalTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S", t, absl::LocalTimeZone());
}

absl::Time CtxTime(munge_ctx_t ctx, int opt) {
  time_t t = 0;
  if (munge_ctx_get(ctx, opt, &t) != EMUNGE_SUCCESS) return absl::InfinitePast();
  return absl::FromTimeT(t);
}

int CtxTtl(munge_ctx_t ctx) {
  int ttl = 0;
  if (munge_ctx_get(ctx, MUNGE_OPT_TTL, &ttl) != EMUNGE_SUCCESS) return 0;
  return ttl;
}

Status Unreachable(const std::string& socket_path, munge_ctx_t ctx, munge_err_t err) {
  return absl::UnavailableError(
      StrCat("cannot reach munged at ", socket_path, ": ", MungeText(ctx, err),
             "; start munged (systemctl start munge) or point Loom at the socket munged "
             "listens on (AuthInfo=socket=PATH in slurm.conf)"));
}

// The bytes that identify a credential for the local replay cache: the decoded body, so two
// spellings of one credential are one entry; hashed to keep entries small. 96 bits of the
// digest: that two of the at most 2^18 credentials held share them by chance is about 2^-61,
// and would only make the second one refused.
std::array<char, 12> CredentialKey(std::string_view credential) {
  std::string compact;
  compact.reserve(credential.size());
  for (char c : credential) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') compact.push_back(c);
  }
  std::string_view body = compact;
  if (body.starts_with("MUNGE:")) body.remove_prefix(6);
  if (body.ends_with(":")) body.remove_suffix(1);
  std::string decoded;
  if (!absl::Base64Unescape(std::string(body), &decoded)) decoded = compact;
  std::string digest = RequestDigest("munge-credential", decoded);
  std::array<char, 12> key;
  std::copy_n(digest.begin(), key.size(), key.begin());
  return key;
}

// Compares without stopping at the first difference, so the time taken tells nothing about
// how much of a digest a forger got right.
bool EqualInConstantTime(std::string_view a, std::string_view b) {
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

std::string RequestDigest(std::string_view method, std::string_view body) {
  core::Sha256 sha;
  auto update_with_length = [&](std::string_view piece) {
    char length[8];
    uint64_t n = piece.size();
    for (int i = 0; i < 8; ++i) length[i] = static_cast<char>(n >> (8 * (7 - i)));
    sha.Update(std::string_view(length, sizeof length));
    sha.Update(piece);
  };
  update_with_length(method);
  update_with_length(body);
  const auto digest = sha.Finish();
  static_assert(digest.size() == kDigestBytes);
  return std::string(digest.begin(), digest.end());
}

MungeCredentials::MungeCredentials(MungeOptions options)
    : options_(std::move(options)),
      socket_path_(options_.socket_path.empty() ? DefaultSocketPath() : options_.socket_path) {}

StatusOr<std::string> MungeCredentials::Encode(std::string_view payload) const {
  if (payload.size() > kMaxPayloadBytes) {
    return absl::InvalidArgumentError(StrCat("MUNGE payload of ", payload.size(),
                                             " bytes is too large; send a digest of the "
                                             "request (RequestDigest), not the request itself"));
  }
  ASSIGN_OR_RETURN(Context ctx, NewContext(socket_path_));
  if (options_.ttl_seconds > 0 &&
      munge_ctx_set(ctx.get(), MUNGE_OPT_TTL, options_.ttl_seconds) != EMUNGE_SUCCESS) {
    return absl::InvalidArgumentError(StrCat("cannot set the MUNGE credential TTL to ",
                                             options_.ttl_seconds,
                                             " s: ", munge_ctx_strerror(ctx.get())));
  }
  char* cred = nullptr;
  munge_err_t err =
      munge_encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
  std::unique_ptr<char, FreeDeleter> owned(cred);
  if (err == EMUNGE_SUCCESS && cred) return std::string(cred);
  if (err == EMUNGE_SOCKET) return Unreachable(socket_path_, ctx.get(), err);
  return absl::InternalError(StrCat("munged at ", socket_path_,
                                    " could not encode a credential: ", MungeText(ctx.get(), err),
                                    "; see munged's log (/var/log/munge/munged.log)"));
}

StatusOr<Identity> MungeCredentials::Decode(std::string_view credential,
                                            std::string_view expected_payload) {
  ASSIGN_OR_RETURN(OpenedCredential opened, Open(credential));
  return CheckPayload(opened, expected_payload);
}

StatusOr<Identity> CheckPayload(const OpenedCredential& opened,
                                std::string_view expected_payload) {
  const std::string& carried = opened.payload;
  if (carried.size() != expected_payload.size() ||
      (!carried.empty() && !EqualInConstantTime(carried, expected_payload))) {
    return absl::UnauthenticatedError(
        StrCat("MUNGE credential of uid ", opened.who.uid,
               " was issued for a different request, so it cannot vouch for this one; send the "
               "request again with a Loom or Slurm client, which makes a credential per request"));
  }
  return opened.who;
}

StatusOr<OpenedCredential> MungeCredentials::Open(std::string_view credential) {
  if (credential.empty()) {
    return absl::UnauthenticatedError(
        "request carries no MUNGE credential; send it with a Loom or Slurm client, which gets one "
        "from munged on the submitting host");
  }
  if (credential.size() > kMaxCredentialBytes || credential.find('\0') != std::string_view::npos) {
    return absl::UnauthenticatedError(
        StrCat("MUNGE credential is invalid (", credential.size(),
               " bytes, not a credential munged makes); send the request again with a Loom or "
               "Slurm client"));
  }
  ASSIGN_OR_RETURN(Context ctx, NewContext(socket_path_));
  std::string text(credential);
  void* payload = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t err = munge_decode(text.c_str(), ctx.get(), &payload, &length, &uid, &gid);
  std::unique_ptr<void, FreeDeleter> owned(payload);

  switch (err) {
    case EMUNGE_SUCCESS:
      break;
    case EMUNGE_SOCKET:
      return Unreachable(socket_path_, ctx.get(), err);
    case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION:
    case EMUNGE_BAD_CIPHER:
    case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP:
    case EMUNGE_BAD_REALM:
    case EMUNGE_BAD_LENGTH:
    case EMUNGE_CRED_INVALID:
      return absl::UnauthenticatedError(StrCat(
          "MUNGE credential is invalid (", MungeText(ctx.get(), err),
          "): it was forged, corrupted, or encoded by a munged with a different key; every host "
          "of the cluster must share the same /etc/munge/munge.key (restart munged after "
          "copying it)"));
    case EMUNGE_CRED_EXPIRED: {
      absl::Time encoded = CtxTime(ctx.get(), MUNGE_OPT_ENCODE_TIME);
      absl::Time decoded = CtxTime(ctx.get(), MUNGE_OPT_DECODE_TIME);
      return absl::UnauthenticatedError(StrCat(
          "MUNGE credential expired (encoded ", FormatLocalTime(encoded), ", valid for ",
          CtxTtl(ctx.get()), " s, presented ", FormatLocalTime(decoded),
          "); send the request again, and if this repeats synchronise the hosts' clocks (NTP)"));
    }
    case EMUNGE_CRED_REWOUND: {
      absl::Time encoded = CtxTime(ctx.get(), MUNGE_OPT_ENCODE_TIME);
      absl::Time decoded = CtxTime(ctx.get(), MUNGE_OPT_DECODE_TIME);
      return absl::UnauthenticatedError(
          StrCat("MUNGE credential was encoded in the future (encoded ", FormatLocalTime(encoded),
                 ", presented ", FormatLocalTime(decoded),
                 "); the sending host's clock is ahead: synchronise the hosts' clocks (NTP)"));
    }
    case EMUNGE_CRED_REPLAYED:
      return absl::UnauthenticatedError(
          "MUNGE credential was already used (replayed); every request needs a fresh credential: "
          "send the request again with a Loom or Slurm client");
    case EMUNGE_CRED_UNAUTHORIZED:
      return absl::PermissionDeniedError(
          StrCat("MUNGE credential is restricted to another user and may not be decoded by uid ",
                 static_cast<uint32_t>(getuid()), " (", MungeText(ctx.get(), err),
                 "); run the daemon as the user the client addressed (SlurmUser)"));
    default:
      return absl::InternalError(
          StrCat("munged at ", socket_path_, " could not decode the credential: ",
                 MungeText(ctx.get(), err), "; see munged's log (/var/log/munge/munged.log)"));
  }

  Identity who;
  who.uid = static_cast<uint32_t>(uid);
  who.gid = static_cast<uint32_t>(gid);
  who.encode_time = CtxTime(ctx.get(), MUNGE_OPT_ENCODE_TIME);
  absl::Time decoded = CtxTime(ctx.get(), MUNGE_OPT_DECODE_TIME);

  if (options_.replay_cache_capacity > 0) {
    const int64_t expires =
        absl::ToUnixSeconds(std::max(who.encode_time, decoded)) + CtxTtl(ctx.get());
    if (!RememberOnce(CredentialKey(credential), expires, absl::ToUnixSeconds(decoded))) {
      return absl::UnauthenticatedError(
          "MUNGE credential was already used (replayed; this daemon accepted it before): every "
          "request needs a fresh credential: send the request again with a Loom or Slurm client");
    }
  }

  OpenedCredential opened;
  opened.who = who;
  if (payload != nullptr) opened.payload.assign(static_cast<const char*>(payload), length);
  return opened;
}

bool MungeCredentials::RememberOnce(const ReplayKey& key, int64_t expires_at, int64_t now) {
  // Unix seconds fit 32 unsigned bits until 2106.
  const uint32_t expires = static_cast<uint32_t>(
      std::clamp<int64_t>(expires_at, 0, std::numeric_limits<uint32_t>::max()));
  core::MutexLock lock(&mu_);
  if ((now > earliest_expiry_ && now > last_sweep_) ||
      seen_.size() >= options_.replay_cache_capacity) {
    Sweep(now);
  }
  // One still remembered is refused even if it expired since the last sweep: munged refuses
  // it anyway, and the answer "replayed" is as true.
  if (!seen_.try_emplace(key, expires).second) return false;
  earliest_expiry_ = std::min<int64_t>(earliest_expiry_, expires);
  return true;
}

void MungeCredentials::Sweep(int64_t now) {
  int64_t earliest = std::numeric_limits<int64_t>::max();
  for (auto it = seen_.begin(); it != seen_.end();) {
    if (it->second < now) {
      seen_.erase(it++);
    } else {
      earliest = std::min<int64_t>(earliest, it->second);
      ++it;
    }
  }
  earliest_expiry_ = earliest;
  last_sweep_ = now;
  const size_t capacity = options_.replay_cache_capacity;
  if (seen_.size() < capacity) return;
  // Still full of live credentials (a flood within one TTL): forget the eighth of them that
  // expires first, so that sweeps stay rare while the flood lasts.
  std::vector<uint32_t> expiries;
  expiries.reserve(seen_.size());
  for (const auto& [k, expires] : seen_) expiries.push_back(expires);
  const size_t drop = std::max<size_t>(1, capacity / 8) + (seen_.size() - capacity);
  auto cut = expiries.begin() + static_cast<ptrdiff_t>(std::min(drop, expiries.size()) - 1);
  std::nth_element(expiries.begin(), cut, expiries.end());
  const uint32_t last_dropped = *cut;
  size_t dropped = 0;
  for (auto it = seen_.begin(); it != seen_.end() && dropped < drop;) {
    if (it->second <= last_dropped) {
      seen_.erase(it++);
      ++dropped;
    } else {
      ++it;
    }
  }
}

size_t MungeCredentials::replay_cache_size() const {
  core::MutexLock lock(&mu_);
  return seen_.size();
}

}  // namespace loom::auth
