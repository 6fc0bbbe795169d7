// Who may call what: one table of every controller rpc against every kind of caller, and a
// test that sends each cell's request through the controller's frame port with a real MUNGE
// credential and compares the answer. The table must name every rpc of
// LOOM_CONTROLLER_METHODS, so a new rpc cannot be added without its row.
//
// Callers: the job's owner, another user, an operator (Loom has no AdminLevel yet: until
// accounting grants it, an operator is a plain user and the column says so), SlurmUser,
// root; and four bad credentials, each refused before the request is looked at: none, an
// expired one, one replayed, one made for another request.
//
// Needs root (test users, credentials made as each of them); skipped otherwise.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "auth/munge_auth.h"
#include "ctld/controller.h"
#include "ctld/service.h"
#include "loom/v1/loom.pb.h"
#include "rpc/convert.h"
#include "rpc/credential.h"
#include "rpc/frame.h"
#include "tests/support/munged_fixture.h"

namespace loom::ctld {
namespace {

using absl::StatusCode;

enum Who { kOwner, kOther, kOperator, kSlurmUser, kRoot, kNone, kExpired, kReplayed, kMisdirected };
constexpr int kCallers = 9;
const char* const kWhoNames[kCallers] = {"owner",    "other user", "operator",
                                         "SlurmUser", "root",      "no credential",
                                         "expired",  "replayed",   "for another request"};

constexpr StatusCode kOk = StatusCode::kOk;
constexpr StatusCode kDenied = StatusCode::kPermissionDenied;
constexpr StatusCode kUnauth = StatusCode::kUnauthenticated;

// One row: the answer each caller gets. The four bad credentials are refused for every rpc.
struct Row {
  std::array<StatusCode, 5> by;  // owner, other, operator, SlurmUser, root
};

// The matrix. A job-targeted request names a job of the owner's, pending and held.
const std::map<std::string, Row>& Matrix() {
  static const auto* m = new std::map<std::string, Row>{
      // Anyone may submit, and read what squeue, sinfo, scontrol show and sdiag read.
      {"Submit", {{kOk, kOk, kOk, kOk, kOk}}},
      {"QueryJobs", {{kOk, kOk, kOk, kOk, kOk}}},
      {"QueryNodes", {{kOk, kOk, kOk, kOk, kOk}}},
      {"Ping", {{kOk, kOk, kOk, kOk, kOk}}},
      {"QueryConfig", {{kOk, kOk, kOk, kOk, kOk}}},
      {"Diag", {{kOk, kOk, kOk, kOk, kOk}}},
      {"QuerySteps", {{kOk, kOk, kOk, kOk, kOk}}},
      // sshare and sprio (PrivateData narrows what they list, not whether they answer).
      {"Shares", {{kOk, kOk, kOk, kOk, kOk}}},
      {"Priorities", {{kOk, kOk, kOk, kOk, kOk}}},
      {"AssocMgr", {{kOk, kOk, kOk, kOk, kOk}}},
      // A job: its owner, SlurmUser and root.
      {"SignalJob", {{kOk, kDenied, kDenied, kOk, kOk}}},
      {"UpdateJob", {{kOk, kDenied, kDenied, kOk, kOk}}},  // TimeLimit lowered: allowed
      // Steps of a pending job: the owner is told it is pending, others may not ask.
      {"CreateStep",
       {{StatusCode::kFailedPrecondition, kDenied, kDenied, StatusCode::kFailedPrecondition,
         StatusCode::kFailedPrecondition}}},
      // A batch job is no allocation salloc could release.
      {"ReleaseAllocation",
       {{StatusCode::kInvalidArgument, kDenied, kDenied, StatusCode::kInvalidArgument,
         StatusCode::kInvalidArgument}}},
      {"StepUsage",
       {{StatusCode::kFailedPrecondition, kDenied, kDenied, StatusCode::kFailedPrecondition,
         StatusCode::kFailedPrecondition}}},
      // The cluster: SlurmUser and root only.
      {"UpdateNode", {{kDenied, kDenied, kDenied, kOk, kOk}}},
      {"Reconfigure", {{kDenied, kDenied, kDenied, kOk, kOk}}},
      {"SetDebug", {{kDenied, kDenied, kDenied, kOk, kOk}}},  // an empty request: no change
      // What only node daemons say.
      {"RegisterNode", {{kDenied, kDenied, kDenied, kOk, kOk}}},
      {"Heartbeat", {{kDenied, kDenied, kDenied, kOk, kOk}}},
      {"JobComplete", {{kDenied, kDenied, kDenied, kOk, kOk}}},
      {"EpilogComplete", {{kDenied, kDenied, kDenied, kOk, kOk}}},
      // Advance reservations: root and SlurmUser make them, anyone lists them.
      {"Reservation", {{kDenied, kDenied, kDenied, kOk, kOk}}},
      {"QueryReservations", {{kOk, kOk, kOk, kOk, kOk}}},
  };
  return *m;
}

TEST(AuthzMatrixTest, EveryRpcHasARow) {
  std::set<std::string> rpcs;
#define LOOM_NAME(Name) rpcs.insert(#Name);
  LOOM_CONTROLLER_METHODS(LOOM_NAME)
#undef LOOM_NAME
  std::set<std::string> rows;
  for (const auto& [name, row] : Matrix()) rows.insert(name);
  EXPECT_EQ(rpcs, rows) << "add the new rpc's row to the matrix";
}

struct User {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

class AuthzMatrix : public testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: test users and their credentials";
    auto munged = test_support::MungedFixture::Start();
    ASSERT_TRUE(munged.ok()) << munged.status();
    munged_ = std::move(*munged);
    const char* names[4] = {"loomauthz1", "loomauthz2", "loomauthz3", "loomauthz4"};
    for (int i = 0; i < 4; ++i) {
      auto uid = test_support::EnsureTestUser(names[i]);
      ASSERT_TRUE(uid.ok()) << uid.status();
      users_[i] = User{*uid, *uid};
    }
    users_[kRoot] = User{0, 0};
    // Users other than root must reach the socket: its directory is 0755.
    dir_ = std::filesystem::path(munged_->dir()) / "ctld";
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "slurm.conf")
        << "ClusterName=authz\nSlurmctldHost=localhost(127.0.0.1)\nSlurmUser=loomauthz4\n"
        << "AuthType=auth/munge\nAuthInfo=socket=" << munged_->socket_path()
        << "\nStateSaveLocation=" << (dir_ / "state").string()
        << "\nNodeName=n1 CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=1\n"
           "PartitionName=batch Nodes=n1 Default=YES\n";
    ControllerOptions o;
    o.slurm_conf = (dir_ / "slurm.conf").string();
    o.listen_address = "127.0.0.1:0";
    auto c = Controller::Start(o);
    ASSERT_TRUE(c.ok()) << c.status();
    controller_ = std::move(*c);
  }

