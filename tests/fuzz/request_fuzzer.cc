// libFuzzer target for the controller's rules driven from the wire: each record of the input
// is a request message as a client or a node daemon would send it (Submit, UpdateJob,
// SignalJob, Heartbeat, JobComplete, RegisterNode), decoded with protobuf, converted as the
// controller's API converts it (rpc/convert.h, ctld ParseJobEdit) and applied to a fresh
// ControllerCore, with scheduling passes and clock ticks in between. Nothing may crash, hang,
// leak or trip a sanitizer, nor make the job state machine refuse a transition, whatever the
// bytes, callers and order.
//
// Input: records of [kind byte][2-byte big-endian length][message bytes].
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conf/testing/site_text.h"
#include "ctld/controller_core.h"
#include "loom/v1/loom.pb.h"
#include "rpc/convert.h"
#include "rpc/credential.h"

namespace {

using loom::ctld::Caller;
using loom::ctld::ControllerCore;
using loom::ctld::Effects;

const loom::conf::SiteConfig& Site() {
  static const loom::conf::SiteConfig site = [] {
    auto s = loom::conf::testing::SiteFromText(
        "request_fuzzer",
        // MaxArraySize bounds the jobs one input can make: every record runs a pass over all
        // of them, and arrays of thousands made an input take a second.
        "ClusterName=f\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\nGresTypes=gpu\n"
        "MaxArraySize=33\n"
        "NodeName=n[1-3] CPUs=8 RealMemory=16000 Gres=gpu:a100:2\n"
        "PartitionName=batch Nodes=n[1-3] Default=YES MaxTime=1-00:00:00 DefaultTime=01:00:00\n"
        "PartitionName=small Nodes=n1 MaxTime=01:00:00\n",
        {{"gres.conf", "NodeName=n[1-3] Name=gpu Type=a100 File=/dev/nvidia[0-1]\n"}});
    if (!s.ok()) std::abort();
    return *s;
  }();
  return site;
}

const Caller kCallers[] = {{0, 0, "root"}, {1001, 1001, "alice"}, {1002, 1002, "bob"}};

template <typename M>
bool Parse(std::string_view bytes, M* m) {
  return m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace

// Protobuf logs every string field that is not UTF-8; the fuzzer makes millions.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // On the heap: the core is large for a fuzzer's stack under ASan.
  auto owned = std::make_unique<ControllerCore>(
      Site(), loom::ctld::CoreOptions{.kill_wait_s = 5, .slurmd_timeout_s = 30}, 1);
  ControllerCore& core = *owned;
  loom::ctld::Time now = 1000;
  Effects fx;
  for (const char* n : {"n1", "n2", "n3"}) core.NodeAlive(n, now, &fx);
  std::vector<loom::model::JobId> ids;
  size_t at = 0;
  // At most 128 records an input: longer inputs only repeat what shorter ones reach.
  for (int records = 0; at + 3 <= size && records < 128; ++records) {
    const uint8_t kind = data[at];
    const size_t len = std::min<size_t>((size_t{data[at + 1]} << 8) | data[at + 2], size - at - 3);
    std::string_view bytes(reinterpret_cast<const char*>(data) + at + 3, len);
    at += 3 + len;
    const Caller& who = kCallers[(kind >> 4) % 3];
    const auto some_id = [&](uint64_t wire) {
      return ids.empty() || wire != 0 ? wire : ids[wire % ids.size()];
    };
    switch (kind & 0x0f) {
      case 0: {
        loom::v1::SubmitRequest req;
        if (!Parse(bytes, &req)) break;
        auto request = loom::rpc::FromWire(req.spec());
        if (!request.ok()) break;
        if (req.test_only()) {
          (void)core.TestOnly(*request, now, &fx);
        } else if (auto id = core.Submit(*request, who, now, &fx); id.ok()) {
          ids.push_back(*id);
        }
        break;
      }
      case 1: {
        loom::v1::UpdateJobRequest req;
        if (!Parse(bytes, &req)) break;
        const uint64_t id = some_id(req.job_id());
        std::vector<std::pair<std::string, std::string>> fields(req.fields().begin(),
                                                                req.fields().end());
        std::sort(fields.begin(), fields.end());
        switch (req.action()) {
          case loom::v1::UpdateJobRequest::HOLD: (void)core.Hold(id, who, &fx); break;
          case loom::v1::UpdateJobRequest::RELEASE: (void)core.Release(id, who, &fx); break;
          case loom::v1::UpdateJobRequest::REQUEUE:
          case loom::v1::UpdateJobRequest::REQUEUE_HOLD:
            (void)core.Requeue(id, req.action() == loom::v1::UpdateJobRequest::REQUEUE_HOLD, who,
                               now, &fx);
            break;
          default:
            if (auto edit = loom::ctld::ParseJobEdit(fields); edit.ok()) {
              (void)core.UpdateJob(id, *edit, who, now, &fx);
            }
        }
        break;
      }
      case 2: {
        loom::v1::SignalJobRequest req;
        if (!Parse(bytes, &req)) break;
        for (loom::model::JobId id : ids) {
          if (req.job_ids_size() > 0 && (id % 3) != 0) continue;
          (void)core.Signal(id, std::nullopt, req.signal(), who, now, &fx);
        }
        break;
      }
      case 3: {
        loom::v1::HeartbeatRequest req;
        if (!Parse(bytes, &req)) break;
        core.NodeAlive(req.name(), now, &fx);
        const std::vector<loom::model::JobId> running(req.running_jobs().begin(),
                                                      req.running_jobs().end());
        (void)core.NodeReportsJobs(req.name(), running, &fx);
        break;
      }
      case 4: {
        loom::v1::JobCompleteRequest req;
        if (!Parse(bytes, &req)) break;
        const uint64_t id = some_id(req.job_id());
        if (req.has_step_id()) {
          core.StepNodeEnded(id, req.step_id(), req.node(), req.exit_code(), req.message(), now,
                             &fx, req.out_of_memory());
        } else if (!req.message().empty()) {
          core.LaunchFailed(id, req.message(), now, &fx, req.out_of_memory(), req.node());
        } else {
          core.JobEnded(id, req.exit_code(), req.out_of_memory(), now, &fx, req.node());
        }
        break;
      }
      case 5: {
        loom::v1::RegisterNodeRequest req;
        if (!Parse(bytes, &req)) break;
        loom::model::Resources found{req.cpus(), req.gpus_size(), req.real_memory_mb()};
        core.NodeRegistered(req.name(), found, now, &fx);
        break;
      }
      case 6:
        core.LaunchCollided(ids.empty() ? 1 : ids[len % ids.size()], len % 2 ? "n1" : "n2", now,
                            &fx);
        break;
      case 7: {
        loom::v1::Frame frame;  // the envelope every request comes in
        if (Parse(bytes, &frame)) (void)loom::rpc::ReadFrameHead(bytes);
        break;
      }
      default:
        now += len;  // time passes: limits, node timeouts, purges
        core.Tick(now, &fx);
    }
    core.Schedule(now, &fx);
    now += 1;
    // A transition the job state machine refused is a rule of the controller's that let a
    // job reach a step it forbids: a bug, whatever the input.
    if (core.refused_transitions() != 0) {
      std::fprintf(stderr, "request_fuzzer: a refused job state transition (see the log above)\n");
      std::abort();
    }
  }
  return 0;
}
