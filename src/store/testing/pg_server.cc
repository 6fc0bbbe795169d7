// Creates, starts and stops a private PostgreSQL server; see pg_server.h.
#include "store/testing/pg_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "core/strings.h"

extern char** environ;

namespace loom::store::testing {
namespace {

namespace fs = std::filesystem;
using core::StrCat;

// sockaddr_un's sun_path holds 108 bytes including the terminating NUL; PostgreSQL's socket
// is "<dir>/.s.PGSQL.<port>".
constexpr size_t kMaxSocketDir = 107 - sizeof("/.s.PGSQL.65535");
constexpr const char* kPackageHint =
    "install PostgreSQL's server programs (Debian: apt-get install postgresql-15, which "
    "scripts/install-deps does)";

std::string Errno() { return std::strerror(errno); }

bool IsExecutable(const fs::path& p) { return access(p.c_str(), X_OK) == 0; }

// The directory holding both initdb and postgres: the newest of Debian's versioned
// directories, else one on $PATH.
std::optional<std::string> FindBinDir() {
  auto has_both = [](const fs::path& dir) {
    return IsExecutable(dir / "initdb") && IsExecutable(dir / "postgres");
  };
  std::vector<std::pair<int64_t, fs::path>> versions;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::optional<int64_t> v = core::ParseInt(e.path().filename().string());
    if (v && has_both(e.path() / "bin")) versions.emplace_back(*v, e.path() / "bin");
  }
  if (!versions.empty()) return std::max_element(versions.begin(), versions.end())->second;
  if (const char* path = getenv("PATH")) {
    for (std::string_view dir : core::Split(path, ':')) {
      if (!dir.empty() && has_both(fs::path(dir))) return std::string(dir);
    }
  }
  return std::nullopt;
}

struct Account {
  uid_t uid;
  gid_t gid;
};

std::optional<Account> LookUpUser(const char* name) {
  passwd pw{};
  std::vector<char> buffer(4096);
  passwd* found = nullptr;
  if (getpwnam_r(name, &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  return Account{pw.pw_uid, pw.pw_gid};
}

// Starts `argv` as `who`, in `cwd`, with stdin from /dev/null and stdout and stderr appended
// to `output`. The child gets SIGINT (a fast shutdown, for postgres) if the calling thread
// exits, so a crashed test leaves no server behind.
StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const Account& who,
                      const std::string& cwd, const std::string& output) {
  const int out = open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return absl::InternalError(StrCat("cannot open ", output, ": ", Errno()));
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    close(out);
    return absl::InternalError(StrCat("cannot open /dev/null: ", Errno()));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const bool switch_user = who.uid != geteuid();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec. The groups, then the group, then the user:
    // once the user changes there is no right left to change the others.
    if (switch_user && (setgroups(0, nullptr) != 0 || setresgid(who.gid, who.gid, who.gid) != 0 ||
                        setresuid(who.uid, who.uid, who.uid) != 0)) {
      _exit(126);
    }
    // Set after the user changes, which clears it.
    prctl(PR_SET_PDEATHSIG, SIGINT);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (chdir(cwd.c_str()) != 0) _exit(125);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    close_range(3, ~0U, 0);
    execve(args[0], args.data(), environ);
    _exit(127);
  }
  const int fork_errno = errno;
  close(in);
  close(out);
  if (pid < 0) return absl::InternalError(StrCat("fork failed: ", std::strerror(fork_errno)));
  return pid;
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) {
    switch (WEXITSTATUS(status)) {
      case 125:
        return "could not enter its working directory";
      case 126:
        return "could not switch to its user";
      case 127:
        return "could not be started";
      default:
        return StrCat("exited with status ", WEXITSTATUS(status));
    }
  }
  if (WIFSIGNALED(status)) return StrCat("was killed by signal ", WTERMSIG(status));
  return "stopped";
}

std::string ReadTail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += all[i];
    out += '\n';
  }
  return out;
}

Status RunToCompletion(const std::vector<std::string>& argv, const Account& who,
                       const std::string& cwd, const std::string& output) {
  ASSIGN_OR_RETURN(const pid_t pid, Spawn(argv, who, cwd, output));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(StrCat("waitpid: ", Errno()));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(
      StrCat(argv[0], " ", DescribeExit(status), "; its output ends:\n", ReadTail(output, 20)));
}