  // A fresh credential for `method` over `body`, made by munged for `user` (in a child that
  // becomes the user), living `ttl` seconds (0: munged's default).
  std::string CredentialAs(const User& user, std::string_view method, std::string_view body,
                           int ttl = 0) {
    int p[2];
    EXPECT_EQ(::pipe(p), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      if (::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(2);
      auth::MungeOptions mo;
      mo.socket_path = munged_->socket_path();
      mo.ttl_seconds = ttl;
      auth::MungeCredentials m(mo);
      auto cred = rpc::MakeCredential(m, method, body);
      if (!cred.ok()) ::_exit(3);
      const ssize_t n = ::write(p[1], cred->data(), cred->size());
      ::_exit(n == static_cast<ssize_t>(cred->size()) ? 0 : 4);
    }
    ::close(p[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    ::close(p[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "encoding as uid " << user.uid;
    return out;
  }

  // The answer's status to one frame.
  StatusCode Call(std::string_view method, const std::string& body, const std::string& cred) {
    v1::Frame f;
    f.set_method(std::string(method));
    f.set_credential(cred);
    f.set_body(body);
    auto conn = rpc::FrameConnection::Connect("127.0.0.1", controller_->port(), 5000);
    EXPECT_TRUE(conn.ok()) << conn.status();
    if (!conn.ok()) return StatusCode::kUnavailable;
    auto reply = conn->Call(f.SerializeAsString(), 10000);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return StatusCode::kUnavailable;
    // Every reply's field 1 is its Error; the rest is the rpc's own.
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(reply->data()),
                                             static_cast<int>(reply->size()));
    v1::Error error;
    while (const uint32_t tag = in.ReadTag()) {
      using google::protobuf::internal::WireFormatLite;
      if (WireFormatLite::GetTagFieldNumber(tag) == 1) {
        std::string bytes;
        uint32_t length = 0;
        EXPECT_TRUE(in.ReadVarint32(&length) && in.ReadString(&bytes, static_cast<int>(length)));
        EXPECT_TRUE(error.ParseFromString(bytes));
        break;
      }
      if (!WireFormatLite::SkipField(&in, tag)) break;
    }
    return rpc::FromWire(error).code();
  }

  // A held job of the owner's, for one cell.
  JobId OwnersJob() {
    JobId id = 0;
    Status s = controller_->Post([&](ControllerCore& core, Effects& fx, Time now) -> Status {
      model::JobRequest r;
      r.name = "authz";
      r.shape.ntasks = 1;
      r.time_limit_s = 600;  // UpdateJob lowers it, which its owner may do
      r.hold = true;
      ASSIGN_OR_RETURN(id, core.Submit(r, Caller{users_[kOwner].uid, users_[kOwner].gid, "loomauthz1"},
                                       now, &fx));
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
    return id;
  }

  // The request body of `method` for one cell.
  std::string Body(const std::string& method) {
    const JobId job = OwnersJob();
    auto bytes = [](const google::protobuf::Message& m) { return m.SerializeAsString(); };
    if (method == "Submit") {
      model::JobRequest r;
      r.name = "authz-submit";
      r.shape.ntasks = 1;
      r.time_limit_s = 60;
      r.hold = true;
      r.script = "#!/bin/sh\ntrue\n";
      r.work_dir = "/tmp";
      v1::SubmitRequest req;
      *req.mutable_spec() = rpc::ToWire(r);
      return bytes(req);
    }
    if (method == "SignalJob") {
      v1::SignalJobRequest req;
      req.add_job_ids(std::to_string(job));
      req.set_signal(9);
      return bytes(req);
    }
    if (method == "UpdateJob") {
      v1::UpdateJobRequest req;
      req.set_job_id(job);
      (*req.mutable_fields())["TimeLimit"] = "5";
      return bytes(req);
    }
    if (method == "UpdateNode") {
      v1::UpdateNodeRequest req;
      req.add_names("n1");
      req.set_state("DRAIN");
      req.set_reason("authz");
      return bytes(req);
    }
    if (method == "CreateStep") {
      v1::CreateStepRequest req;
      req.mutable_step()->set_job_id(job);
      req.mutable_step()->add_argv("true");
      return bytes(req);
    }
    if (method == "ReleaseAllocation") {
      v1::ReleaseAllocationRequest req;
      req.set_job_id(job);
      return bytes(req);
    }
    if (method == "StepUsage") {
      v1::StepUsageRequest req;
      req.set_job_id(job);
      return bytes(req);
    }
    if (method == "RegisterNode" || method == "Heartbeat") {
      v1::HeartbeatRequest req;  // RegisterNodeRequest's field 1 is the name as well
      req.set_name("n1");
      return bytes(req);
    }
    if (method == "JobComplete") {
      v1::JobCompleteRequest req;
      req.set_node("n1");
      req.set_job_id(job);
      return bytes(req);
    }
    if (method == "Reservation") {
      // A new one each time (a made-up name; OVERLAP lets them share the node).
      v1::ReservationRequest req;
      (*req.mutable_fields())["StartTime"] = std::to_string(std::time(nullptr) + 86400);
      (*req.mutable_fields())["Duration"] = "60";
      (*req.mutable_fields())["Nodes"] = "n1";
      (*req.mutable_fields())["Users"] = "root";
      (*req.mutable_fields())["Flags"] = "OVERLAP";
      return bytes(req);
    }
    return "";  // the queries, Ping, Reconfigure, SetDebug, Diag: an empty request
  }

  std::unique_ptr<test_support::MungedFixture> munged_;
  std::filesystem::path dir_;
  User users_[5];
  std::unique_ptr<Controller> controller_;
};

TEST_F(AuthzMatrix, EveryCallerGetsTheAnswerItsCellSays) {
  // Expired credentials first: made with a one-second lifetime, presented after it.
  std::map<std::string, std::pair<std::string, std::string>> expired;  // body, credential
  for (const auto& [method, row] : Matrix()) {
    std::string body = Body(method);
    expired[method] = {body, CredentialAs(users_[kRoot], method, body, 1)};
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));

  for (const auto& [method, row] : Matrix()) {
    for (int who = 0; who < kCallers; ++who) {
      const StatusCode want = who < 5 ? row.by[who] : kUnauth;
      std::string body = Body(method);
      std::string cred;
      switch (who) {
        case kNone:
          break;
        case kExpired:
          body = expired[method].first;
          cred = expired[method].second;
          break;
        case kReplayed:
          // Byte for byte what was sent once already.
          cred = CredentialAs(users_[kRoot], method, body);
          (void)Call(method, body, cred);
          break;
        case kMisdirected:
          cred = CredentialAs(users_[kRoot], method, body + "x");
          break;
        default:
          cred = CredentialAs(users_[who], method, body);
      }
      const StatusCode got = Call(method, body, cred);
      EXPECT_EQ(got, want) << method << " by " << kWhoNames[who] << ": "
                           << absl::StatusCodeToString(got) << ", the matrix says "
                           << absl::StatusCodeToString(want);
    }
  }
}

}  // namespace
}  // namespace loom::ctld
