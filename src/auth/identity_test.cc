#include "auth/identity.h"

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loom::auth {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kSlurmUser = 64030;
constexpr uint32_t kAlice = 1001;
constexpr uint32_t kBob = 1002;

Identity As(uint32_t uid) { return Identity{uid, uid, absl::UnixEpoch()}; }

TEST(MayActOnJobTest, OwnerMayActOnOwnJob) {
  EXPECT_TRUE(MayActOnJob(As(kAlice), kAlice, kSlurmUser));
}

TEST(MayActOnJobTest, OtherUserMayNot) {
  EXPECT_FALSE(MayActOnJob(As(kBob), kAlice, kSlurmUser));
  EXPECT_FALSE(MayActOnJob(As(kAlice), kBob, kSlurmUser));
  EXPECT_FALSE(MayActOnJob(As(kAlice), kRootUid, kSlurmUser));
}

TEST(MayActOnJobTest, RootAndSlurmUserMayActOnAnyJob) {
  EXPECT_TRUE(MayActOnJob(As(kRootUid), kAlice, kSlurmUser));
  EXPECT_TRUE(MayActOnJob(As(kSlurmUser), kAlice, kSlurmUser));
  EXPECT_TRUE(MayActOnJob(As(kSlurmUser), kRootUid, kSlurmUser));
}

TEST(MayActOnJobTest, SlurmUserRootGivesNoOneElseRights) {
  EXPECT_FALSE(MayActOnJob(As(kBob), kAlice, kRootUid));
}

TEST(MayActOnJobTest, GroupDoesNotGrantAccess) {
  Identity bob_in_alices_group{kBob, kAlice, absl::UnixEpoch()};
  EXPECT_FALSE(MayActOnJob(bob_in_alices_group, kAlice, kSlurmUser));
}

TEST(LookupUserTest, RootById) {
  StatusOr<UserInfo> root = LookupUserById(0);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->name, "root");
  EXPECT_EQ(root->uid, 0u);
  EXPECT_EQ(root->gid, 0u);
  EXPECT_EQ(root->home, "/root");
  EXPECT_FALSE(root->shell.empty());
}

TEST(LookupUserTest, ByNameOrNumber) {
  StatusOr<UserInfo> by_name = LookupUserByName("root");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(by_name->uid, 0u);
  StatusOr<UserInfo> by_number = LookupUserByName("0");
  ASSERT_TRUE(by_number.ok()) << by_number.status();
  EXPECT_EQ(by_number->name, "root");
}

TEST(LookupUserTest, CurrentUser) {
  StatusOr<UserInfo> me = LookupUserById(static_cast<uint32_t>(getuid()));
  ASSERT_TRUE(me.ok()) << me.status();
  StatusOr<UserInfo> again = LookupUserByName(me->name);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->uid, me->uid);
}

TEST(LookupUserTest, MissingUserIsNotFoundWithAHint) {
  StatusOr<UserInfo> missing = LookupUserByName("loom-no-such-user");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no user named 'loom-no-such-user'"));
  EXPECT_THAT(missing.status().message(), HasSubstr("useradd"));

  StatusOr<UserInfo> missing_uid = LookupUserById(3999999999u);
  EXPECT_EQ(missing_uid.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing_uid.status().message(), HasSubstr("uid 3999999999"));

  EXPECT_EQ(LookupUserByName("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LookupUserByName("99999999999").status().code(), absl::StatusCode::kNotFound);
}

TEST(LookupGroupTest, RootGroup) {
  StatusOr<std::string> name = GroupName(0);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "root");
  StatusOr<uint32_t> gid = LookupGroupId("root");
  ASSERT_TRUE(gid.ok()) << gid.status();
  EXPECT_EQ(*gid, 0u);
  StatusOr<uint32_t> by_number = LookupGroupId("0");
  ASSERT_TRUE(by_number.ok()) << by_number.status();
  EXPECT_EQ(*by_number, 0u);
}

TEST(LookupGroupTest, MissingGroupIsNotFound) {
  EXPECT_EQ(LookupGroupId("loom-no-such-group").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(GroupName(3999999999u).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LookupGroupId("3999999999").status().code(), absl::StatusCode::kNotFound);
}

TEST(UserGroupIdsTest, PrimaryGroupFirstWithoutDuplicates) {
  StatusOr<UserInfo> root = LookupUserById(0);
  ASSERT_TRUE(root.ok()) << root.status();
  StatusOr<std::vector<uint32_t>> groups = UserGroupIds(*root);
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_FALSE(groups->empty());
  EXPECT_EQ(groups->front(), root->gid);
  std::vector<uint32_t> sorted = *groups;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

}  // namespace
}  // namespace loom::auth
