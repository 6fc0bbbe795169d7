#include "ctld/durable.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>

#include "core/strings.h"
#include "ctld/persist.h"
#include "ctld/wire.h"
#include "rpc/convert.h"

namespace loom::ctld {
namespace {

// A stored submission's bytes as a request; `what` names it in errors.
StatusOr<model::JobRequest> Decode(std::string_view bytes, std::string_view what) {
  v1::JobSpec spec;
  if (!spec.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError(core::StrCat(what, ": its stored submission cannot be read"));
  }
  StatusOr<model::JobRequest> request = rpc::FromWire(spec);
  if (!request.ok()) {
    return absl::DataLossError(core::StrCat(what, ": its stored submission is not valid (",
                                            std::string(request.status().message()), ")"));
  }
  return request;
}

// A submission as the store keeps it: the request in its wire form, with script and
// environment.
store::PutRequest Stored(const Submission& s) {
  v1::JobSpec spec = rpc::ToWire(*s.request);
  spec.set_script(s.script);
  spec.mutable_environment()->insert(s.environment.begin(), s.environment.end());
  return store::PutRequest{s.id, spec.SerializeAsString()};
}

}  // namespace

store::Batch BatchFor(const Effects& fx, const ControllerCore& core) {
  store::Batch batch;
  for (const Submission& s : fx.submitted) batch.Add(Stored(s));
  const std::unordered_set<JobId> created(fx.created.begin(), fx.created.end());
  std::unordered_set<JobId> seen;
  for (JobId id : fx.changed) {
    if (!seen.insert(id).second) continue;
    auto it = core.jobs().find(id);
    if (it == core.jobs().end()) continue;
    if (created.count(id)) {
      batch.Add(store::PutJob{ToRecord(it->second, core.cluster())});
    } else {
      batch.Add(store::UpdateJob{ToProgress(it->second, core.cluster())});
    }
  }
  for (JobId id : fx.deleted) {
    batch.Add(store::DeleteJob{id});
    batch.Add(store::DeleteValue{StepsKey(id)});
  }
  const std::set<JobId> step_jobs(fx.steps_changed.begin(), fx.steps_changed.end());
  for (JobId id : step_jobs) {
    const JobEntry* e = core.Find(id);
    if (e == nullptr) continue;  // purged: deleted above
    if (std::optional<std::string> value = EncodeSteps(core.StepsOf(id), e->history().step.get())) {
      batch.Add(store::PutValue{StepsKey(id), *std::move(value)});
    } else {
      batch.Add(store::DeleteValue{StepsKey(id)});
    }
  }
  for (JobId id : fx.forgotten) batch.Add(store::DeleteRequest{id});
  const std::set<std::string> resvs(fx.reservations_changed.begin(), fx.reservations_changed.end());
  for (const std::string& name : resvs) {
    const auto it = core.reservations().find(name);
    if (it == core.reservations().end()) {
      batch.Add(store::DeleteValue{ReservationKey(name)});
    } else {
      batch.Add(store::PutValue{ReservationKey(name),
                                ReservationToInfo(it->second, 0).SerializeAsString()});
    }
  }
  const std::set<int32_t> nodes(fx.nodes_changed.begin(), fx.nodes_changed.end());
  for (int32_t n : nodes) {
    const model::Node& node = core.cluster().nodes[n];
    const NodeAdmin& admin = core.node_admin(n);
    store::NodeRecord r;
    r.name = node.name;
    r.state = admin.down ? model::NodeState::kDown : model::NodeState::kIdle;
    r.drain = node.drain;
    r.reason = node.drain || admin.down ? node.reason : "";
    r.reason_uid = admin.reason_uid;
    r.reason_time = admin.reason_time;
    batch.Add(store::PutNode{std::move(r)});
  }
  if (fx.next_id_changed) batch.Add(store::SetNextJobId{core.next_job_id()});
  return batch;
}

Status AddResubmissions(const Effects& fx, store::Store& store, store::Batch* batch) {
  for (const Submission& changed : fx.resubmitted) {
    Submission s{changed.id, changed.request, {}, {}};
    // Submitted in the same round, it is not in the store yet.
    auto fresh = std::find_if(fx.submitted.begin(), fx.submitted.end(),
                              [&](const Submission& n) { return n.id == changed.id; });
    if (fresh != fx.submitted.end()) {
      s.script = fresh->script;
      s.environment = fresh->environment;
    } else {
      ASSIGN_OR_RETURN(model::JobRequest full, ReadSubmission(store, changed.id));
      s.script = std::move(full.script);
      s.environment = std::move(full.environment);
    }
    batch->Add(Stored(s));
  }
  return absl::OkStatus();
}

StatusOr<std::vector<JobEntry>> EntriesFrom(const store::Snapshot& snapshot,
                                            const sched::Cluster& cluster,
                                            std::string_view location) {
  std::map<JobId, std::shared_ptr<const model::JobRequest>> requests;
  std::vector<JobEntry> entries;
  entries.reserve(snapshot.jobs.size());
  for (const store::JobRecord& r : snapshot.jobs) {
    const std::string what = core::StrCat("job ", r.id, " in ", location);
    std::shared_ptr<const model::JobRequest>& request = requests[r.request_id];
    if (request == nullptr) {
      auto bytes = snapshot.requests.find(r.request_id);
      if (bytes == snapshot.requests.end()) {
        return absl::DataLossError(core::StrCat(what, ": its submission (", r.request_id,
                                                ") is missing from the store"));
      }
      ASSIGN_OR_RETURN(model::JobRequest full, Decode(bytes->second, what));
      std::string().swap(full.script);  // frees the text, which clear() would keep
      full.environment.clear();
      request = std::make_shared<const model::JobRequest>(std::move(full));
    }
    ASSIGN_OR_RETURN(JobEntry e, FromRecord(r, cluster, request));
    entries.push_back(std::move(e));
  }
  return entries;
}

StatusOr<model::JobRequest> DecodeSubmission(std::string_view bytes, std::string_view what) {
  return Decode(bytes, what);
}

StatusOr<model::JobRequest> ReadSubmission(store::Store& store, JobId id) {
  ASSIGN_OR_RETURN(std::string bytes, store.ReadRequest(id));
  return Decode(bytes, core::StrCat("submission ", id, " in ", store.Location()));
}

}  // namespace loom::ctld
