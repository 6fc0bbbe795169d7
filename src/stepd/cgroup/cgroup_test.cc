#include "stepd/cgroup/cgroup.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "stepd/cgroup/files.h"

namespace loom::stepd {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// A directory laid out like a cgroup2 mount whose controllers are delegated down to the
// step: what the kernel would show, as plain files.
std::string FakeV2Root(const std::string& name, const std::string& controllers) {
  const std::string root = testing::TempDir() + "/" + name;
  fs::remove_all(root);
  for (const std::string& dir :
       {root, root + "/loom", root + "/loom/job_7", root + "/loom/job_7/step_0"}) {
    fs::create_directories(dir);
    std::ofstream(dir + "/cgroup.controllers") << controllers << "\n";
    std::ofstream(dir + "/cgroup.subtree_control");
  }
  const std::string step = root + "/loom/job_7/step_0";
  for (const char* f : {"cpuset.cpus", "cpuset.mems", "memory.max", "memory.swap.max",
                        "memory.oom.group", "cgroup.procs", "cgroup.freeze", "cgroup.kill"}) {
    std::ofstream(step + "/" + f);
  }
  std::ofstream(step + "/cpu.stat") << "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n";
  std::ofstream(step + "/memory.peak") << "734003200\n";
  std::ofstream(step + "/memory.events") << "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n";
  return root;
}

TEST(CgroupV2Test, WritesLimitsAndDelegatesControllers) {
  const std::string root = FakeV2Root("v2_limits", "cpuset cpu io memory pids");
  auto sys = MakeCgroupV2(root);
  StepLimits l;
  l.cpus = "2-3";
  l.mems = "0";
  l.memory_bytes = 1 << 30;
  l.memory_swap_bytes = (1 << 30) + (1 << 29);
  auto step = sys->Create(7, "0", l);
  ASSERT_TRUE(step.ok()) << step.status();
  const std::string dir = root + "/loom/job_7/step_0";
  EXPECT_EQ(Slurp(dir + "/cpuset.cpus"), "2-3");
  EXPECT_EQ(Slurp(dir + "/cpuset.mems"), "0");
  EXPECT_EQ(Slurp(dir + "/memory.max"), "1073741824");
  EXPECT_EQ(Slurp(dir + "/memory.swap.max"), "536870912");
  EXPECT_EQ(Slurp(dir + "/memory.oom.group"), "1");
  for (const std::string& d : {root, root + "/loom", root + "/loom/job_7"}) {
    EXPECT_EQ(Slurp(d + "/cgroup.subtree_control"), "+cpuset +memory +cpu") << d;
  }
  ASSERT_TRUE((*step)->Attach(4242).ok());
  EXPECT_EQ(Slurp(dir + "/cgroup.procs"), "4242");
  ASSERT_TRUE((*step)->Freeze(true).ok());
  EXPECT_EQ(Slurp(dir + "/cgroup.freeze"), "1");
  auto u = (*step)->Usage();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->cpu_usec, 1500);
  EXPECT_EQ(u->memory_peak_bytes, 734003200);
  EXPECT_EQ(u->oom_kills, 1);
}

TEST(CgroupV2Test, NodeScopeKeepsEmulatedNodesApartAndSurvivesRemoval) {
  const std::string root = testing::TempDir() + "/v2_scope";
  fs::remove_all(root);
  const std::string step = root + "/loom/n1/job_9/step_batch";
  for (const std::string& dir : {root, root + "/loom", root + "/loom/n1", root + "/loom/n1/job_9"}) {
    fs::create_directories(dir);
    std::ofstream(dir + "/cgroup.controllers") << "cpuset memory\n";
    std::ofstream(dir + "/cgroup.subtree_control");
  }
  fs::create_directories(step);
  for (const char* f : {"cpuset.cpus", "memory.max", "memory.oom.group", "cgroup.procs"}) {
    std::ofstream(step + "/" + f);
  }
  StepLimits l;
  l.cpus = "1";
  l.memory_bytes = 64 << 20;
  auto made = MakeCgroupV2(root, "loom/n1")->Create(9, "batch", l);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(Slurp(step + "/cpuset.cpus"), "1");
  EXPECT_EQ(Slurp(step + "/memory.max"), "67108864");
  for (const std::string& d : {root, root + "/loom", root + "/loom/n1", root + "/loom/n1/job_9"}) {
    EXPECT_EQ(Slurp(d + "/cgroup.subtree_control"), "+cpuset +memory") << d;
  }
  EXPECT_EQ((*made)->ProcsFiles(), std::vector<std::string>{step + "/cgroup.procs"});
  // A plain directory with files cannot be rmdir'ed: empty it as the kernel would.
  for (const auto& e : fs::directory_iterator(step)) fs::remove(e.path());
  for (const auto& e : fs::directory_iterator(root + "/loom/n1/job_9")) {
    if (!e.is_directory()) fs::remove(e.path());
  }
  ASSERT_TRUE((*made)->Remove().ok());
  EXPECT_FALSE(fs::exists(root + "/loom/n1/job_9"));
  EXPECT_TRUE(fs::exists(root + "/loom/n1"));  // other jobs of the node live there
}

