#!/usr/bin/env bash
# Job steps inside an allocation, on `loom cluster up` (2 GPU + 2 CPU nodes), as a user runs
# them from a batch script: srun -l over 2 nodes x 4 tasks with block and cyclic
# distribution (each task's SLURM_PROCID, SLURM_NODEID, SLURM_LOCALID and the step's
# variables), step ids 0, 1, 2 in `scontrol show step`, a failing step that does not end the
# job, the PyTorch recipe (MASTER_ADDR from `scontrol show hostnames`, --gpu-bind=closest
# --cpu-bind=cores), each task's CPUs and GPUs on the DGX-like node, sstat, --exclusive steps waiting for CPUs, `squeue -s` and `scancel JOB.STEP`.
#
#   tests/e2e/steps.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: steps.sh BUILD_BIN_DIR}" && pwd)
dir=$(mktemp -d /tmp/loom-steps.XXXXXX)
work="$dir/work"
cleanup() {
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

state() { squeue -h -j "$1" -t all -o '%T'; }
wait_state() {  # job state [tries of 0.1 s]
  for _ in $(seq "${3:-150}"); do
    [[ $(state "$1") == "$2" ]] && return 0
    sleep 0.1
  done
  fail "job $1 is $(state "$1"), not $2: $(cat slurm-"$1".out 2>/dev/null)"
}

# 2 nodes x 4 tasks: three steps, the last one failing; the script goes on after it.
cat >layout.sh <<'EOF'
#!/bin/sh
#SBATCH -N2 --ntasks-per-node=4
srun -l sh -c 'echo $SLURM_PROCID $SLURM_NODEID $SLURM_LOCALID $SLURM_STEP_ID $SLURMD_NODENAME' >block.txt
srun -l --distribution=cyclic sh -c 'echo $SLURM_PROCID $SLURM_NODEID $SLURM_LOCALID $SLURM_STEP_ID $SLURMD_NODENAME' >cyclic.txt
srun -n1 sh -c 'echo $SLURM_STEP_NUM_TASKS $SLURM_STEP_NUM_NODES $SLURM_NTASKS $SLURM_NNODES $SLURM_STEP_TASKS_PER_NODE $SLURM_STEPID; exit 3' >fail.txt 2>fail.err
echo "after the failed step: $?"
srun sh -c 'echo $SLURM_STEP_NUM_TASKS $SLURM_NTASKS $SLURM_NPROCS $SLURM_TASKS_PER_NODE $SLURM_STEP_NODELIST $SLURM_NODELIST $SLURM_JOB_NODELIST' | sort -u >vars.txt
EOF
job=$(sbatch --parsable layout.sh)
wait_state "$job" COMPLETED 300
nodes=$(squeue -h -j "$job" -t all -o '%N')
first=$(scontrol show hostnames "$nodes" | head -n1)
second=$(scontrol show hostnames "$nodes" | tail -n1)
expected_block="0: 0 0 0 0 $first
1: 1 0 1 0 $first
2: 2 0 2 0 $first
3: 3 0 3 0 $first
4: 4 1 0 0 $second
5: 5 1 1 0 $second
6: 6 1 2 0 $second
7: 7 1 3 0 $second"
[[ $(sort block.txt) == "$expected_block" ]] || fail "block step printed: $(cat block.txt)"
echo "ok: block: tasks 0-3 on $first, 4-7 on $second, each its PROCID, NODEID, LOCALID"
expected_cyclic="0: 0 0 0 1 $first
1: 1 1 0 1 $second
2: 2 0 1 1 $first
3: 3 1 1 1 $second
4: 4 0 2 1 $first
5: 5 1 2 1 $second
6: 6 0 3 1 $first
7: 7 1 3 1 $second"
[[ $(sort cyclic.txt) == "$expected_cyclic" ]] || fail "cyclic step printed: $(cat cyclic.txt)"
echo "ok: cyclic: even tasks on $first, odd on $second, step id 1"
[[ $(cat fail.txt) == "1 1 1 1 1 2" ]] || fail "the one-task step saw: $(cat fail.txt)"
grep -Eq "^srun: error: $first: task 0: Exited with exit code 3\$" fail.err || fail "$(cat fail.err)"
grep -q '^after the failed step: 3$' "slurm-$job.out" || fail "script said: $(cat "slurm-$job.out")"
[[ $(cat vars.txt) == "8 8 8 4(x2) $nodes $nodes $nodes" ]] ||
  fail "step variables: $(cat vars.txt)"
echo "ok: a failed step (exit 3) leaves the job running; the job ends COMPLETED"

show=$(scontrol show step "$job.0")
grep -q "^StepId=$job.0 UserId=$(id -u) StartTime=" <<<"$show" || fail "show step: $show"
grep -qF "   State=COMPLETED Partition=batch NodeList=$nodes" <<<"$show" || fail "$show"
grep -q "^   Nodes=2 CPUs=8 Tasks=8 Name=sh Network=(null)$" <<<"$show" || fail "$show"
grep -q "Dist=Block$" <<<"$show" || fail "$show"
grep -q "Dist=Cyclic$" <<<"$(scontrol show step "$job.1")" || fail "$(scontrol show step "$job.1")"
grep -q "State=FAILED Partition=batch NodeList=$first$" <<<"$(scontrol show step "$job.2")" ||
  fail "$(scontrol show step "$job.2")"
grep -q "ExitCode=3:0$" <<<"$(scontrol show step "$job.2")" || fail "$(scontrol show step "$job.2")"
[[ $(scontrol -o show step "$job" | cut -d' ' -f1) == "StepId=$job.0
StepId=$job.1
StepId=$job.2
StepId=$job.3" ]] || fail "steps of $job: $(scontrol -o show step "$job")"
echo "ok: scontrol show step: ids 0, 1, 2, 3 with their states, nodes, tasks and exit codes"

# The PyTorch recipe, unchanged, on the GPU nodes.
cat >ddp.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=ddp-train
#SBATCH --nodes=2 --ntasks-per-node=2 --gpus-per-node=2
#SBATCH --partition=batch --time=00:05:00

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_NODELIST" | head -n1)
export MASTER_PORT=29500
export WORLD_SIZE=$(( SLURM_NNODES * SLURM_NTASKS_PER_NODE ))

srun --gpu-bind=closest --cpu-bind=cores \
     sh -c 'echo rank=$SLURM_PROCID world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT gpus=$CUDA_VISIBLE_DEVICES' >ddp.txt
EOF
job=$(sbatch --parsable -C gpu ddp.sh)
wait_state "$job" COMPLETED 300
first=$(scontrol show hostnames "$(squeue -h -j "$job" -t all -o '%N')" | head -n1)
[[ $(sort ddp.txt) == "rank=0 world=4 master=$first:29500 gpus=0,1
rank=1 world=4 master=$first:29500 gpus=0,1
rank=2 world=4 master=$first:29500 gpus=0,1
rank=3 world=4 master=$first:29500 gpus=0,1" ]] || fail "the recipe's step printed: $(cat ddp.txt)"
grep -q "CpuBind=cores TresBind=gpu:closest" <<<"$(scontrol show step "$job.0")" ||
  fail "$(scontrol show step "$job.0")"
echo "ok: the PyTorch recipe runs unchanged: 4 ranks, MASTER_ADDR=$first"

# Binding on the DGX-like node (2 sockets of 16 cores; GPUs 0-3 on socket 0's NUMA node,
# 4-7 on socket 1's): tasks alternate sockets, each on a core of its own and a GPU beside it.
cat >bind.sh <<'EOF'
#!/bin/sh
#SBATCH -N1 --exclusive --gpus-per-node=8
srun -n8 --gpus-per-task=1 --gpu-bind=closest --cpu-bind=verbose,cores \
     sh -c 'echo $SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES mask=$SLURM_CPU_BIND_LIST' >bind.txt 2>bind.err
srun -n2 --cpu-bind=sockets --gpu-bind=closest sh -c 'echo $SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES' >sockets.txt
srun -n4 --gpu-bind=per_task:2 sh -c 'echo $SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES' >per_task.txt
EOF
job=$(sbatch --parsable -C gpu bind.sh)
wait_state "$job" COMPLETED 300
masks="0x1,0x10000,0x2,0x20000,0x4,0x40000,0x8,0x80000"
[[ $(sort bind.txt) == "0 gpus=0 mask=$masks
1 gpus=4 mask=$masks
2 gpus=1 mask=$masks
3 gpus=5 mask=$masks
4 gpus=2 mask=$masks
5 gpus=6 mask=$masks
6 gpus=3 mask=$masks
7 gpus=7 mask=$masks" ]] || fail "--gpu-bind=closest --gpus-per-task=1 printed: $(cat bind.txt)"
grep -Eq '^cpu-bind-cores=MASK - gpu0[12], task  1  1 \[[0-9]+\]: mask 0x10000 set$' bind.err ||
  fail "--cpu-bind=verbose printed: $(cat bind.err)"
[[ $(sort sockets.txt) == "0 gpus=0,1,2,3
1 gpus=4,5,6,7" ]] || fail "--cpu-bind=sockets --gpu-bind=closest printed: $(cat sockets.txt)"
[[ $(sort per_task.txt) == "0 gpus=0,1
1 gpus=2,3
2 gpus=4,5
3 gpus=6,7" ]] || fail "--gpu-bind=per_task:2 printed: $(cat per_task.txt)"
echo "ok: --cpu-bind=cores/sockets and --gpu-bind=closest follow the node's sockets and GPUs"

# The same binding for srun outside an allocation (the job's only step), and -m cyclic there.
srun -N1 -n8 -C gpu --exclusive --gpus-per-task=1 --gpu-bind=closest --cpu-bind=cores \
     sh -c 'echo $SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES mask=$SLURM_CPU_BIND_LIST' >alone.txt
[[ $(sort alone.txt) == "$(sort bind.txt)" ]] || fail "srun outside an allocation bound: $(cat alone.txt)"
srun -N2 -n4 -m cyclic sh -c 'echo $SLURM_PROCID node=$SLURM_NODEID' >cyclic-alone.txt
[[ $(sort cyclic-alone.txt) == "0 node=0
1 node=1
2 node=0
3 node=1" ]] || fail "srun -m cyclic outside an allocation: $(cat cyclic-alone.txt)"
echo "ok: srun outside an allocation binds and distributes as a step inside one does"

# sstat: a running step's tasks as the nodes see them now (4 tasks, 2 per node, each holding
# 40 MiB), and the batch script with -a.
cat >"$work/hold.py" <<'EOF'
import time
x = bytearray(40 << 20)
x[::4096] = b"x" * len(x[::4096])
time.sleep(8)
EOF
job=$(sbatch --parsable -N2 --ntasks-per-node=2 --wrap "srun python3 $work/hold.py")
# Once every task has touched its memory, each one's RSS is over 40 MiB.
for _ in $(seq 100); do
  line=$(sstat -j "$job" -n -P --format=JobID,NTasks,MaxRSS,AveRSS,MaxRSSNode,MaxRSSTask 2>/dev/null || true)
  [[ "$line" =~ ^$job\.0\|4\|([0-9]+)K\|([0-9]+)K\|(gpu01|gpu02|cpu01|cpu02)\|[0-3]$ ]] &&
    (( BASH_REMATCH[2] >= 40960 )) && break
  sleep 0.1
done
[[ "$line" =~ ^$job\.0\|4\|([0-9]+)K\|([0-9]+)K\|(gpu01|gpu02|cpu01|cpu02)\|[0-3]$ ]] || fail "sstat printed: $line"
(( BASH_REMATCH[1] >= 40960 && BASH_REMATCH[2] >= 40960 )) || fail "sstat's RSS is below the 40 MiB each task holds: $line"
sstat -j "$job" -a -n -P --format=JobID,NTasks | grep -q "^$job.batch|1$" || fail "sstat -a: $(sstat -j "$job" -a -P)"
sstat -j "$job" | head -1 | grep -q "^ *JobID  MaxVMSize" || fail "sstat's header: $(sstat -j "$job" | head -1)"
wait_state "$job" COMPLETED 300
sstat -j "$job" 2>err && fail "sstat of an ended job"
grep -q "couldn't get steps for job $job: Job is not running" err || fail "sstat said: $(cat err)"
echo "ok: sstat shows a running step's tasks (RSS, node, task) and the batch step with -a"

# --exclusive steps: the second waits for the CPUs the first holds, as Slurm says.
cat >exclusive.sh <<'EOF'
#!/bin/sh
#SBATCH -N1 -n2
srun --exclusive -n2 sleep 3 &
sleep 1
srun --exclusive -n1 hostname >second.txt 2>second.err
wait
srun -K -n2 sh -c 'if [ "$SLURM_PROCID" = 1 ]; then exit 4; fi; sleep 60' 2>kill.err
echo "kill-on-bad-exit: $?"
EOF
job=$(sbatch --parsable exclusive.sh)
wait_state "$job" COMPLETED 300
[[ $(cat second.err) == "srun: Job step creation temporarily disabled, retrying (Requested nodes are busy)
srun: Step created for job $job" ]] || fail "the waiting step said: $(cat second.err)"
[[ -s second.txt ]] || fail "the waiting step never ran"
echo "ok: an --exclusive step waits for CPUs another step holds"
grep -q "^kill-on-bad-exit: 4$" "slurm-$job.out" || fail "srun -K: $(cat "slurm-$job.out" kill.err)"
grep -Eq "^srun: error: [a-z0-9]+: task 1: Exited with exit code 4$" kill.err || fail "$(cat kill.err)"
grep -q "^srun: Terminating StepId=$job.2$" kill.err || fail "srun -K said: $(cat kill.err)"
grep -q "State=CANCELLED" <<<"$(scontrol show step "$job.2")" || fail "$(scontrol show step "$job.2")"
echo "ok: srun -K ends the step when a task exits non-zero (not after task 0's sleep 60)"

# squeue -s while a step runs; scancel JOB.STEP ends that step, not the job.
cat >cancel.sh <<'EOF'
#!/bin/sh
#SBATCH -N1
srun -J napper sleep 120
echo "step ended: $?"
EOF
job=$(sbatch --parsable cancel.sh)
for _ in $(seq 150); do
  steps=$(squeue -s -h -j "$job")
  [[ -n $steps ]] && break
  sleep 0.1
done
[[ $steps =~ ^\ +$job\.0\ +napper\ +batch\ +$(id -un | cut -c1-8)\ +[0-9:]+\ [a-z0-9]+$ ]] ||
  fail "squeue -s: '$steps'"
[[ $(squeue -s | head -1) =~ ^\ +STEPID\ +NAME\ PARTITION\ +USER\ +TIME\ NODELIST$ ]] ||
  fail "squeue -s header: $(squeue -s | head -1)"
echo "ok: squeue -s shows the running step: $steps"
scancel "$job.0"
wait_state "$job" COMPLETED 300
grep -q "State=CANCELLED" <<<"$(scontrol show step "$job.0")" || fail "$(scontrol show step "$job.0")"
grep -q "^step ended: " "slurm-$job.out" || fail "script said: $(cat "slurm-$job.out")"
echo "ok: scancel $job.0 ended the step; the job went on to COMPLETED"

# Cancelling the job ends its steps.
job=$(sbatch --parsable cancel.sh)
for _ in $(seq 150); do
  [[ -n $(squeue -s -h -j "$job") ]] && break
  sleep 0.1
done
scancel "$job"
wait_state "$job" CANCELLED 300
grep -q "State=CANCELLED" <<<"$(scontrol show step "$job.0")" || fail "$(scontrol show step "$job.0")"
echo "ok: scancel $job ends its running step"

# Refusals in Slurm's words.
set +e
SLURM_JOB_ID=999999 srun true 2>err
rc=$?
set -e
(( rc == 1 )) && [[ $(cat err) == "srun: error: Unable to create step for job 999999: Invalid job id specified" ]] ||
  fail "$rc: $(cat err)"
set +e
srun --jobid="$job" true 2>err
rc=$?
set -e
(( rc == 1 )) && [[ $(cat err) == "srun: error: Unable to create step for job $job: Job/step already completing or completed" ]] ||
  fail "$rc: $(cat err)"
set +e
SLURM_JOB_ID=1 srun --cpu-bind=corez true 2>err
rc=$?
set -e
(( rc != 0 )) && [[ $(cat err) == 'srun: error: Invalid --cpu-bind argument: corez ('* ]] ||
  fail "$rc: $(cat err)"
echo "ok: unknown and ended jobs, bad --cpu-bind refused"

# TreeWidth=2: a step on all four nodes goes out to two of them, which pass it on to the
# other two. Every task runs; then, with cpu02's daemon gone, its launch is reported undelivered
# by the node that was to pass it on, and the step fails.
echo "TreeWidth=2" >>"$SLURM_CONF"
scontrol reconfigure || fail "reconfigure with TreeWidth=2"
cat >wide.sh <<'EOF'
#!/bin/sh
#SBATCH -N4 --ntasks-per-node=1
srun sh -c 'echo $SLURM_PROCID $SLURMD_NODENAME' >wide.txt
EOF
job=$(sbatch --parsable wide.sh)
wait_state "$job" COMPLETED 300
[[ $(sort wide.txt | awk '{print $2}' | sort | tr '\n' ' ') == "cpu01 cpu02 gpu01 gpu02 " ]] ||
  fail "TreeWidth=2 step printed: $(cat wide.txt)"
cpu02=$(awk '$1 == "loomd:cpu02" {print $2}' "$dir/cluster/run/pids")
cat >lost.sh <<'EOF'
#!/bin/sh
#SBATCH -N4 --ntasks-per-node=1
while [ ! -e go ]; do sleep 0.1; done
srun sh -c 'echo $SLURM_PROCID' >lost.txt 2>lost.err
echo "srun exit $?"
EOF
job=$(sbatch --parsable lost.sh)
wait_state "$job" RUNNING
kill -9 "$cpu02"
touch go
for _ in $(seq 100); do grep -q "srun exit" "slurm-$job.out" 2>/dev/null && break; sleep 0.1; done
grep -q "srun exit [1-9]" "slurm-$job.out" || fail "srun with a node gone: $(cat "slurm-$job.out" lost.err)"
grep -Eq "^srun: error: Task launch for StepId=$job\.0 failed on node cpu02: launch not delivered to cpu02 " lost.err ||
  fail "srun said: $(cat lost.err)"
grep -Eq "JobId=$job launch on cpu02 failed: launch not delivered to cpu02 \(127\.0\.0\.1:[0-9]+\)" \
  "$dir/cluster/log/loomctld.log" || fail "controller log: $(grep "JobId=$job" "$dir/cluster/log/loomctld.log")"
echo "ok: TreeWidth=2 fans a 4-node step out through the nodes; an undelivered launch is reported"
echo "PASS"
