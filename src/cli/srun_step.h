// What srun does with the I/O connections of its job's nodes (StepIo frames, see
// proto/loom/v1/loom.proto): it listens, checks each node's hello against the job and its
// key, writes the tasks' output where -o/-e/-l say, keeps each task's exit, and says in
// Slurm's words how tasks ended. Driven by srun's one thread through poll(); thread-compatible.
#pragma once

#include <poll.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit/srun_options.h"
#include "core/clock.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"
#include "model/job.h"
#include "model/job_request.h"
#include "model/step.h"
#include "rpc/frame.h"

namespace loom::cli {

// An address of this host the nodes can reach: the first address its name resolves to that
// is not a loopback one; loopback when there is no other (a cluster on one host).
std::string HostAddress();
// 128 random bits as hex: the key a step's nodes present to srun.
StatusOr<std::string> RandomKey();
// The process's umask as SLURM_UMASK holds it ("0022").
std::string UmaskText();

// srun -l: every line of a task's output starts with its task number and ": ", the number
// right-aligned to the width of the step's highest one (" 3: " among 12 tasks), as Slurm
// prints it. Output that stops mid-line continues unlabelled where it left off.
class Labeler {
 public:
  Labeler(bool label, int32_t ntasks);
  // `data` as it should be written for `task`'s stdout (or stderr).
  std::string Apply(int32_t task, bool is_stderr, std::string_view data);

 private:
  bool label_;
  int width_;
  std::set<std::pair<int32_t, bool>> mid_line_;  // streams whose last data ended mid-line
};

// Task ids as Slurm lists them: "0", "0-2,5".
std::string FormatTaskIds(std::vector<int32_t> ids);

// Where the tasks' streams go on srun's side.
struct StepOutputs {
  int stdout_fd = 1;  // -1: nowhere (the nodes write files)
  int stderr_fd = 2;
  std::optional<int32_t> stdout_task;  // only this task's stream (--output=N)
  std::optional<int32_t> stderr_task;
};

// Opens the files srun itself writes the tasks' streams to (-o/-e patterns without %t, %n,
// %N, expanded for step `step_id` of job `job`; one path named by both opened once) and
// says where each stream goes. The descriptors opened are appended to `files` (the caller
// closes them). Errors, Slurm's: "Could not open stdout file PATH: REASON".
StatusOr<StepOutputs> OpenStepOutputs(const submit::IoTarget& out, const submit::IoTarget& err,
                                      const model::JobRequest& request, model::JobId job,
                                      uint32_t step_id, std::vector<int>* files);

class StepMonitor {
 public:
  // `key` is what the job's nodes must present; `say` prints one of srun's own messages (a
  // line without its newline) on srun's stderr.
  StepMonitor(std::string key, bool label, std::function<void(const std::string&)> say);
  ~StepMonitor();
  StepMonitor(const StepMonitor&) = delete;
  StepMonitor& operator=(const StepMonitor&) = delete;

  // Listens on `host` (an address of this host), port chosen by the kernel.
  Status Listen(const std::string& host);
  int port() const { return port_; }

  // The job, once submitted; before it, no connection is read.
  void SetJob(model::JobId job) { job_ = job; }
  // The step's id inside its job, for messages ("StepId=12.3"); 0 unless set.
  void SetStep(uint32_t step) { step_ = step; }
  // Where the streams go (srun's own by default).
  void SetOutputs(StepOutputs outputs) { outputs_ = outputs; }
  // Once the job has its nodes: their names in the job's order and the tasks each runs.
  // Output that came before is written then.
  void SetLayout(std::vector<std::string> nodes, std::vector<int32_t> tasks_per_node);
  bool has_layout() const { return !tasks_per_node_.empty(); }
  int32_t ntasks() const { return ntasks_; }

  // The descriptors to poll for reading: the listening socket and every open connection.
  std::vector<pollfd> PollFds() const;
  // Handles `fd` having become readable (a new connection, data, or a connection's end).
  void OnReadable(int fd);
  // Waits up to `wait_ms` (at least 1 ms) for the nodes' connections and for `signal_fd` (a
  // signalfd), handles what became readable, and passes each signal read to `on_signal`.
  void PollOnce(int signal_fd, int64_t wait_ms, const std::function<void(int)>& on_signal);

  // From now on, tasks killed by a signal are expected (the job was cancelled or timed out):
  // their ends are not reported as errors, as in Slurm.
  void ExpectSignals() { expect_signals_ = true; }
  // Tasks killed by a signal are reported only by FlushReports, so that srun can first learn
  // whether the job is being ended (a time limit, a cancel from elsewhere).
  bool has_pending_reports() const { return !pending_reports_.empty(); }
  void FlushReports();

