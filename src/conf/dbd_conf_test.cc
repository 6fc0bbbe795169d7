#include "conf/dbd_conf.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loom::conf {
namespace {

using ::testing::HasSubstr;

TEST(DbdConfTest, ReadsTheKeysASiteSets) {
  std::vector<Diagnostic> warnings;
  auto c = ParseDbdConf(
      "# accounting\n"
      "DbdHost=db1\nDbdPort=16819\nSlurmUser=slurm\n"
      "StorageType=accounting_storage/pgsql\nStorageHost=pg.example\nStoragePort=5433\n"
      "StorageUser=slurm\nStoragePass=secret\nStorageLoc=slurm_acct_db\n"
      "PurgeJobAfter=12month\nDebugLevel=debug\nArchiveJobs=yes\n",
      "slurmdbd.conf", &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dbd_host, "db1");
  EXPECT_EQ(c->dbd_port, 16819);
  EXPECT_EQ(c->storage_type, AcctStorageType::kPgsql);
  EXPECT_EQ(c->storage_host, "pg.example");
  EXPECT_EQ(c->storage_port, 5433);
  EXPECT_EQ(c->storage_loc, "slurm_acct_db");
  EXPECT_EQ(c->slurm_user, "slurm");
  EXPECT_EQ(c->purge_job_after_s, 360 * 86400);
  EXPECT_EQ(c->debug_level, core::LogLevel::kDebug);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].key, "ArchiveJobs");
}

TEST(DbdConfTest, ErrorsNameTheLineAndWhatToDo) {
  auto c = ParseDbdConf("DbdPort=0\nStorageType=accounting_storage/mysql\nFoo=1\nbare\n",
                        "slurmdbd.conf", nullptr);
  ASSERT_FALSE(c.ok());
  const std::string text(c.status().message());
  EXPECT_THAT(text, HasSubstr("slurmdbd.conf:1: error: invalid value '0' for DbdPort"));
  EXPECT_THAT(text, HasSubstr("slurmdbd.conf:2: error: StorageType=accounting_storage/mysql is "
                              "not supported by Loom: use accounting_storage/pgsql"));
  EXPECT_THAT(text, HasSubstr("slurmdbd.conf:3: error: unknown slurmdbd.conf key 'Foo'"));
  EXPECT_THAT(text, HasSubstr("slurmdbd.conf:4: error: 'bare' is not Key=Value"));
}

TEST(DbdConfTest, DefaultsAreTheEmbeddedStore) {
  auto c = ParseDbdConf("", "slurmdbd.conf", nullptr);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->storage_type, AcctStorageType::kSqlite);
  EXPECT_EQ(c->dbd_port, 6819);
  EXPECT_EQ(c->purge_job_after_s, 0);
}

}  // namespace
}  // namespace loom::conf
