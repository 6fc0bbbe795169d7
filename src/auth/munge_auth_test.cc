// MUNGE credentials against real munged daemons that the test starts for itself (private key,
// socket and directory; the host's munged is never touched).
#include "auth/munge_auth.h"

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/munged_fixture.h"

namespace loom::auth {
namespace {

using ::loom::test_support::MungedFixture;
using ::loom::test_support::MungedOptions;
using ::testing::HasSubstr;

std::unique_ptr<MungedFixture> StartMunged(MungedOptions options = {}) {
  StatusOr<std::unique_ptr<MungedFixture>> munged = MungedFixture::Start(std::move(options));
  EXPECT_TRUE(munged.ok()) << munged.status();
  return munged.ok() ? std::move(*munged) : nullptr;
}

MungeOptions At(const MungedFixture& munged) {
  MungeOptions options;
  options.socket_path = munged.socket_path();
  return options;
}

class MungeAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { munged_ = StartMunged().release(); }
  static void TearDownTestSuite() {
    delete munged_;
    munged_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(munged_, nullptr); }

  static MungedFixture* munged_;
};
MungedFixture* MungeAuthTest::munged_ = nullptr;

const std::string kCancel = RequestDigest("CancelJob", "job_id: 17");
const std::string kCancelOther = RequestDigest("CancelJob", "job_id: 18");

TEST(RequestDigestTest, BindsMethodAndBody) {
  EXPECT_EQ(RequestDigest("CancelJob", "job_id: 17").size(), 32u);
  EXPECT_EQ(RequestDigest("CancelJob", "job_id: 17"), kCancel);
  EXPECT_NE(kCancel, kCancelOther);
  EXPECT_NE(RequestDigest("HoldJob", "job_id: 17"), kCancel);
  // Length prefixes keep the boundary between method and body.
  EXPECT_NE(RequestDigest("ab", "c"), RequestDigest("a", "bc"));
}

TEST_F(MungeAuthTest, RoundTripGivesTheSendersIdentity) {
  MungeCredentials auth(At(*munged_));
  EXPECT_EQ(auth.socket_path(), munged_->socket_path());
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  EXPECT_THAT(*cred, ::testing::StartsWith("MUNGE:"));

  StatusOr<Identity> who = auth.Decode(*cred, kCancel);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->uid, static_cast<uint32_t>(getuid()));
  EXPECT_EQ(who->gid, static_cast<uint32_t>(getgid()));
  EXPECT_LE(absl::AbsDuration(absl::Now() - who->encode_time), absl::Seconds(5));
}

TEST_F(MungeAuthTest, EmptyPayloadRoundTrips) {
  MungeCredentials auth(At(*munged_));
  StatusOr<std::string> cred = auth.Encode("");
  ASSERT_TRUE(cred.ok()) << cred.status();
  EXPECT_TRUE(auth.Decode(*cred, "").ok());
}

TEST_F(MungeAuthTest, CredentialForAnotherRequestIsRejected) {
  MungeCredentials auth(At(*munged_));
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  StatusOr<Identity> who = auth.Decode(*cred, kCancelOther);
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(who.status().message(), HasSubstr("issued for a different request"));
}

TEST_F(MungeAuthTest, MissingCredentialIsRejected) {
  MungeCredentials auth(At(*munged_));
  StatusOr<Identity> who = auth.Decode("", kCancel);
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(who.status().message(), HasSubstr("carries no MUNGE credential"));
}