  // Every task of the step has reported its end.
  bool AllTasksEnded() const {
    return has_layout() && exits_.size() == static_cast<size_t>(ntasks_);
  }
  // Some node is still connected.
  bool AnyNodeConnected() const;
  // A node said it could not start its tasks.
  bool launch_failed() const { return launch_failed_; }
  // The tasks' ends added up by srun's rule.
  const model::StepStatus& status() const { return status_; }
  // Some task ended other than with exit code 0, or was lost with its node (its connection
  // closed before it reported its end), while others still run (what -K acts on).
  bool TaskFailedWhileOthersRun() const {
    const int32_t ws = status_.wait_status();
    const bool failed = !status_.empty() && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    return (failed || !lost_.empty()) && !AllTasksEnded();
  }
  // What srun exits with: the tasks' code (srun's rule) once all have reported; before that
  // (the step went away), that code when not 0, else `error_exit`.
  int ExitCode(int error_exit) const {
    const int code = status_.ExitCode();
    return AllTasksEnded() || code != 0 ? code : error_exit;
  }
  // "step:12.0 tasks 0-1: running"-style lines on each task's state, as srun prints them on
  // Ctrl-C.
  std::vector<std::string> TaskStates() const;

 private:
  struct Connection {
    int fd = -1;
    rpc::FrameDecoder decoder{1u << 20};
    bool greeted = false;
    std::string node;
    std::vector<int32_t> tasks;
    bool launch_failed = false;  // it said its tasks could not start
  };
  void Accept();
  // Handles one message; false when the connection must be dropped (a bad hello).
  bool Handle(Connection& c, const std::string& frame);
  void Close(int fd);
  void Output(const v1::StepIo::Output& o);  // writes it where it goes, labelled
  void Write(int fd, std::string_view data);

  model::JobId job_ = 0;
  uint32_t step_ = 0;
  std::string key_;
  bool label_;
  StepOutputs outputs_;
  std::function<void(const std::string&)> say_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<std::string> nodes_;
  std::vector<int32_t> tasks_per_node_;
  int32_t ntasks_ = 0;
  std::unique_ptr<Labeler> labeler_;
  std::map<int, std::unique_ptr<Connection>> connections_;
  std::set<int32_t> running_;         // tasks a connected node runs that have not ended
  std::set<int32_t> lost_;            // tasks whose node went without reporting their end
  std::map<int32_t, int32_t> exits_;  // task -> wait status
  model::StepStatus status_;
  bool expect_signals_ = false;
  bool launch_failed_ = false;
  std::vector<std::string> pending_reports_;  // killed tasks, until FlushReports
  std::vector<v1::StepIo::Output> held_;      // output that came before the layout
};

// The signals srun answers, the same for a job srun submits and a step inside an
// allocation: blocks SIGINT, SIGTERM, SIGQUIT and SIGHUP and returns a descriptor they
// arrive on, for srun's poll loop. SIGINT, SIGTERM and SIGQUIT are taken back from a shell
// that ignores them for background commands; an ignored SIGHUP (nohup's) stays ignored.
// SIGPIPE is ignored: a reader that went away is an error on the write.
int TakeSrunSignals();

// What srun does on each of those signals, for both sruns: a first Ctrl-C reports the
// tasks' states and a second within a second aborts (the first, with -q); any other signal
// aborts at once; one that comes while the abort is under way leaves without waiting for
// the tasks. Says Slurm's words through `say`; the abort itself is the caller's.
class InterruptHandler {
 public:
  // `clock` times the second between two Ctrl-Cs; it must outlive the handler.
  explicit InterruptHandler(const core::Clock& clock = core::RealClock()) : clock_(clock) {}

  enum class Action {
    kNone,              // reported, or nothing to do
    kAbortByInterrupt,  // Ctrl-C asked for the abort
    kAbort,             // another signal did, or Ctrl-C with -q
    kLeave,             // the abort is under way: leave now
  };
  Action OnSignal(int sig, bool quit_on_interrupt, bool abort_sent, const StepMonitor& monitor,
                  const std::function<void(const std::string&)>& say);

 private:
  const core::Clock& clock_;
  std::optional<std::chrono::steady_clock::time_point> last_interrupt_;
};

// After the tasks have ended: calls `query` (which asks the controller and sets `done` once
// the record says the job or step ended) until `done` or `give_up`, at most about 5 s. It
// looks again soon at first and less often later: the end is usually recorded within a few
// milliseconds, and the next command should see it.
void AwaitRecordedEnd(const std::function<void()>& query, const bool& done, const bool& give_up);

// srun --prolog or --epilog (`what`): the program `given` ("none": nothing; empty:
// `configured`, slurm.conf's SrunProlog or SrunEpilog), run by srun with its own environment
// plus SLURM_JOB_ID when `job` is set, the step's command and arguments as its arguments,
// and its standard output printed by srun. Returns false, after saying why, when it failed.
bool RunSrunScript(std::string_view what, const std::string& given, const std::string& configured,
                   const std::vector<std::string>& argv, uint64_t job);

}  // namespace loom::cli
