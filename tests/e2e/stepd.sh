#!/usr/bin/env bash
# Batch jobs under loom-stepd, confined by the real cgroup v1 controllers per cgroup.conf, on
# loopback: a memory hog with --mem=64M ends OUT_OF_MEMORY (ExitCode 0:125) while its
# neighbour on the node completes; a job given 2 of the node's 4 GPUs (stand-in device files
# named by gres.conf File=) opens its own and is refused the others; a job's CPU affinity is
# exactly its allocated CPUs; loomd killed with -9 and restarted while a job runs: the job
# completes with its whole output and the node never goes DOWN, and so do srun's steps (each
# under a supervisor of its own); srun's steps inside a job are confined as the job is; a
# plain user's job writes files the user owns; each job's cgroup is gone once it ends. Every process is started here
# and stopped by its PID.
#
#   tests/e2e/stepd.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: stepd.sh BUILD_BIN_DIR}" && pwd)
cg=/sys/fs/cgroup
if [[ $EUID != 0 ]] || ! [[ -w $cg/memory/cgroup.procs && -w $cg/cpuset/cgroup.procs && -w $cg/devices/cgroup.procs ]]; then
  echo "skipped: needs root and writable cgroup v1 memory, cpuset and devices hierarchies"
  exit 0
fi
dir=${LOOM_E2E_DIR:-$(mktemp -d /tmp/loom-stepd.XXXXXX)}
chmod 755 "$dir"
node=sd$$  # cgroups live under loom/<node>: a name no other test on this host uses
pids=()
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cleanup() {
  local keep=${LOOM_KEEP_TEST_DIRS:-0}
  LOOM_KEEP_TEST_DIRS=1 stop_all
  sleep 0.5
  for h in memory cpuset devices freezer cpuacct; do
    rmdir "$cg/$h/loom/$node"/job_*/step_* "$cg/$h/loom/$node"/job_* "$cg/$h/loom/$node" 2>/dev/null || true
  done
  if [[ "$keep" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT

read -r cport nport < <(free_ports 2)

mkdir -p "$dir/state" "$dir/spool" "$dir/work" "$dir/dev"
chmod 777 "$dir/work"
start_munged

# Stand-in GPUs: device files with a driver behind them, so that opening an allowed one
# works (/dev/full, /dev/random, /dev/urandom, /dev/kmsg numbers); nothing else uses them.
i=0
for numbers in "1 7" "1 8" "1 9" "1 11"; do
  mknod -m 0666 "$dir/dev/gpu$i" c $numbers
  i=$((i + 1))
done
cpus=$(nproc)
(( cpus >= 2 )) || { echo "skipped: needs 2 CPUs"; exit 0; }

{ conf_header stepd "$cport"; cat <<CONF; } >"$dir/slurm.conf"
SlurmdTimeout=20
KillWait=2
MinJobAge=300
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 Port=$nport CPUs=2 RealMemory=2000 Gres=gpu:4
PartitionName=debug Nodes=$node Default=YES MaxTime=01:00:00 DefaultTime=00:10:00
CONF
cat >"$dir/gres.conf" <<CONF
NodeName=$node Name=gpu File=$dir/dev/gpu[0-3]
CONF
cat >"$dir/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
ConstrainCores=yes
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedSwapSpace=0
ConstrainDevices=yes
CONF
export SLURM_CONF="$dir/slurm.conf"
for _ in $(seq 50); do [[ -S "$dir/munge/munge.socket" ]] && break; sleep 0.1; done

"$bin/loomctld" -D >"$dir/loomctld.log" 2>&1 &
pids+=($!)
start_loomd() {
  "$bin/loomd" -D -N "$node" --spool "$dir/spool/$node" >>"$dir/loomd.log" 2>&1 &
  loomd=$!
  pids+=($loomd)
}
start_loomd
for _ in $(seq 100); do
  out=$("$bin/sinfo" -h -o '%T %D' 2>/dev/null || true)
  [[ "$out" == "idle 1" ]] && break
  sleep 0.1
done
[[ "$out" == "idle 1" ]] || fail "node did not come up: '$out'"

state() { "$bin/squeue" -h -j "$1" -t all -o '%T' 2>/dev/null || true; }
wait_running() {
  for _ in $(seq 100); do [[ $(state "$1") == RUNNING ]] && return; sleep 0.1; done
  fail "job $1 is $(state "$1"), not RUNNING"
}
wait_end() {  # prints the job's final state
  local st
  for _ in $(seq 300); do
    st=$(state "$1")
    [[ -n "$st" && "$st" != PENDING && "$st" != RUNNING && "$st" != COMPLETING ]] && break
    sleep 0.1
  done
  echo "$st"
}
cgroup_gone() {
  for h in memory cpuset devices; do
    [[ -e "$cg/$h/loom/$node/job_$1" ]] && fail "job $1's $h cgroup is still there after its end"
  done
  return 0
}

cd "$dir/work"
# (a) A memory hog under --mem=64M ends OUT_OF_MEMORY; its neighbour on the node completes.
neighbour=$("$bin/sbatch" --parsable -c 1 --mem=64M -o neighbour.out \
  --wrap 'sleep 4; echo neighbour done')
wait_running "$neighbour"
hog=$("$bin/sbatch" --parsable -c 1 --mem=64M -o hog.out \
  --wrap 'python3 -c "b = bytearray(512 << 20); b[::4096] = b\"x\" * len(b[::4096]); print(\"survived\")"')
# RUNNING is the controller's word; the node makes the cgroup a moment later.
for _ in $(seq 50); do [[ -d "$cg/memory/loom/$node/job_$neighbour/step_batch" ]] && break; sleep 0.1; done
[[ -d "$cg/memory/loom/$node/job_$neighbour/step_batch" ]] || fail "no memory cgroup for job $neighbour"
limit=$(cat "$cg/memory/loom/$node/job_$neighbour/step_batch/memory.limit_in_bytes")
[[ "$limit" == $((64 << 20)) ]] || fail "job $neighbour's memory limit is $limit"
st=$(wait_end "$hog")
[[ "$st" == OUT_OF_MEMORY ]] || fail "memory hog $hog ended $st: $(cat hog.out)"
"$bin/scontrol" show job "$hog" | grep -q 'ExitCode=0:125' || fail "hog: $("$bin/scontrol" show job "$hog" | grep -o 'ExitCode=[^ ]*')"
grep -q survived hog.out && fail "the hog was not stopped: $(cat hog.out)"
[[ $(state "$neighbour") == RUNNING ]] || fail "neighbour $neighbour is $(state "$neighbour") after the OOM"
st=$(wait_end "$neighbour")
[[ "$st" == COMPLETED ]] || fail "neighbour $neighbour ended $st"
grep -q '^neighbour done$' neighbour.out || fail "neighbour output: $(cat neighbour.out)"
cgroup_gone "$hog"
cgroup_gone "$neighbour"
echo "ok: --mem=64M hog ends OUT_OF_MEMORY (0:125), its neighbour completes"

# (b) Given 2 of the node's 4 GPUs: opens its own, "Operation not permitted" on the others.
gpu=$("$bin/sbatch" --parsable --gres=gpu:2 -c 1 --mem=32M -o gpu.out --wrap "
echo \"gpus \$SLURM_JOB_GPUS\"
for i in 0 1 2 3; do
  if (exec 3<$dir/dev/gpu\$i) 2>gpu\$i.err; then echo \"gpu\$i open\"; else echo \"gpu\$i \$(cat gpu\$i.err)\"; fi
done")
st=$(wait_end "$gpu")
[[ "$st" == COMPLETED ]] || fail "GPU job $gpu ended $st: $(cat gpu.out)"
given=$(sed -n 's/^gpus //p' gpu.out)
[[ "$given" =~ ^[0-3],[0-3]$ ]] || fail "GPU job $gpu got '$given': $(cat gpu.out)"
for i in 0 1 2 3; do
  if [[ ",$given," == *",$i,"* ]]; then
    grep -q "^gpu$i open$" gpu.out || fail "GPU $i given but not opened: $(cat gpu.out)"
  else
    grep -q "^gpu$i .*Operation not permitted$" gpu.out || fail "GPU $i not given but: $(cat gpu.out)"
  fi
done
(exec 3<"$dir/dev/gpu3") || fail "outside the job the stand-in GPU cannot be opened"
cgroup_gone "$gpu"
echo "ok: a job with GPUs $given opens them and is refused the others"

# (c) CPU affinity is exactly the allocated CPUs: two 1-CPU jobs side by side, a 2-CPU job.
one=$("$bin/sbatch" --parsable -c 1 --mem=16M -o one.out --wrap 'grep Cpus_allowed_list /proc/self/status; sleep 3')
two=$("$bin/sbatch" --parsable -c 1 --mem=16M -o two.out --wrap 'grep Cpus_allowed_list /proc/self/status; sleep 3')
wait_running "$one"
wait_running "$two"
ids_one=$("$bin/scontrol" show job -d "$one" | sed -n 's/.* CPU_IDs=\([^ ]*\) .*/\1/p')
ids_two=$("$bin/scontrol" show job -d "$two" | sed -n 's/.* CPU_IDs=\([^ ]*\) .*/\1/p')
[[ -n "$ids_one" && -n "$ids_two" && "$ids_one" != "$ids_two" ]] || fail "CPU_IDs '$ids_one' and '$ids_two'"
[[ $(wait_end "$one") == COMPLETED && $(wait_end "$two") == COMPLETED ]] || fail "1-CPU jobs did not complete"
grep -q "^Cpus_allowed_list:[[:space:]]*$ids_one$" one.out || fail "job $one (CPU_IDs=$ids_one): $(cat one.out)"
grep -q "^Cpus_allowed_list:[[:space:]]*$ids_two$" two.out || fail "job $two (CPU_IDs=$ids_two): $(cat two.out)"
both=$("$bin/sbatch" --parsable -c 2 --mem=16M -o both.out --wrap 'grep Cpus_allowed_list /proc/self/status')
[[ $(wait_end "$both") == COMPLETED ]] || fail "2-CPU job $both did not complete"
grep -q "^Cpus_allowed_list:[[:space:]]*0-1$" both.out || fail "job $both: $(cat both.out)"
echo "ok: CPU affinity is the allocation ($ids_one, $ids_two, 0-1)"

# (f) srun's steps are confined as their job is: a step's task runs on the job's CPU only,
# and a step that outgrows the job's memory ends OUT_OF_MEMORY while the job goes on.
stepjob=$("$bin/sbatch" --parsable -c 1 --mem=64M -o steps.out --wrap "
$bin/srun grep Cpus_allowed_list /proc/self/status
$bin/srun python3 -c 'b = bytearray(512 << 20); b[::4096] = b\"x\" * len(b[::4096]); print(\"survived\")'
echo \"after the hog: \$?\"")
st=$(wait_end "$stepjob")
[[ "$st" == COMPLETED ]] || fail "job $stepjob with a hogging step ended $st: $(cat steps.out)"
grep -Eq "^Cpus_allowed_list:[[:space:]]*[01]$" steps.out || fail "step 0 of job $stepjob: $(cat steps.out)"
grep -q survived steps.out && fail "the step's hog was not stopped: $(cat steps.out)"
grep -q "^after the hog: [1-9]" steps.out || fail "srun's status after the hog: $(cat steps.out)"
"$bin/scontrol" show step "$stepjob.1" | grep -q "State=OUT_OF_MEMORY" ||
  fail "step $stepjob.1: $("$bin/scontrol" show step "$stepjob.1")"
cgroup_gone "$stepjob"
echo "ok: srun steps run in the job's CPU and memory; a step over its memory ends OUT_OF_MEMORY"

# (d) loomd killed with -9 while a job runs, then restarted: the job completes, whole output,
# and the controller never marks the node DOWN nor fails the job.
long=$("$bin/sbatch" --parsable -c 1 --mem=16M -o long.out \
  --wrap 'for i in $(seq 1 12); do echo "line $i"; sleep 0.5; done')
wait_running "$long"
for _ in $(seq 50); do [[ -s long.out ]] && break; sleep 0.1; done
kill -9 "$loomd"
wait "$loomd" 2>/dev/null || true
# Two seconds of loomd's absence, however slow the commands run on a loaded machine: the
# test is about a restart well inside SlurmdTimeout, not about the timeout itself.
seen=""
gone_until=$((SECONDS + 2))
while ((SECONDS < gone_until)); do seen+=" $("$bin/sinfo" -h -N -o '%T') $(state "$long")"; sleep 0.1; done
start_loomd
for _ in $(seq 150); do
  st=$(state "$long")
  seen+=" $("$bin/sinfo" -h -N -o '%T') $st"
  [[ "$st" != RUNNING && "$st" != COMPLETING ]] && break
  sleep 0.1
done
[[ "$st" == COMPLETED ]] || fail "job $long ended '$st' after loomd's restart (seen:$seen)"
[[ "$seen" != *down* && "$seen" != *FAIL* ]] || fail "node or job failed meanwhile:$seen"
[[ $(seq 1 12 | sed 's/^/line /') == "$(cat long.out)" ]] || fail "output of job $long: $(cat long.out)"
grep -q "job $long: supervisor found from an earlier run" "$dir/loomd.log" || fail "loomd did not adopt job $long"
cgroup_gone "$long"
echo "ok: kill -9 of loomd mid-job: job COMPLETED, output whole, node never DOWN"

# (d2) The same for srun's steps, each under a supervisor of its own: a job srun submitted
# and a step inside a batch job go on through a kill -9 and restart of loomd; srun gets all
# of their output and their exit, both jobs complete, and the steps' cgroups go.
"$bin/srun" -c 1 --mem=16M bash -c 'for i in $(seq 1 10); do echo "srun line $i"; sleep 0.4; done' \
  >srun-long.out 2>&1 &
srun_pid=$!
pids+=($srun_pid)
inner=$("$bin/sbatch" --parsable -c 1 --mem=32M -o inner.out \
  --wrap "$bin/srun"' bash -c "for i in \$(seq 1 10); do echo step line \$i; sleep 0.4; done"; echo "srun: $?"')
wait_running "$inner"
for _ in $(seq 100); do [[ -s srun-long.out && -s inner.out ]] && break; sleep 0.1; done
outer=$("$bin/squeue" -h -t running -o '%i %j' | awk '$2 == "bash" {print $1}')
[[ -n "$outer" ]] || fail "srun's job is not running: $("$bin/squeue")"
kill -9 "$loomd"
wait "$loomd" 2>/dev/null || true
sleep 1
start_loomd
wait "$srun_pid" || fail "srun exited $? after loomd's restart: $(cat srun-long.out)"
[[ $(seq 1 10 | sed 's/^/srun line /') == "$(cat srun-long.out)" ]] || fail "srun's output: $(cat srun-long.out)"
[[ $(wait_end "$inner") == COMPLETED ]] || fail "job $inner: $(state "$inner") $(cat inner.out)"
[[ $( (seq 1 10 | sed 's/^/step line /'; echo "srun: 0") ) == "$(cat inner.out)" ]] ||
  fail "output of job $inner: $(cat inner.out)"
[[ $(wait_end "$outer") == COMPLETED ]] || fail "srun's job $outer: $(state "$outer")"
grep -q "job $outer's tasks: supervisor found from an earlier run" "$dir/loomd.log" ||
  fail "loomd did not adopt job $outer's tasks"
grep -q "step $inner.0: supervisor found from an earlier run" "$dir/loomd.log" ||
  fail "loomd did not adopt step $inner.0"
"$bin/scontrol" show step "$inner.0" 2>/dev/null | grep -q "State=RUNNING" &&
  fail "step $inner.0 still shown running"
cgroup_gone "$inner"
cgroup_gone "$outer"
echo "ok: kill -9 of loomd mid-step: srun's steps COMPLETED with their whole output"

# (e) A plain user's job runs as that user: the files it writes are the user's.
getent passwd loomtest1 >/dev/null || useradd -M -s /usr/sbin/nologin loomtest1
user_job=$(su -s /bin/sh loomtest1 -c "cd $dir/work && SLURM_CONF=$SLURM_CONF $bin/sbatch --parsable --mem=16M -o user.out --wrap 'touch user-file; id -un'")
[[ $(wait_end "$user_job") == COMPLETED ]] || fail "user job $user_job: $(state "$user_job") $(cat user.out 2>&1)"
[[ $(stat -c %U user-file) == loomtest1 && $(stat -c %U user.out) == loomtest1 ]] ||
  fail "owners: $(stat -c '%n %U' user-file user.out)"
grep -qx loomtest1 user.out || fail "user job ran as $(cat user.out)"
echo "ok: a user's job writes files the user owns"

# Nothing of the jobs is left: no supervisor directory, no cgroup.
sleep 1
left=$(ls "$dir/spool/$node/stepd" 2>/dev/null | grep -vE "\.(hardware|relay)$" || true)
[[ -z "$left" ]] || fail "supervisor directories left: $left"
ls "$cg/memory/loom/$node" | grep -q '^job_' && fail "cgroups left: $(ls "$cg/memory/loom/$node")"
echo "PASS"
