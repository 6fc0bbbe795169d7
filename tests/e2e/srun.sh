#!/usr/bin/env bash
# srun outside an allocation, on `loom cluster up` (2 GPU + 2 CPU nodes), as a user runs it:
# labelled output from every node, each task's SLURM_* variables, the exit code of a failing
# task, its GPUs, stdout and stderr kept apart, Slurm's messages while the job waits, the job
# in squeue while it runs, a time limit ending as TIMEOUT, SIGTERM and Ctrl-C twice cancelling.
#
#   tests/e2e/srun.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: srun.sh BUILD_BIN_DIR}" && pwd)
dir=$(mktemp -d /tmp/loom-srun.XXXXXX)
work="$dir/work"
bg=()
cleanup() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  "$bin/loom" cluster down --dir "$dir/cluster" >/dev/null 2>&1 || true
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL: $*" >&2; show_logs "$dir"/cluster/log/*.log; exit 1; }

out=$("$bin/loom" cluster up --dir "$dir/cluster" --nodes 4)
export_line=$(grep '^export SLURM_CONF=' <<<"$out") || fail "up printed: $out"
eval "$export_line"
export PATH="$bin:$PATH"
mkdir -p "$work"
cd "$work"
host=$(hostname)

state() { squeue -h -j "$1" -t all -o '%T'; }
wait_state() {  # job state [tries of 0.1 s]
  for _ in $(seq "${3:-100}"); do
    [[ $(state "$1") == "$2" ]] && return 0
    sleep 0.1
  done
  fail "job $1 is $(state "$1"), not $2"
}

