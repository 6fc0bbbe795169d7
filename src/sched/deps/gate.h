// What keeps a pending job waiting besides resources: a hold, its dependencies (after,
// afterany, afterok, afternotok, aftercorr, singleton), its begin time and its array's
// throttle (`--array=0-99%4`). Pure: the driver describes the job and answers questions
// about the other jobs (JobsView); the gate never reads a clock or a table of its own. The
// controller and the simulator both judge every pending job here before each pass, so a
// dependency chain or a throttled array waits the same way in both.
//
// One Gate serves one pass: construct it with the pass's `now`, count the array tasks that
// run (Running), then Judge each pending job in submission order (both drivers do: an
// array's throttle lets its lowest waiting tasks through). wake() is when the earliest
// wait that time alone ends is over (a begin time, `after:job+delay`), so the driver knows
// when to look again without an event. Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "model/job_request.h"
#include "model/job_state.h"
#include "sched/types.h"

namespace loom::sched::deps {

// Another job, as dependencies see it.
struct JobView {
  JobId id = 0;
  std::optional<int64_t> array_task;  // its index, when it is an array task
  uint32_t uid = 0;
  std::string_view name;
  model::JobState state = model::JobState::kPending;
  int32_t exit_code = 0;  // wait(2) status once it ended
  bool started = false;   // it has started (and may have ended since)
  Time start_time = 0;    // when it (last) started
};

// The driver's answers about the other jobs. The views handed to `fn` live only for the call.
class JobsView {
 public:
  virtual ~JobsView() = default;
  // The job `id` names: that job, or every task of the array whose id it is (tasks no longer
  // known are skipped; a job never known gives nothing, which no clause waits on).
  virtual void ForEachNamed(JobId id, const std::function<void(const JobView&)>& fn) const = 0;
  // Every job that is not over (pending, running, or ended with its processes being killed).
  virtual void ForEachLive(const std::function<void(const JobView&)>& fn) const = 0;
};

// The pending job being judged.
struct Candidate {
  JobId id = 0;
  uint32_t uid = 0;
  std::string_view name;
  // Held: its priority is 0. `admin_hold`: held by an administrator (JobHeldAdmin), else by
  // its user (JobHeldUser).
  bool held = false;
  bool admin_hold = false;
  const model::Dependency* dependency = nullptr;  // null or empty: none
  Time eligible_time = 0;                         // begin time (--begin), 0: any time
  // Its array (0: none) and that array's `%N` limit on running tasks (0: none).
  JobId array_id = 0;
  int64_t array_max_running = 0;
};

enum class DepState { kSatisfied, kWaiting, kNever };

// Whether `dependency` of job `self` (uid, name: for singleton) holds at `now`. A clause
// waiting on `after:job+delay` that time alone ends lowers `*wake` to when it does.
DepState Evaluate(const model::Dependency& dependency, JobId self, uint32_t uid,
                  std::string_view name, const JobsView& jobs, Time now, Time* wake);

class Gate {
 public:
  Gate(const JobsView& jobs, Time now) : jobs_(jobs), now_(now) {}

  // A task of array `array_id` runs now (count them all before judging).
  void Running(JobId array_id) { ++running_[array_id]; }

  // Why `job` may not start in this pass for a reason other than resources, or kNone. In
  // order: a hold, its dependencies (Dependency, DependencyNeverSatisfied), its begin time
  // (BeginTime), its array's throttle (JobArrayTaskLimit). A job let through counts against
  // its array's throttle for the rest of the pass, so judge jobs in submission order.
  model::PendingReason Judge(const Candidate& job);

  // Some job waits for a dependency (after the Judge calls so far).
  bool any_dependency_wait() const { return dependency_waits_ > 0; }

  // When the driver should look again without an event: the earliest begin time or
  // `after:` delay that ends a wait; kNever when none. A pass that starts jobs while
  // others wait for dependencies calls for a look one second later (`started`): the
  // waiting jobs may depend on the ones it started (`after:`), which the next look sees.
  Time wake(bool started) const {
    return started && dependency_waits_ > 0 ? std::min(wake_, now_ + 1) : wake_;
  }

 private:
  const JobsView& jobs_;
  Time now_;
  Time wake_ = kNever;
  int64_t dependency_waits_ = 0;
  std::unordered_map<JobId, int64_t> running_;  // running tasks per array
  std::unordered_map<JobId, int64_t> budget_;   // tasks per array that may still start
};

}  // namespace loom::sched::deps