TEST_F(MungeAuthTest, GarbageAndTamperedCredentialsAreInvalid) {
  MungeCredentials auth(At(*munged_));
  for (std::string_view garbage : {"hello", "MUNGE:AAAA:", "MUNGE:not base64!:"}) {
    StatusOr<Identity> who = auth.Decode(garbage, kCancel);
    EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated) << garbage;
    EXPECT_THAT(who.status().message(), HasSubstr("invalid")) << garbage;
  }
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  std::string tampered = *cred;
  char& c = tampered[tampered.size() / 2];
  c = c == 'A' ? 'B' : 'A';
  StatusOr<Identity> who = auth.Decode(tampered, kCancel);
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(who.status().message(), HasSubstr("MUNGE credential is invalid"));
  EXPECT_EQ(auth.Decode(std::string(100000, 'A'), kCancel).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(MungeAuthTest, CredentialFromAnotherKeyIsForged) {
  std::unique_ptr<MungedFixture> other_cluster = StartMunged();
  ASSERT_NE(other_cluster, nullptr);
  MungeCredentials forger(At(*other_cluster));
  StatusOr<std::string> forged = forger.Encode(kCancel);
  ASSERT_TRUE(forged.ok()) << forged.status();

  MungeCredentials auth(At(*munged_));
  StatusOr<Identity> who = auth.Decode(*forged, kCancel);
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(who.status().message(), HasSubstr("MUNGE credential is invalid"));
  EXPECT_THAT(who.status().message(), HasSubstr("different key"));
  EXPECT_THAT(who.status().message(), HasSubstr("munge.key"));
}

TEST_F(MungeAuthTest, ReplayIsRejected) {
  MungeCredentials auth(At(*munged_));
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  ASSERT_TRUE(auth.Decode(*cred, kCancel).ok());
  StatusOr<Identity> again = auth.Decode(*cred, kCancel);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(again.status().message(), HasSubstr("replayed"));
  EXPECT_THAT(again.status().message(), HasSubstr("fresh credential"));
}

TEST_F(MungeAuthTest, MungedItselfRejectsReplaysWithoutTheLocalCache) {
  MungeOptions options = At(*munged_);
  options.replay_cache_capacity = 0;
  MungeCredentials auth(options);
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  ASSERT_TRUE(auth.Decode(*cred, kCancel).ok());
  EXPECT_EQ(auth.replay_cache_size(), 0u);
  // Another daemon on the same host decodes through the same munged.
  MungeCredentials other_daemon(options);
  StatusOr<Identity> again = other_daemon.Decode(*cred, kCancel);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(again.status().message(), HasSubstr("replayed"));
}

TEST(MungeReplayTest, LocalCacheCatchesReplaysMungedForgot) {
  std::unique_ptr<MungedFixture> munged = StartMunged();
  ASSERT_NE(munged, nullptr);
  MungeCredentials auth(At(*munged));
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  ASSERT_TRUE(auth.Decode(*cred, kCancel).ok());

  // A restarted munged has an empty replay cache: it accepts the credential again...
  ASSERT_TRUE(munged->Restart().ok());
  MungeOptions no_cache = At(*munged);
  no_cache.replay_cache_capacity = 0;
  StatusOr<Identity> unguarded = MungeCredentials(no_cache).Decode(*cred, kCancel);
  EXPECT_TRUE(unguarded.ok()) << unguarded.status();

  // ...so after the next restart only the daemon's own cache remembers it.
  ASSERT_TRUE(munged->Restart().ok());
  StatusOr<Identity> again = auth.Decode(*cred, kCancel);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(again.status().message(), HasSubstr("this daemon accepted it before"));
}

TEST(MungeReplayTest, LocalCacheCatchesReplaysThroughAnotherMunged) {
  // Two hosts of one cluster: same key, separate munged (and so separate replay caches).
  std::unique_ptr<MungedFixture> host_a = StartMunged();
  ASSERT_NE(host_a, nullptr);
  MungedOptions same_key;
  same_key.key_file = host_a->key_file();
  std::unique_ptr<MungedFixture> host_b = StartMunged(same_key);
  ASSERT_NE(host_b, nullptr);

  StatusOr<std::string> cred = MungeCredentials(At(*host_a)).Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  MungeCredentials daemon_on_b(At(*host_b));
  StatusOr<Identity> first = daemon_on_b.Decode(*cred, kCancel);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(daemon_on_b.Decode(*cred, kCancel).ok());
  // A's munged never saw it, so a daemon decoding through A accepts it once.
  EXPECT_TRUE(MungeCredentials(At(*host_a)).Decode(*cred, kCancel).ok());
}

// Makes a fresh credential and has `auth` accept it.
void AcceptFresh(MungeCredentials& auth) {
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  ASSERT_TRUE(auth.Decode(*cred, kCancel).ok());
}

TEST(MungeReplayTest, CacheStaysWithinItsCapacity) {
  std::unique_ptr<MungedFixture> munged = StartMunged();
  ASSERT_NE(munged, nullptr);
  MungeOptions options = At(*munged);
  options.replay_cache_capacity = 2;
  MungeCredentials auth(options);
  for (int i = 0; i < 5; ++i) {
    ASSERT_NO_FATAL_FAILURE(AcceptFresh(auth));
    EXPECT_LE(auth.replay_cache_size(), 2u);
  }
  EXPECT_EQ(auth.replay_cache_size(), 2u);
}

TEST_F(MungeAuthTest, ExpiredCredentialsLeaveTheReplayCache) {
  MungeOptions options = At(*munged_);
  options.ttl_seconds = 1;
  MungeCredentials auth(options);
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(AcceptFresh(auth));
  EXPECT_EQ(auth.replay_cache_size(), 3u);
  // Once they expired, munged refuses them itself; the next credential accepted sweeps them.
  absl::SleepFor(absl::Milliseconds(2100));
  StatusOr<std::string> fresh = auth.Encode(kCancel);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_TRUE(auth.Decode(*fresh, kCancel).ok());
  EXPECT_EQ(auth.replay_cache_size(), 1u);
  EXPECT_FALSE(auth.Decode(*fresh, kCancel).ok());
}

TEST_F(MungeAuthTest, ExpiredCredentialIsRejected) {
  MungeOptions options = At(*munged_);
  options.ttl_seconds = 1;
  MungeCredentials auth(options);
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  absl::SleepFor(absl::Milliseconds(2100));
  StatusOr<Identity> who = auth.Decode(*cred, kCancel);
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(who.status().message(), HasSubstr("MUNGE credential expired"));
  EXPECT_THAT(who.status().message(), HasSubstr("valid for 1 s"));
  EXPECT_THAT(who.status().message(), HasSubstr("NTP"));
}

TEST(MungeUnavailableTest, MissingSocketNamesItAndSaysToStartMunged) {
  MungeOptions options;
  options.socket_path = "/nonexistent/loom/munge.socket";
  MungeCredentials auth(options);
  absl::Time start = absl::Now();
  StatusOr<std::string> cred = auth.Encode(kCancel);
  EXPECT_EQ(cred.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(cred.status().message(), HasSubstr("/nonexistent/loom/munge.socket"));
  EXPECT_THAT(cred.status().message(), HasSubstr("start munged"));
  StatusOr<Identity> who = auth.Decode("MUNGE:AAAA:", kCancel);
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(who.status().message(), HasSubstr("start munged"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(MungeUnavailableTest, StoppedMungedIsUnavailable) {
  std::unique_ptr<MungedFixture> munged = StartMunged();
  ASSERT_NE(munged, nullptr);
  MungeCredentials auth(At(*munged));
  StatusOr<std::string> cred = auth.Encode(kCancel);
  ASSERT_TRUE(cred.ok()) << cred.status();
  ASSERT_TRUE(munged->Stop().ok());
  EXPECT_EQ(munged->pid(), 0);

  StatusOr<Identity> who = auth.Decode(*cred, kCancel);
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(who.status().message(), HasSubstr(munged->socket_path()));
  EXPECT_THAT(who.status().message(), HasSubstr("start munged"));
  EXPECT_EQ(auth.Encode(kCancel).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(MungeAuthTest, ConcurrentCallersShareOneInstance) {
  MungeCredentials auth(At(*munged_));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::atomic<int> accepted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&auth, &accepted, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string digest = RequestDigest("SubmitJob", std::to_string(t * 1000 + i));
        StatusOr<std::string> cred = auth.Encode(digest);
        if (cred.ok() && auth.Decode(*cred, digest).ok()) ++accepted;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(accepted.load(), kThreads * kPerThread);
  EXPECT_EQ(auth.replay_cache_size(), static_cast<size_t>(kThreads * kPerThread));
}

// A credential encoded by another user decodes to that user's uid, and the job rule applies
// to it: the user may act on its own job only.
TEST_F(MungeAuthTest, CredentialOfAnotherUserCarriesItsUid) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create a test user and switch to it";
  StatusOr<uint32_t> uid = test_support::EnsureTestUser("loomtest1");
  ASSERT_TRUE(uid.ok()) << uid.status();
  passwd* pw = getpwuid(*uid);
  ASSERT_NE(pw, nullptr);
  gid_t gid = pw->pw_gid;

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string socket_path = munged_->socket_path();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(*uid) != 0) _exit(2);
    MungeOptions options;
    options.socket_path = socket_path;
    StatusOr<std::string> cred = MungeCredentials(options).Encode(kCancel);
    if (!cred.ok()) _exit(3);
    ssize_t written = write(fds[1], cred->data(), cred->size());
    _exit(written == static_cast<ssize_t>(cred->size()) ? 0 : 4);
  }
  close(fds[1]);
  std::string cred;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) cred.append(buffer, n);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;

  MungeCredentials auth(At(*munged_));
  StatusOr<Identity> who = auth.Decode(cred, kCancel);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->uid, *uid);
  EXPECT_EQ(who->gid, static_cast<uint32_t>(gid));

  constexpr uint32_t kSlurmUser = 64030;
  EXPECT_TRUE(MayActOnJob(*who, *uid, kSlurmUser));
  EXPECT_FALSE(MayActOnJob(*who, kRootUid, kSlurmUser));
  EXPECT_FALSE(MayActOnJob(*who, *uid + 1, kSlurmUser));
}

}  // namespace
}  // namespace loom::auth