# Every node busy: srun says it waits, then that it got its nodes, exactly as Slurm does.
filler=$(sbatch --parsable -N4 --exclusive --wrap 'sleep 3')
wait_state "$filler" RUNNING
srun -N2 -l -t 1 hostname >out 2>err || fail "srun -N2 -l -t 1 hostname: $(cat err)"
[[ $(sort out) == "0: $host
1: $host" ]] || fail "srun -N2 -l hostname printed: $(cat out)"
job=$(squeue -h -t all -n hostname -o '%i' | sort -n | tail -1)
[[ $(cat err) == "srun: job $job queued and waiting for resources
srun: job $job has been allocated resources" ]] || fail "srun said: $(cat err)"
[[ $(squeue -h -j "$job" -t all -o '%T %D') == "COMPLETED 2" ]] ||
  fail "job $job: $(squeue -h -j "$job" -t all -o '%T %D')"
echo "ok: srun -N2 -l hostname, queued then allocated"

# The time limit, in the background: SIGTERM at one minute, TIMEOUT (checked at the end).
srun -t 1 -J limited sleep 600 >limit.out 2>limit.err &
limit_pid=$!
bg+=("$limit_pid")

# Started at once: no message at all.
srun -N2 -l hostname >out 2>err || fail "srun: $(cat err)"
[[ ! -s err ]] || fail "srun on an idle cluster said: $(cat err)"

srun -n3 -l sh -c 'echo $SLURM_PROCID' >out 2>err || fail "srun -n3: $(cat err)"
[[ $(sort out) == "0: 0
1: 1
2: 2" ]] || fail "srun -n3 -l printed: $(cat out)"
echo "ok: srun -n3 -l, each task its SLURM_PROCID"

srun -N2 --ntasks-per-node=2 -l sh -c 'echo $SLURM_JOB_ID $SLURM_STEP_ID $SLURM_LOCALID $SLURM_NODEID \
  $SLURM_NTASKS $SLURM_NNODES $SLURM_STEP_NODELIST $SLURM_JOB_NODELIST $SLURMD_NODENAME' \
  >out 2>err || fail "srun -N2 --ntasks-per-node=2: $(cat err)"
job=$(squeue -h -t all -n sh -o '%i' | sort -n | tail -1)
nodes=$(squeue -h -j "$job" -t all -o '%N')
first=$(scontrol show hostnames "$nodes" | head -1)
second=$(scontrol show hostnames "$nodes" | tail -1)
[[ $(sort out) == "0: $job 0 0 0 4 2 $nodes $nodes $first
1: $job 0 1 0 4 2 $nodes $nodes $first
2: $job 0 0 1 4 2 $nodes $nodes $second
3: $job 0 1 1 4 2 $nodes $nodes $second" ]] || fail "task variables: $(cat out)"
echo "ok: the tasks' SLURM_* variables, block distribution over $nodes"

set +e
srun sh -c 'exit 3' >out 2>err
rc=$?
set -e
(( rc == 3 )) || fail "srun sh -c 'exit 3' exited $rc"
grep -Eq '^srun: error: [a-z0-9]+: task 0: Exited with exit code 3$' err || fail "said: $(cat err)"
set +e
srun -n2 sh -c 'if [ $SLURM_PROCID = 1 ]; then kill -9 $$; fi; exit 2' >out 2>err
rc=$?
set -e
(( rc == 2 )) || fail "an exit 2 and a SIGKILL: srun exited $rc, not 2 (an exit counts over a signal)"
grep -q 'task 1: Killed' err || fail "said: $(cat err)"
echo "ok: the exit code is the highest task's"

# -K: a task that exits non-zero ends the others at once (not after task 0's sleep 60).
set +e
start=$SECONDS
srun -K -n2 sh -c 'if [ "$SLURM_PROCID" = 1 ]; then exit 4; fi; sleep 60' >out 2>err
rc=$?
set -e
(( rc == 4 )) || fail "srun -K exited $rc: $(cat err)"
(( SECONDS - start < 30 )) || fail "srun -K waited for task 0's sleep"
grep -Eq '^srun: Terminating StepId=[0-9]+\.0$' err || fail "srun -K said: $(cat err)"
kjob=$(squeue -h -t all -n sh -o '%i %T' | sort -n | tail -1)
[[ "$kjob" == *" FAILED" ]] || fail "srun -K's job: $kjob"
echo "ok: srun -K ends the job's tasks when one exits non-zero; the job FAILED"

srun --gpus-per-node=2 sh -c 'echo $CUDA_VISIBLE_DEVICES' >out 2>err || fail "GPUs: $(cat err)"
[[ $(cat out) == "0,1" ]] || fail "--gpus-per-node=2 sees CUDA_VISIBLE_DEVICES=$(cat out)"
echo "ok: --gpus-per-node=2 sees CUDA_VISIBLE_DEVICES=0,1"

srun -n2 -l sh -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2' >out 2>err ||
  fail "srun: $(cat err)"
[[ $(sort out) == "0: out 0
1: out 1" && $(sort err) == "0: err 0
1: err 1" ]] || fail "stdout: $(cat out) stderr: $(cat err)"
srun -n2 -o 'task-%t.txt' sh -c 'echo file $SLURM_PROCID' >out 2>err || fail "-o: $(cat err)"
[[ ! -s out && $(cat task-0.txt) == "file 0" && $(cat task-1.txt) == "file 1" ]] ||
  fail "-o task-%t.txt: $(cat out task-*.txt)"
echo "ok: stderr to stderr, stdout to stdout, -o per task"

# While it runs, squeue shows it under the command's name.
srun sleep 30 >/dev/null 2>sleep.err &
sleep_pid=$!
bg+=("$sleep_pid")
for _ in $(seq 100); do
  running=$(squeue -h -t R -n sleep -o '%i %j %T')
  [[ -n $running ]] && break
  sleep 0.1
done
[[ $running =~ ^[0-9]+\ sleep\ RUNNING$ ]] || fail "squeue while srun runs: '$running'"
sleep_job=${running%% *}
echo "ok: squeue shows the running job: $running"

# SIGTERM to srun cancels the job; srun exits 128+15 as its task does.
kill -TERM "$sleep_pid"
set +e
wait "$sleep_pid"
rc=$?
set -e
(( rc == 143 )) || fail "srun after SIGTERM exited $rc: $(cat sleep.err)"
wait_state "$sleep_job" CANCELLED
grep -q '^srun: forcing job termination$' sleep.err || fail "said: $(cat sleep.err)"
echo "ok: SIGTERM cancels the job"

# Ctrl-C once reports the tasks; twice within a second cancels.
srun -n2 sleep 30 >/dev/null 2>int.err &
int_pid=$!
bg+=("$int_pid")
for _ in $(seq 100); do
  int_job=$(squeue -h -t R -n sleep -o '%i')
  [[ -n $int_job ]] && break
  sleep 0.1
done
[[ -n $int_job ]] || fail "srun -n2 sleep 30 never ran: $(cat int.err)"
sleep 0.5  # the tasks have started and said hello
kill -INT "$int_pid"
sleep 0.3
kill -INT "$int_pid"
set +e
wait "$int_pid"
rc=$?
set -e
(( rc == 143 )) || fail "srun after two Ctrl-C exited $rc: $(cat int.err)"
wait_state "$int_job" CANCELLED
grep -q '^srun: interrupt (one more within 1 sec to abort)$' int.err || fail "$(cat int.err)"
grep -q "^srun: step:$int_job.0 tasks 0-1: running$" int.err || fail "$(cat int.err)"
echo "ok: Ctrl-C twice cancels the job"

set +e
srun --frobnicate true 2>err
rc=$?
set -e
(( rc == 1 )) && grep -q "^srun: unrecognized option '--frobnicate'$" err || fail "$rc: $(cat err)"
echo "ok: a bad option is refused"

set +e
wait "$limit_pid"
rc=$?
set -e
limit_job=$(squeue -h -t all -n limited -o '%i')
wait_state "$limit_job" TIMEOUT
(( rc == 143 )) || fail "srun -t 1 sleep 600 exited $rc: $(cat limit.err)"
grep -q "DUE TO TIME LIMIT" limit.err || fail "srun -t 1 said: $(cat limit.err)"
echo "ok: srun -t 1 sleep 600 ends as TIMEOUT"
echo "PASS"