TEST(CgroupV2Test, MissingControllerSaysWhatToDo) {
  const std::string root = FakeV2Root("v2_missing", "cpu io pids");
  StepLimits l;
  l.memory_bytes = 1 << 20;
  auto step = MakeCgroupV2(root)->Create(7, "0", l);
  ASSERT_FALSE(step.ok());
  EXPECT_THAT(std::string(step.status().message()),
              HasSubstr("the memory controller is not available in " + root));
  EXPECT_THAT(std::string(step.status().message()), HasSubstr("CgroupPlugin=cgroup/v1"));
}

TEST(CgroupLimitsTest, FollowCgroupConf) {
  conf::CgroupConfig c;
  c.constrain_cores = true;
  c.constrain_ram_space = true;
  c.allowed_ram_space_percent = 50;
  c.constrain_swap_space = true;
  c.allowed_swap_space_percent = 25;
  StepLimits l = LimitsFor(c, "0-3", 1000, {DeviceId{'c', 195, 1}});
  EXPECT_EQ(l.cpus, "0-3");
  EXPECT_EQ(l.memory_bytes, 500);
  EXPECT_EQ(l.memory_swap_bytes, 750);
  EXPECT_TRUE(l.denied_devices.empty());  // ConstrainDevices=no
  c.constrain_devices = true;
  EXPECT_EQ(LimitsFor(c, "", 0, {DeviceId{'c', 195, 1}}).denied_devices.size(), 1u);
  EXPECT_EQ(LimitsFor(c, "", 0, {}).memory_bytes, 0);  // no memory allocated: no limit
}

// ------------------------------------------------------------- real kernels, when allowed

// Stand-in GPU device files: character devices 195:N (NVIDIA's numbers) with no driver
// behind them. Opening an allowed one fails with ENXIO/ENODEV (no driver); a device the
// cgroup denies fails with EPERM before the driver is asked.
std::string MakeDevices(const std::string& name) {
  const std::string dir = testing::TempDir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int i = 0; i < 2; ++i) {
    const std::string p = dir + "/nvidia" + std::to_string(i);
    if (::mknod(p.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0) return "";
  }
  return dir;
}

int OpenErrno(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR);
  if (fd >= 0) {
    ::close(fd);
    return 0;
  }
  return errno;
}

