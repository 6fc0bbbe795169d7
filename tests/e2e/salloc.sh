#!/usr/bin/env bash
# salloc on `loom cluster up`, as a person uses it: in a terminal (a tmux session of its own),
# salloc -N2 grants an allocation and starts a shell with the job's variables, srun in it runs
# on the allocated nodes, `exit` relinquishes it and the job ends COMPLETED. Then, without a
# terminal: a command's exit status becomes salloc's (FAILED job), a waiting allocation says
# so as Slurm does, and scancel revokes a running one (the command gets SIGTERM; SIGHUP on a
# terminal).
#
#   tests/e2e/salloc.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: salloc.sh BUILD_BIN_DIR}" && pwd)
command -v tmux >/dev/null || { echo "FAIL: tmux is not installed (scripts/install-deps)" >&2; exit 1; }
dir=$(mktemp -d /tmp/loom-salloc.XXXXXX)
work="$dir/work"
sock="$dir/tmux.sock"
bg=()
tmux_pid=""
cleanup() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ -n $tmux_pid ]]; then kill "$tmux_pid" 2>/dev/null || true; fi
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
  for _ in $(seq "${3:-150}"); do
    [[ $(state "$1") == "$2" ]] && return 0
    sleep 0.1
  done
  fail "job $1 is $(state "$1"), not $2"
}

# The time limit, in the background all along: at one minute the allocation is revoked.
salloc -N1 -t 1 -J limited sleep 300 >limit.out 2>limit.err &
limit_pid=$!
bg+=("$limit_pid")

