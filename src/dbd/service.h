// loomdbd's API: what the controller sends (job records) and what sacct and sacctmgr ask,
// over Loom frames with a MUNGE credential on every request, as the controller's own port.
// One method per Dbd rpc (proto/loom/v1/loom.proto).
//
// Who may do what: the controller's records come only from root or SlurmUser; anyone may
// read jobs and the association tree, except what PrivateData hides from users who are not
// administrators (root, SlurmUser, AdminLevel=Operator or Administrator); only root,
// SlurmUser and AdminLevel=Administrator users change accounts, users and QOS.
//
// Thread-safety: Answer may be called from several threads; store calls are serialized.
#pragma once

#include <any>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "auth/munge_auth.h"
#include "conf/dbd_conf.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"
#include "rpc/frame_server.h"
#include "store/acct_store.h"

namespace loom::dbd {

struct DbdCaller {
  uint32_t uid = 0;
  std::string user;
};

class DbdService {
 public:
  DbdService(conf::DbdConfig config, std::unique_ptr<store::AcctStore> store,
             auth::MungeCredentials* munge, const core::Clock* clock);

  // What a new store holds before anyone adds to it: the QOS "normal" and the user root,
  // an Administrator whose default account is root.
  Status Bootstrap();

  // One serialized v1::Frame in, the serialized reply out. `admitted` is what Admit
  // returned for it, when it was large enough to need admission.
  rpc::FrameAnswer Answer(std::string_view frame, const std::any& admitted = {});
  // Whether a large frame sent before its connection authenticated (the controller's batch
  // of records) may be read: its first bytes must hold its method and a valid credential.
  StatusOr<std::any> Admit(std::string_view prefix);

  Status AcctRecord(const DbdCaller& who, const v1::AcctRecordRequest& req,
                    v1::AcctRecordReply* reply);
  Status AcctQueryJobs(const DbdCaller& who, const v1::AcctQueryJobsRequest& req,
                       v1::AcctQueryJobsReply* reply);
  Status AcctShow(const DbdCaller& who, const v1::AcctShowRequest& req, v1::AcctShowReply* reply);
  Status AcctChange(const DbdCaller& who, const v1::AcctChangeRequest& req,
                    v1::AcctChangeReply* reply);
  // sreport: the rolled-up usage of a window (rolling up first what is due), or job sizes.
  Status AcctReport(const DbdCaller& who, const v1::AcctReportRequest& req,
                    v1::AcctReportReply* reply);

  // Rolls every cluster's usage up to the last whole hour (loomdbd calls it every minute,
  // as slurmdbd rolls up hourly, so that a report finds the hours done); OK when nothing
  // was due.
  Status RollUpAll();
  // PurgeJobAfter: deletes the records of jobs that ended longer ago (their usage stays in
  // the rollups, done first); returns how many. 0 when the setting is off.
  StatusOr<int64_t> PurgeJobs();

 private:
  bool IsDaemon(const DbdCaller& who) const;
  // root, SlurmUser, or a user of at least `level` ("Operator", "Administrator").
  bool IsAdmin(const DbdCaller& who, std::string_view level) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status RegisterCluster(const v1::AcctRecordRequest& req) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Rolls `cluster`'s usage up to the last whole hour before now, from where it was left or
  // from the earliest hour late records changed; returns how far it is rolled up.
  StatusOr<int64_t> RollUp(const std::string& cluster) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  StatusOr<v1::AcctRollupState> RollupState(const std::string& cluster)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The node events of `cluster`, by node and start.
  StatusOr<std::vector<v1::AcctEvent>> Events(const std::string& cluster)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores what the controller says of its nodes (AcctRecordRequest::events): a change of a
  // node's state or reason ends its open event, and a node down or drained opens one.
  Status RecordEvents(const v1::AcctRecordRequest& req) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every entity as the store keeps it.
  StatusOr<v1::AcctShowReply> Load(std::string_view kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const conf::DbdConfig config_;
  uint32_t slurm_user_uid_ = 0;
  auth::MungeCredentials* munge_;
  const core::Clock* clock_;
  core::Mutex mu_;
  std::unique_ptr<store::AcctStore> store_ ABSL_GUARDED_BY(mu_);
};

}  // namespace loom::dbd