// Forks a child that joins `step`, then runs `body` and exits with its result; returns the
// child's wait status.
template <typename Body>
int RunInStep(StepCgroup& step, Body body) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    char c;
    ::close(ready[1]);
    (void)!::read(ready[0], &c, 1);
    ::_exit(body());
  }
  ::close(ready[0]);
  Status attached = step.Attach(pid);
  EXPECT_TRUE(attached.ok()) << attached;
  (void)!::write(ready[1], "x", 1);
  ::close(ready[1]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(CgroupV2Real, DeviceFilterDeniesOnlyTheListedDevices) {
  const std::string mount = "/sys/fs/cgroup/unified";
  struct statfs sfs {};
  if (::geteuid() != 0 || ::statfs(mount.c_str(), &sfs) != 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
    GTEST_SKIP() << "needs root and a cgroup2 mount at " << mount;
  }
  const std::string devs = MakeDevices("v2_devices");
  if (devs.empty()) GTEST_SKIP() << "cannot mknod here";
  auto allowed = DeviceOf(devs + "/nvidia0");
  auto denied = DeviceOf(devs + "/nvidia1");
  ASSERT_TRUE(allowed.ok() && denied.ok());
  auto sys = MakeCgroupV2(mount);
  StepLimits l;
  l.denied_devices = {*denied};
  const uint64_t job = 900000 + static_cast<uint64_t>(::getpid());
  auto step = sys->Create(job, "0", l);
  if (!step.ok() && absl::IsFailedPrecondition(step.status())) {
    GTEST_SKIP() << "BPF device programs unavailable: " << step.status();
  }
  ASSERT_TRUE(step.ok()) << step.status();
  const int status = RunInStep(**step, [&] {
    const int a = OpenErrno(devs + "/nvidia0");
    const int d = OpenErrno(devs + "/nvidia1");
    return (a != EPERM && d == EPERM) ? 0 : 10 + (a == EPERM) + 2 * (d != EPERM);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(OpenErrno(devs + "/nvidia1") == EPERM, false);  // outside the step: untouched
  EXPECT_TRUE((*step)->Remove().ok());
}

bool V1Writable(const std::string& mount) {
  return ::geteuid() == 0 && ::access((mount + "/memory/cgroup.procs").c_str(), W_OK) == 0 &&
         ::access((mount + "/cpuset/cgroup.procs").c_str(), W_OK) == 0 &&
         ::access((mount + "/devices/cgroup.procs").c_str(), W_OK) == 0;
}

TEST(CgroupV1Real, ConfinesCpusDevicesAndMemory) {
  const std::string mount = "/sys/fs/cgroup";
  if (!V1Writable(mount)) GTEST_SKIP() << "needs root and writable v1 hierarchies at " << mount;
  const std::string devs = MakeDevices("v1_devices");
  if (devs.empty()) GTEST_SKIP() << "cannot mknod here";
  auto denied = DeviceOf(devs + "/nvidia1");
  ASSERT_TRUE(denied.ok());
  const std::string scope = "loom/cgtest" + std::to_string(::getpid());
  auto sys = MakeCgroupV1(mount, scope);
  StepLimits l;
  l.cpus = "0";
  l.memory_bytes = 64 << 20;
  l.memory_swap_bytes = 64 << 20;
  l.denied_devices = {*denied};
  const uint64_t job = 900000 + static_cast<uint64_t>(::getpid());
  auto step = sys->Create(job, "1", l);
  ASSERT_TRUE(step.ok()) << step.status();

  // CPUs and devices.
  int status = RunInStep(**step, [&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 20;
    if (CPU_COUNT(&set) != 1 || !CPU_ISSET(0, &set)) return 21;
    if (OpenErrno(devs + "/nvidia0") == EPERM) return 22;
    if (OpenErrno(devs + "/nvidia1") != EPERM) return 23;
    return 0;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;

  // Memory: touching 256 MiB under a 64 MiB limit ends in the OOM killer.
  status = RunInStep(**step, [] {
    const size_t n = 256u << 20;
    volatile char* p = static_cast<volatile char*>(std::malloc(n));
    for (size_t i = 0; p && i < n; i += 4096) p[i] = 1;
    return p ? p[n / 2] - 1 : 30;
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  auto u = (*step)->Usage();
  ASSERT_TRUE(u.ok());
  EXPECT_GE(u->oom_kills, 1);
  EXPECT_GE(u->memory_peak_bytes, 32 << 20);
  EXPECT_TRUE((*step)->Remove().ok()) << (*step)->Remove();
  EXPECT_FALSE(fs::exists(mount + "/memory/" + scope + "/job_" + std::to_string(job)));
  EXPECT_TRUE(fs::exists(mount + "/memory/" + scope));  // the node's scope stays for its other jobs
  for (const char* h : {"cpuset", "memory", "devices", "freezer", "cpuacct"}) {
    ::rmdir((mount + "/" + h + "/" + scope).c_str());
  }
}

}  // namespace
}  // namespace loom::stepd
