#include "cli/sacctmgr_archive.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "auth/identity.h"
#include "core/strings.h"
#include "sim/accounting_records.h"

namespace loom::cli {
namespace {

using core::StrCat;

// Records travel to loomdbd in batches of this many, each stored in one transaction.
constexpr int kBatch = 2000;
// The id of a user or group the file names and this system does not know (Slurm's NO_VAL):
// never root's, so that root's jobs stay root's.
constexpr uint32_t kUnknownId = 0xfffffffe;

int Fail(std::string_view msg) {
  std::fprintf(stderr, " %.*s\n", static_cast<int>(msg.size()), msg.data());
  return 1;
}

// The numeric id of a user or group the file names only by name: the system's, else
// kUnknownId (records of people who are not users here keep their names).
template <typename Lookup>
uint32_t IdOf(std::map<std::string, uint32_t>* cache, const std::string& name, Lookup lookup) {
  auto it = cache->find(name);
  if (it != cache->end()) return it->second;
  auto id = lookup(name);
  const uint32_t v = id.ok() ? *id : kUnknownId;
  cache->emplace(name, v);
  return v;
}

v1::AcctJob ToAcctJob(const sim::AccountingRecord& r, uint32_t uid, uint32_t gid) {
  v1::AcctJob a;
  v1::JobInfo& j = *a.mutable_job();
  j.set_job_id(r.job_id);
  j.set_array_job_id(r.array_job_id);
  j.set_array_task_id(static_cast<int32_t>(r.array_task_id));
  j.set_name(r.name);
  j.set_uid(uid);
  j.set_gid(gid);
  j.set_user(r.user.empty() ? StrCat(uid) : r.user);
  j.set_group_name(r.group);
  j.set_state(r.state);
  j.set_submit_time(r.submit);
  j.set_eligible_time(r.eligible);
  j.set_start_time(r.start);
  j.set_end_time(r.end);
  j.set_time_limit_s(r.time_limit_s);
  j.set_partition(r.partition);
  j.set_node_list(r.node_list);
  j.set_num_nodes(r.nodes);
  j.set_num_cpus(r.cpus);
  j.set_exit_code(r.exit_code);
  j.set_exit_signal(r.exit_signal);
  j.set_tres_req(r.req_tres);
  j.set_tres_alloc(r.alloc_tres);
  j.set_cluster_name(r.cluster);
  j.mutable_spec()->set_account(r.account);
  j.mutable_spec()->set_work_dir(r.work_dir);
  a.set_cluster(r.cluster);
  a.set_qos(r.qos);
  if (r.cancelled_by) a.set_cancelled_by(*r.cancelled_by);
  a.set_derived_exit_code(r.derived_exit_code << 8);
  return a;
}

}  // namespace

std::pair<std::string, std::string> OptionWord(const std::string& word) {
  const size_t eq = word.find('=');
  if (eq == std::string::npos) return {"", word};
  return {word.substr(0, eq), word.substr(eq + 1)};
}

Status FileAndCluster(const std::vector<std::string>& words, std::string_view command,
                      std::string* path, std::string* cluster) {
  for (const std::string& w : words) {
    const auto [key, value] = OptionWord(w);
    if (key.empty() || core::EqualsIgnoreCase(key, "file")) {
      *path = value;
    } else if (core::EqualsIgnoreCase(key, "cluster") || core::EqualsIgnoreCase(key, "clusters")) {
      *cluster = value;
    } else {
      return absl::InvalidArgumentError(
          StrCat("Unknown option: ", w, " (", command, " takes File=PATH [Cluster=NAME])"));
    }
  }
  if (path->empty()) {
    return absl::InvalidArgumentError(StrCat(command, " needs File=PATH"));
  }
  return absl::OkStatus();
}

bool AskToCommit() {
  std::printf("Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ");
  std::fflush(stdout);
  std::string answer;
  std::getline(std::cin, answer);
  if (!answer.empty() && (answer[0] == 'y' || answer[0] == 'Y')) return true;
  std::printf(" Changes Discarded\n");
  return false;
}

int RunArchiveLoad(Client& client, const std::vector<std::string>& words, bool quiet) {
  std::string path, cluster = client.config().cluster_name;
  if (Status s = FileAndCluster(words, "archive load", &path, &cluster); !s.ok()) {
    return Fail(StrCat(std::string(s.message()),
                       ": job records as `loom sim --accounting-out` or `sacct -a -P -o ...` "
                       "writes them"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(StrCat("cannot read '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = std::move(buffer).str();
  // First the whole file is checked, so that a bad line loads nothing; then it is read
  // again and sent, a batch per cluster at a time, each stored in one transaction.
  auto checked = sim::ReadAccountingFile(text, path, cluster, [&](sim::AccountingRecord&& r) {
    if (r.cluster.empty()) {
      return absl::InvalidArgumentError(
          StrCat(path, ": the records name no cluster and none is configured; give Cluster=NAME"));
    }
    return absl::OkStatus();
  });
  if (!checked.ok()) return Fail(std::string(checked.status().message()));
  std::map<std::string, uint32_t> uids, gids;
  std::map<std::string, v1::AcctRecordRequest> pending;
  std::map<std::string, int64_t> sent;
  auto send = [&](v1::AcctRecordRequest& req) -> Status {
    if (req.jobs_size() == 0) return absl::OkStatus();
    v1::AcctRecordReply reply;
    if (Status s = client.CallDbd("AcctRecord", req, &reply); !s.ok()) {
      return Status(s.code(),
                    StrCat(std::string(s.message()), " (", sent[req.cluster()], " of cluster ",
                           req.cluster(), "'s records were loaded before this)"));
    }
    sent[req.cluster()] += req.jobs_size();
    req.clear_jobs();
    return absl::OkStatus();
  };
  auto loaded = sim::ReadAccountingFile(text, path, cluster, [&](sim::AccountingRecord&& r) {
    v1::AcctRecordRequest& req = pending[r.cluster];
    if (req.cluster().empty()) {
      req.set_cluster(r.cluster);
      req.set_archive(true);
      auto tres = checked->cluster_tres.find(r.cluster);
      if (tres != checked->cluster_tres.end()) req.set_cluster_tres(tres->second);
    }
    const uint32_t uid =
        r.uid ? *r.uid : IdOf(&uids, r.user, [](const std::string& n) -> StatusOr<uint32_t> {
          ASSIGN_OR_RETURN(auth::UserInfo u, auth::LookupUserByName(n));
          return u.uid;
        });
    const uint32_t gid = r.gid             ? *r.gid
                         : r.group.empty() ? kUnknownId
                                           : IdOf(&gids, r.group, auth::LookupGroupId);
    *req.add_jobs() = ToAcctJob(r, uid, gid);
    return req.jobs_size() >= kBatch ? send(req) : absl::OkStatus();
  });
  Status done = loaded.status();
  for (auto& [name, req] : pending) {
    if (done.ok()) done = send(req);
  }
  if (!done.ok()) return Fail(std::string(done.message()));
  if (!quiet) {
    for (const auto& [name, n] : sent) {
      std::printf(" Loaded %lld jobs of cluster %s\n", static_cast<long long>(n), name.c_str());
    }
    if (checked->skipped_steps > 0 || checked->skipped_pending_arrays > 0) {
      std::printf(" Read past %lld step lines and %lld lines of pending array tasks\n",
                  static_cast<long long>(checked->skipped_steps),
                  static_cast<long long>(checked->skipped_pending_arrays));
    }
  }
  return 0;
}

}  // namespace loom::cli