// Who runs the server: this process's user, except root, which PostgreSQL refuses.
StatusOr<Account> ServerAccount(const std::string& log) {
  if (geteuid() != 0) return Account{geteuid(), getegid()};
  if (std::optional<Account> nobody = LookUpUser("nobody")) return *nobody;
  constexpr const char* kTestUser = "loom-pgtest";
  if (std::optional<Account> test_user = LookUpUser(kTestUser)) return *test_user;
  Status added = RunToCompletion({"/usr/sbin/useradd", "--system", "--no-create-home", "--shell",
                                  "/usr/sbin/nologin", kTestUser},
                                 Account{0, 0}, "/", log);
  // Another test may have created it meanwhile; the lookup decides.
  if (std::optional<Account> test_user = LookUpUser(kTestUser)) return *test_user;
  return absl::FailedPreconditionError(
      StrCat("PostgreSQL does not run as root, there is no user 'nobody', and creating user '",
             kTestUser, "' failed: ", added.ToString()));
}

// A temporary directory the server's user may reach: its parents must let that user through,
// and the socket's path must fit in sockaddr_un.
StatusOr<std::string> MakeDir(const Account& who) {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  bool usable = !ec && base.string().size() + sizeof("/loom-pg-XXXXXX") <= kMaxSocketDir;
  if (usable && who.uid != geteuid()) {
    for (fs::path p = base; usable; p = p.parent_path()) {
      struct stat st;
      usable = stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) != 0;
      if (p == p.parent_path()) break;
    }
  }
  if (!usable) base = "/tmp";
  std::string templ = (base / "loom-pg-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(StrCat("cannot create a directory from ", templ, ": ", Errno()));
  }
  if (chown(templ.c_str(), who.uid, who.gid) != 0) {
    return absl::InternalError(StrCat("cannot give ", templ, " to uid ", who.uid, ": ", Errno()));
  }
  return templ;
}

StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(StrCat("socket: ", Errno()));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel picks a free one
  socklen_t len = sizeof addr;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const std::string error = ok ? "" : Errno();
  close(fd);
  if (!ok) return absl::InternalError(StrCat("cannot find a free port on 127.0.0.1: ", error));
  return static_cast<int>(ntohs(addr.sin_port));
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

StatusOr<std::unique_ptr<PgServer>> PgServer::Create(PgServerOptions options) {
  std::unique_ptr<PgServer> s(new PgServer());
  if (!options.bin_dir.empty()) {
    s->bin_dir_ = options.bin_dir;
  } else if (std::optional<std::string> found = FindBinDir()) {
    s->bin_dir_ = *found;
  } else {
    return absl::NotFoundError(StrCat(
        "PostgreSQL's initdb and postgres are in neither /usr/lib/postgresql/*/bin nor $PATH; ",
        kPackageHint));
  }
  if (!IsExecutable(fs::path(s->bin_dir_) / "initdb") ||
      !IsExecutable(fs::path(s->bin_dir_) / "postgres")) {
    return absl::NotFoundError(
        StrCat("no initdb and postgres in ", s->bin_dir_, "; ", kPackageHint));
  }
  s->start_timeout_s_ = options.start_timeout_s;

  const std::string early_log = StrCat("/tmp/loom-pg-useradd-", getpid(), ".log");
  StatusOr<Account> who = ServerAccount(early_log);
  std::error_code ec;
  fs::remove(early_log, ec);
  if (!who.ok()) return who.status();
  s->uid_ = who->uid;
  s->gid_ = who->gid;
  ASSIGN_OR_RETURN(s->dir_, MakeDir(*who));
  s->data_dir_ = StrCat(s->dir_, "/data");
  s->log_file_ = StrCat(s->dir_, "/postgres.log");
  ASSIGN_OR_RETURN(s->port_, FreePort());

  // Trust is safe here: the server listens on loopback and on a socket in a directory only
  // its user (and root) may enter. --no-sync: a test's cluster need not survive a power cut.
  RETURN_IF_ERROR(
      RunToCompletion({StrCat(s->bin_dir_, "/initdb"), "-D", s->data_dir_, "-U", s->user_, "-A",
                       "trust", "-E", "UTF8", "--no-locale", "--no-sync"},
                      *who, s->dir_, StrCat(s->dir_, "/initdb.log")));
  RETURN_IF_ERROR(s->Start());
  return s;
}

