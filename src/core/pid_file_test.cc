#include "core/pid_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace loom::core {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class PidFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("pid_file_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(PidFileTest, HoldsThePidWhileUpAndGoesAtTheEnd) {
  const std::string path = (dir_ / "loomctld.pid").string();
  std::ofstream(path) << "999999\n";  // left by a daemon that died
  {
    auto pid = PidFile::Write(path);
    ASSERT_TRUE(pid.ok()) << pid.status();
    EXPECT_EQ(Slurp(path), std::to_string(::getpid()) + "\n");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            0);  // no temporary file left either
}

TEST_F(PidFileTest, AFileAnotherDaemonTookIsLeftToIt) {
  const std::string path = (dir_ / "loomd.pid").string();
  {
    auto pid = PidFile::Write(path);
    ASSERT_TRUE(pid.ok()) << pid.status();
    std::ofstream(path) << "4242\n";  // a second daemon started with the same file
  }
  EXPECT_EQ(Slurp(path), "4242\n");
}

TEST_F(PidFileTest, AnUnwritablePlaceSaysWhere) {
  auto pid = PidFile::Write((dir_ / "no/such/dir/loomd.pid").string());
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(std::string(pid.status().message()).find("no/such/dir/loomd.pid"), std::string::npos);
  EXPECT_NE(std::string(pid.status().message()).find("No such file or directory"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::core