# ---------------------------------------------------------------- in a terminal, as a person
export SHELL=/bin/bash
tmux -S "$sock" new-session -d -x 160 -y 50 "bash --norc --noprofile"
tmux_pid=$(tmux -S "$sock" display-message -p '#{pid}')
screen() { tmux -S "$sock" capture-pane -p -S -200; }
type_line() { tmux -S "$sock" send-keys -l "$1"; tmux -S "$sock" send-keys Enter; }
wait_screen() {  # regex [tries of 0.1 s]
  for _ in $(seq "${2:-150}"); do
    screen | grep -Eq "$1" && return 0
    sleep 0.1
  done
  fail "the terminal never showed /$1/: $(screen)"
}
wait_last() {  # the terminal's last line is exactly this
  for _ in $(seq 150); do
    [[ $(screen | grep -v '^$' | tail -n1 | sed 's/ *$//') == "$1" ]] && return 0
    sleep 0.1
  done
  fail "the terminal's last line is not '$1': $(screen)"
}
type_line "PS1='outer\$ '; cd '$work'"
wait_screen '^outer\$ ?$'
type_line "salloc -N2"
wait_screen '^salloc: Granted job allocation [0-9]+$'
job=$(screen | sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' | tail -n1)
screen | grep -q "^salloc: Pending job allocation $job$" || fail "salloc said: $(screen)"
[[ $(state "$job") == RUNNING ]] || fail "job $job is $(state "$job")"
nodes=$(squeue -h -j "$job" -o '%N')
echo "ok: salloc -N2 in a terminal: Granted job allocation $job on $nodes"

type_line "PS1='inner\$ '"
wait_screen '^inner\$ ?$'
type_line 'echo "vars: $SLURM_JOB_ID $SLURM_JOBID $SLURM_NNODES $SLURM_JOB_NODELIST $SLURM_NODELIST $SLURM_CLUSTER_NAME $SLURM_SUBMIT_DIR"'
wait_screen "^vars: $job $job 2 .* local $work$"
screen | grep -qF "vars: $job $job 2 $nodes $nodes local $work" || fail "variables: $(screen)"
echo "ok: the shell has SLURM_JOB_ID, SLURM_NNODES, SLURM_JOB_NODELIST, SLURM_CLUSTER_NAME, ..."

type_line "srun hostname; echo srun-done=\$?"
wait_screen '^srun-done=[0-9]+$'
screen | grep -q '^srun-done=0$' || fail "srun hostname: $(screen)"
[[ $(screen | grep -c "^$host$") -ge 2 ]] || fail "srun hostname printed: $(screen)"
type_line "srun -l printenv SLURMD_NODENAME | sort; echo names-done"
wait_screen '^names-done$'
first=$(scontrol show hostnames "$nodes" | head -n1)
second=$(scontrol show hostnames "$nodes" | tail -n1)
screen | grep -q "^0: $first$" && screen | grep -q "^1: $second$" ||
  fail "srun -l printenv SLURMD_NODENAME: $(screen)"
grep -q "State=COMPLETED" <<<"$(scontrol show step "$job.1")" || fail "$(scontrol show step "$job.1")"
echo "ok: srun inside runs on the allocated nodes ($first, $second) as steps $job.0 and $job.1"

type_line "exit"
wait_screen "^salloc: Relinquishing job allocation $job$"
wait_last 'outer$'  # back in the shell salloc was started from
wait_state "$job" COMPLETED
echo "ok: exit relinquishes the allocation; job $job is COMPLETED"

# scancel while the shell runs: salloc says the allocation was revoked, the shell gets SIGHUP.
type_line "salloc -N1 -J doomed"
doomed=""
for _ in $(seq 150); do
  doomed=$(squeue -h -n doomed -t R -o '%i')
  [[ -n $doomed ]] && break
  sleep 0.1
done
[[ -n $doomed ]] || fail "salloc -J doomed never ran: $(screen)"
wait_screen "^salloc: Granted job allocation $doomed$"
sleep 0.5  # the shell is up
scancel "$doomed"
wait_screen "salloc: Job allocation $doomed has been revoked.$"  # after the shell's prompt
wait_last 'outer$'  # the shell ended by SIGHUP; back where salloc started
wait_state "$doomed" CANCELLED
screen | grep -q "Relinquishing job allocation $doomed" && fail "revoked, yet relinquished: $(screen)"
echo "ok: scancel of a salloc shell: revoked, the shell hung up, job $doomed CANCELLED"
kill "$tmux_pid" 2>/dev/null || true
tmux_pid=""

# ---------------------------------------------------------------- commands, no terminal
set +e
salloc -N1 sh -c 'echo "in $SLURM_JOB_ID"; exit 3' >out 2>err
rc=$?
set -e
(( rc == 3 )) || fail "salloc sh -c 'exit 3' exited $rc: $(cat err)"
job=$(sed -n 's/^in //p' out)
[[ $(cat err) == "salloc: Granted job allocation $job
salloc: Relinquishing job allocation $job" || $(cat err) == "salloc: Pending job allocation $job
salloc: Granted job allocation $job
salloc: Relinquishing job allocation $job" ]] || fail "salloc said: $(cat err)"
wait_state "$job" FAILED
[[ $(squeue -h -j "$job" -t all -o '%T %j') == "FAILED sh" ]] || fail "$(squeue -h -j "$job" -t all)"
echo "ok: salloc exits with its command's status (3); the job ends FAILED"

# No whole node free (three taken, the fourth shared with `limited`): salloc waits and says
# so, as Slurm does.
filler=$(sbatch --parsable -N3 --exclusive --wrap 'sleep 3')
wait_state "$filler" RUNNING
salloc -N1 --exclusive true >out 2>err || fail "salloc -N1 --exclusive true: $(cat err)"
job=$(sed -n 's/^salloc: Pending job allocation \([0-9]*\)$/\1/p' err)
[[ -n $job && $(cat err) == "salloc: Pending job allocation $job
salloc: job $job queued and waiting for resources
salloc: job $job has been allocated resources
salloc: Granted job allocation $job
salloc: Relinquishing job allocation $job" ]] || fail "a waiting salloc said: $(cat err)"
wait_state "$job" COMPLETED
echo "ok: a waiting salloc: queued and waiting, allocated, granted, relinquished"

# scancel revokes a running allocation: its command gets SIGTERM (no terminal).
salloc -N1 sleep 300 >out 2>revoke.err &
salloc_pid=$!
bg+=("$salloc_pid")
for _ in $(seq 150); do
  job=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' revoke.err)
  [[ -n $job ]] && break
  sleep 0.1
done
[[ -n $job ]] || fail "salloc sleep 300 never got its allocation: $(cat revoke.err)"
scancel "$job"
set +e
wait "$salloc_pid"
rc=$?
set -e
(( rc == 143 )) || fail "salloc after scancel exited $rc: $(cat revoke.err)"
grep -q "^salloc: Job allocation $job has been revoked.$" revoke.err || fail "$(cat revoke.err)"
! grep -q "Relinquishing" revoke.err || fail "a revoked allocation was relinquished: $(cat revoke.err)"
wait_state "$job" CANCELLED
echo "ok: scancel revokes the allocation; the command ends by SIGTERM"

set +e
wait "$limit_pid"
rc=$?
set -e
limit_job=$(squeue -h -t all -n limited -o '%i')
(( rc == 143 )) || fail "salloc -t 1 sleep 300 exited $rc: $(cat limit.err)"
grep -q "^salloc: Job $limit_job has exceeded its time limit and its allocation has been revoked.$" \
  limit.err || fail "salloc -t 1 said: $(cat limit.err)"
wait_state "$limit_job" TIMEOUT
echo "ok: at its time limit the allocation is revoked; the command gets SIGTERM; TIMEOUT"

set +e
salloc --label true 2>err
rc=$?
set -e
(( rc != 0 )) && grep -q "^salloc: error: --label is an option of srun's" err || fail "$rc: $(cat err)"
echo "ok: srun's task options are refused by salloc"
echo "PASS"