Status PgServer::Start() {
  if (pid_ > 0) return absl::OkStatus();
  // fsync off and a small shared memory: tests want a quick server that fits a container's
  // /dev/shm, not a durable one.
  const std::vector<std::string> argv = {
      StrCat(bin_dir_, "/postgres"),
      "-D",
      data_dir_,
      "-c",
      StrCat("listen_addresses=", host_),
      "-c",
      StrCat("port=", port_),
      "-c",
      StrCat("unix_socket_directories=", dir_),
      "-c",
      "fsync=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "shared_buffers=16MB",
      "-c",
      "max_connections=20",
  };
  ASSIGN_OR_RETURN(pid_, Spawn(argv, Account{uid_, gid_}, dir_, log_file_));

  const std::string conninfo = StrCat("host=", host_, " port=", port_, " user=", user_,
                                      " dbname=postgres connect_timeout=2");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(start_timeout_s_);
  while (PQping(conninfo.c_str()) != PQPING_OK) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = 0;
      return absl::InternalError(StrCat("postgres ", DescribeExit(status), " before accepting ",
                                        "connections on ", host_, ":", port_, "; its log ends:\n",
                                        LogTail()));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      const std::string log = LogTail();
      (void)Stop();
      return absl::DeadlineExceededError(StrCat("postgres did not accept connections on ", host_,
                                                ":", port_, " within ", start_timeout_s_,
                                                " s; its log ends:\n", log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::OkStatus();
}

Status PgServer::Stop() {
  if (pid_ <= 0) return absl::OkStatus();
  // The PID is our unreaped child, so it cannot have been reused by another process.
  const pid_t pid = pid_;
  pid_ = 0;
  auto wait_for = [pid](std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid || (r < 0 && errno == ECHILD)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  kill(pid, SIGINT);  // fast shutdown: ends the sessions, then checkpoints
  if (wait_for(std::chrono::seconds(30))) return absl::OkStatus();
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return absl::DeadlineExceededError(
      StrCat("postgres (pid ", pid,
             ") did not shut down within 30 s and was killed; its log "
             "ends:\n",
             LogTail()));
}

Status PgServer::Restart() {
  RETURN_IF_ERROR(Stop());
  return Start();
}

PgServer::~PgServer() {
  (void)Stop();
  const char* keep = getenv("LOOM_KEEP_TEST_DIRS");
  if (!dir_.empty() && !(keep != nullptr && *keep != '\0' && std::string_view(keep) != "0")) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

Status PgServer::CreateDatabase(std::string_view name) {
  return Execute("postgres", StrCat("CREATE DATABASE ", QuoteIdentifier(name)));
}

Status PgServer::Execute(std::string_view database, std::string_view sql) {
  const std::string port = StrCat(port_);
  const std::string db(database);
  const char* keys[] = {"host", "port", "user", "dbname", nullptr};
  const char* values[] = {host_.c_str(), port.c_str(), user_.c_str(), db.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 0);
  if (PQstatus(conn) != CONNECTION_OK) {
    Status s = absl::UnavailableError(StrCat("cannot connect to the test server at ", host_, ":",
                                             port_, "/", db, ": ", PQerrorMessage(conn)));
    PQfinish(conn);
    return s;
  }
  const std::string text(sql);
  PGresult* res = PQexec(conn, text.c_str());
  const ExecStatusType st = PQresultStatus(res);
  Status s = absl::OkStatus();
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    s = absl::InternalError(StrCat("running `", text, "` in ", db,
                                   " on the test server failed: ", PQresultErrorMessage(res)));
  }
  PQclear(res);
  PQfinish(conn);
  return s;
}

std::string PgServer::LogTail() const { return ReadTail(log_file_, 20); }

}  // namespace loom::store::testing
