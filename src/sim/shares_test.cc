#include "sim/shares.h"

#include <gtest/gtest.h>

namespace loom::sim {
namespace {

TEST(Shares, ReadsTheTreeOfASacctmgrDump) {
  const char* dump = R"(# a comment
Cluster - 'loom':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'science':Description='all: of science':Organization='lab':Fairshare=60
Account - 'ops':Description='ops':Organization='lab':Fairshare=40:GrpTRES=cpu=64
Parent - 'science'
Account - 'physics':Fairshare=parent
User - 'alice':DefaultAccount='science':Fairshare=3
Parent - 'physics'
User - 'bob':DefaultAccount='physics':MaxJobs=4
)";
  std::vector<std::string> notes;
  auto t = ParseShareDump(dump, "shares.txt", &notes);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->accounts.size(), 3u);
  EXPECT_EQ(t->accounts[0].name, "science");
  EXPECT_EQ(t->accounts[0].parent, "root");
  EXPECT_EQ(t->accounts[0].shares, 60);
  EXPECT_EQ(t->accounts[1].shares, 40);
  EXPECT_EQ(t->accounts[2].name, "physics");
  EXPECT_EQ(t->accounts[2].parent, "science");
  EXPECT_EQ(t->accounts[2].shares, model::kFairshareParent);
  ASSERT_EQ(t->associations.size(), 3u);
  EXPECT_EQ(t->associations[0].account, "root");
  EXPECT_EQ(t->associations[1].account, "science");
  EXPECT_EQ(t->associations[1].user, "alice");
  EXPECT_EQ(t->associations[1].shares, 3);
  EXPECT_EQ(t->associations[2].account, "physics");
  EXPECT_EQ(t->associations[2].shares, 1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "the simulator reads Fairshare only; not simulated: GrpTRES (1 line), MaxJobs (1 "
            "line), QOS (1 line)");
}

TEST(Shares, BadDumpLinesNameTheirLineAndTheFix) {
  std::vector<std::string> notes;
  auto error = [&](const char* text) {
    auto t = ParseShareDump(text, "f", &notes);
    return t.ok() ? std::string("ok") : std::string(t.status().message());
  };
  EXPECT_EQ(error("Parent - 'root'\nParent - 'nope'\n"),
            "f:2: Parent 'nope' is not an account defined above: add its Account line first, "
            "under its own Parent");
  EXPECT_EQ(error("Account - 'a'\n"),
            "f:1: an Account line before any Parent line: add Parent - 'root'");
  EXPECT_EQ(error("Parent - 'root'\nAccount - 'a':Fairshare=-2\n"),
            "f:2: Fairshare='-2' is not a share: write a whole number of at least 0, or parent");
  EXPECT_EQ(error("Parent - 'root'\nAccount - 'a'\nAccount - 'a'\n"),
            "f:3: account 'a' is defined twice");
  EXPECT_EQ(error("Parent - 'root'\nUser - 'u':Description='x\n"),
            "f:2: a quote (') is not closed");
  EXPECT_EQ(error("Parent - 'root'\nGroup - 'g'\n"),
            "f:2: unknown line kind 'Group': write Cluster, Parent, Account or User");
  EXPECT_EQ(error("Parent - 'root'\nAccount - 'a':Fairshare\n"),
            "f:2: 'Fairshare' is not a setting: write Key=Value");
}

TEST(Shares, AListPutsAccountsUnderTheRoot) {
  auto t = ParseShareList("physics=40, chem=60");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->accounts.size(), 2u);
  EXPECT_EQ(t->accounts[1].name, "chem");
  EXPECT_EQ(t->accounts[1].parent, "root");
  EXPECT_EQ(t->accounts[1].shares, 60);
  EXPECT_FALSE(ParseShareList("physics").ok());
  EXPECT_FALSE(ParseShareList("a=1,a=2").ok());
  EXPECT_FALSE(ParseShareList("a=x").ok());
  EXPECT_FALSE(ParseShareList("").ok());
}

TEST(Shares, TheWorkloadsAccountsAndUsersAreAdded) {
  auto t = ParseShareList("physics=40");
  ASSERT_TRUE(t.ok());
  std::vector<SimJob> jobs(3);
  jobs[0].account = "physics";
  jobs[0].user = "u1";
  jobs[1].account = "g7";
  jobs[1].user = "u2";
  jobs[2].account = "physics";
  jobs[2].user = "u1";
  std::vector<std::string> notes;
  AddWorkloadAssociations(jobs, &*t, &notes);
  ASSERT_EQ(t->accounts.size(), 2u);
  EXPECT_EQ(t->accounts[1].name, "g7");
  EXPECT_EQ(t->accounts[1].shares, 1);
  EXPECT_EQ(t->associations.size(), 2u);
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "1 accounts of the workload are not in the shares: added under root with "
                       "Fairshare=1",
                       "2 users added under their accounts with Fairshare=1"}));
}

}  // namespace
}  // namespace loom::sim
