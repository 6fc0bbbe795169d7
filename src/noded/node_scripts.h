// The site's Prolog and Epilog on one node (slurm.conf Prolog=, Epilog=, PrologFlags=Serial,
// PrologEpilogTimeout=): run by loomd as root, with the job's variables as Slurm gives them
// (SLURM_JOB_ID, SLURM_JOB_USER, SLURM_JOB_UID, SLURM_JOB_NODELIST, CUDA_VISIBLE_DEVICES,
// SLURM_SCRIPT_CONTEXT, ...; docs/admin/prolog-epilog.md).
//
// The prolog runs once per job on the node, when the first launch of the job reaches it (its
// batch script, or its first step's tasks); launches that come meanwhile wait for that run,
// and later ones get its result at once. The epilog runs once the job's allocation has
// ended and its processes here are gone; it forgets the job's prolog.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"

namespace loom::noded {

struct NodeScriptsOptions {
  std::string prolog;  // the settings as written: a path or a glob pattern; empty: none
  std::string epilog;
  bool serial = false;     // PrologFlags=Serial: one prolog or epilog at a time on the node
  int64_t timeout_s = 0;   // PrologEpilogTimeout; 0: none
  std::string node;        // SLURMD_NODENAME
  std::string slurm_conf;  // SLURM_CONF
  std::string cluster_name;
};

class NodeScripts {
 public:
  explicit NodeScripts(NodeScriptsOptions options)
      : opt_(std::make_shared<const NodeScriptsOptions>(std::move(options))) {}

  // slurm.conf read again (SIGHUP): runs from now on follow `options`.
  void Reconfigure(NodeScriptsOptions options);

  // Runs the prolog for `job` unless it ran already (see above). PROLOG_FAILED (with why)
  // when it failed, now or at the run that counted.
  Status Prolog(const v1::JobInfo& job);
  // Waits for a prolog of `job` that runs now, runs the epilog and forgets the job. Returns
  // why it failed (nullopt when it succeeded or none is set). A job whose epilog ran lately
  // is not run again for the same run of the job (the controller repeats its request after a
  // restart); nullopt then.
  std::optional<std::string> Epilog(const v1::JobInfo& job);

  // The environment of a prolog or epilog of `job` on this node; `context` is
  // SLURM_SCRIPT_CONTEXT ("prolog_slurmd", "epilog_slurmd").
  std::vector<std::string> Environment(const v1::JobInfo& job, std::string_view context) const;

 private:
  struct PrologRun {
    bool done = false;
    Status result;
  };
  // Runs every program `setting` names, one after the other, stopping at the first failure,
  // which it returns ("/etc/slurm/prolog.sh: exit status 1").
  std::optional<std::string> RunAll(const NodeScriptsOptions& opt, const std::string& setting,
                                    const v1::JobInfo& job, std::string_view context);
  std::shared_ptr<const NodeScriptsOptions> Options() const;

  mutable core::Mutex opt_mu_;
  std::shared_ptr<const NodeScriptsOptions> opt_ ABSL_GUARDED_BY(opt_mu_);
  core::Mutex serial_mu_;  // held around each run under PrologFlags=Serial
  core::Mutex mu_;
  std::map<uint64_t, PrologRun> prologs_ ABSL_GUARDED_BY(mu_);
  // Runs of jobs (id, times requeued) whose epilog ran, the latest last, at most kRemembered.
  std::deque<std::pair<uint64_t, int32_t>> epilogs_done_ ABSL_GUARDED_BY(mu_);
  static constexpr size_t kRemembered = 4096;
};

}  // namespace loom::noded
