#!/usr/bin/env bash
# job_submit.lua on a real cluster: examples/policy/job_submit.lua routes jobs by time limit
# (debug, normal, long; longer ones refused with the script's message) and gives GPU jobs
# --gpu-bind=closest and --hint=nomultithread, which their steps then use on a node of two
# threads per core; a slow script times out without holding up the controller; a broken
# script at reconfigure leaves the last good one in force, and at a start makes the
# controller refuse submissions with the script's error until a reconfigure loads a fixed one.
# Then cli_filter.lua in sbatch: a default, a refusal, post_submit.
#
#   tests/e2e/job_submit.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: job_submit.sh BUILD_BIN_DIR}" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(mktemp -d /tmp/loom-jobsubmit.XXXXXX)
cluster="$dir/cluster"
cleanup() {
  "$bin/loom" cluster down --dir "$cluster" >/dev/null 2>&1 || true
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL: $*" >&2; show_logs "$cluster"/log/*.log; exit 1; }

site="$dir/site"
mkdir -p "$site" "$dir/work"
node=js$$
cat >"$site/slurm.conf" <<CONF
ClusterName=policy
SlurmctldHost=localhost
SlurmdParameters=config_overrides
TaskPlugin=task/affinity
GresTypes=gpu
JobSubmitPlugins=lua
LoomJobSubmitTimeout=0.5
NodeName=$node CPUs=16 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=16000 Gres=gpu:a100:4
PartitionName=normal Nodes=$node Default=YES MaxTime=2-00:00:00
PartitionName=debug Nodes=$node MaxTime=01:00:00
PartitionName=long Nodes=$node MaxTime=14-00:00:00
CONF
# GPUs 0-1 beside socket 0's cores (0-3), 2-3 beside socket 1's (4-7).
cat >"$site/gres.conf" <<CONF
AutoDetect=off
NodeName=$node Name=gpu Type=a100 File=/dev/nvidia[0-1] Cores=0-3
NodeName=$node Name=gpu Type=a100 File=/dev/nvidia[2-3] Cores=4-7
CONF
cp "$src/examples/policy/job_submit.lua" "$site/job_submit.lua"
out=$("$bin/loom" cluster up --dir "$cluster" --config "$site/slurm.conf" 2>&1) || fail "up: $out"
eval "$(grep '^export SLURM_CONF=' <<<"$out")"
export PATH="$bin:$PATH"
cd "$dir/work"

# Routing by time limit, when the job names no partition.
for t in 30 1-00:00:00 5-00:00:00; do
  job=$(sbatch --parsable -t "$t" --wrap true) || fail "sbatch -t $t"
  partitions+="$(squeue -h -j "$job" -t all -o '%P') "
done
[[ $partitions == "debug normal long " ]] || fail "-t 30, 1 day, 5 days went to: $partitions"
job=$(sbatch --parsable -p normal -t 30 --wrap true)
[[ $(squeue -h -j "$job" -t all -o '%P') == normal ]] || fail "-p normal was rerouted"
if sbatch -t 20-00:00:00 --wrap true >out 2>err; then fail "a 20-day job was accepted"; fi
[[ $(cat err) == "sbatch: error: jobs may run for 14 days at most; ask for less with --time
sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)" ]] ||
  fail "a 20-day job: $(cat err)"
echo "ok: routed by time limit to debug, normal, long; a 20-day job refused with the script's message"

# slurm_job_modify: an update to 20 days is refused with the script's message; 45 minutes is not.
held=$(sbatch --parsable -H -t 30 --wrap true)
if scontrol update JobId="$held" TimeLimit=20-00:00:00 >out 2>err; then fail "a 20-day update went through"; fi
grep -q "Requested time limit is invalid (missing or exceeds some limit); job $held may run for 14 days at most" err ||
  fail "a 20-day update: $(cat err)"
scontrol update JobId="$held" TimeLimit=45 || fail "a 45-minute update"
[[ $(squeue -h -j "$held" -o '%l') == 45:00 ]] || fail "time limit after the update: $(squeue -h -j "$held" -o '%l')"
scancel "$held"
echo "ok: slurm_job_modify refuses a 20-day update with its message and lets a 45-minute one through"

# A GPU job gets --gpu-bind=closest and --hint=nomultithread: two tasks of 4 CPUs, each on
# 4 cores of one socket (one thread of each: CPUs 0-3 and 4-7, masks 0xf and 0xf0) and the
# 2 GPUs beside them; with --hint=multithread, 2 cores' 4 threads each.
cat >gpu.sh <<'EOF'
#!/bin/sh
#SBATCH -N1 --exclusive --gpus-per-node=4 -t 10
srun -n2 -c4 sh -c 'echo $SLURM_LOCALID gpus=$CUDA_VISIBLE_DEVICES $SLURM_CPU_BIND_TYPE$SLURM_CPU_BIND_LIST' >bound.txt
srun -n2 -c4 --hint=multithread sh -c 'echo $SLURM_LOCALID $SLURM_CPU_BIND_TYPE$SLURM_CPU_BIND_LIST' >threads.txt
EOF
job=$(sbatch --parsable gpu.sh)
for _ in $(seq 300); do
  st=$(squeue -h -j "$job" -t all -o '%T')
  [[ $st == COMPLETED || $st == FAILED || $st == CANCELLED ]] && break
  sleep 0.1
done
[[ $st == COMPLETED ]] || fail "the GPU job ended $st: $(cat "slurm-$job.out")"
[[ $(sort bound.txt) == "0 gpus=0,1 mask_cpu:0xf,0xf0
1 gpus=2,3 mask_cpu:0xf,0xf0" ]] || fail "the rewritten job's step was bound: $(cat bound.txt)"
[[ $(sort threads.txt) == "0 mask_cpu:0x303,0x3030
1 mask_cpu:0x303,0x3030" ]] || fail "--hint=multithread on the step: $(cat threads.txt)"
grep -q "TresBind=gpu:closest" <<<"$(scontrol show step "$job.0")" ||
  fail "step $job.0: $(scontrol show step "$job.0")"
echo "ok: a GPU job's steps bind closest, one thread per core; a step's own --hint wins"

# A slow script: the submitter hears after the deadline; squeue answers meanwhile.
etc="$cluster/etc"
cp "$etc/job_submit.lua" good.lua
cat >"$etc/job_submit.lua" <<'EOF'
function slurm_job_submit(job_desc, part_list, submit_uid)
  if job_desc.comment == "slow" then
    local t = os.time() + 30
    while os.time() < t do end
  end
  job_desc.comment = "seen"
  return slurm.SUCCESS
end
EOF
# A 2-second deadline: squeue (and the scheduler) must not wait for the looping call.
sed -i 's/^LoomJobSubmitTimeout=.*/LoomJobSubmitTimeout=2/' "$etc/slurm.conf"
scontrol reconfigure || fail "reconfigure with the slow script"
start=$(date +%s%N)
sbatch --comment=slow --wrap true >out 2>err &
slow=$!
sleep 0.2
squeue >/dev/null || fail "squeue while a script runs"
running "$slow" || fail "squeue waited for the looping script"
if wait "$slow"; then fail "the slow call was accepted"; fi
took=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "did not answer within 2.0 s (LoomJobSubmitTimeout)" err || fail "slow script: $(cat err)"
(( took >= 2000 && took < 6000 )) || fail "the slow call took ${took} ms"
job=$(sbatch --parsable --wrap true) || fail "a submission after the slow one"
[[ $(squeue -h -j "$job" -t all -o '%k') == seen ]] || fail "the script did not see job $job"
echo "ok: a looping script times out after 2 s (the call: ${took} ms); squeue answered while it looped; the next call works"

# A broken script at reconfigure: the last good one stays in force.
printf 'function slurm_job_submit(job_desc, part_list, submit_uid)\n  return slurm.SUCCESS\nedn\n' \
  >"$etc/job_submit.lua"
scontrol reconfigure || fail "reconfigure with a broken script"
grep -q "job_submit.lua:3: .* the version loaded before stays in force" "$cluster"/log/loomctld.log ||
  fail "no error with file:line in the log"
job=$(sbatch --parsable --wrap true) || fail "submission after a broken reconfigure"
[[ $(squeue -h -j "$job" -t all -o '%k') == seen ]] || fail "the last good script is not in force"
echo "ok: a broken script at reconfigure is logged with its line; the last good one stays"

# At a start, a broken script refuses submissions until a reconfigure loads a fixed one.
"$bin/loom" cluster restart loomctld --dir "$cluster" >/dev/null || fail "restart"
wait_until "squeue >/dev/null 2>&1" 150 || fail "no controller after the restart"
if sbatch --wrap true >out 2>err; then fail "accepted with a broken script"; fi
grep -q "job_submit.lua does not load (.*job_submit.lua:3: .*); submissions are refused" err ||
  fail "refusal: $(cat err)"
cp good.lua "$etc/job_submit.lua"
scontrol reconfigure || fail "reconfigure with the fixed script"
job=$(sbatch --parsable -t 30 --wrap true) || fail "after the fix: $(cat err)"
[[ $(squeue -h -j "$job" -t all -o '%P') == debug ]] || fail "the fixed script is not in force"
echo "ok: started with a broken script, submissions are refused with its error until fixed"

# cli_filter.lua in the submitting commands: a default below the command line, a refusal
# with the script's message, and post_submit learning the job id.
echo "CliFilterPlugins=lua" >>"$etc/slurm.conf"
cat >"$etc/cli_filter.lua" <<'EOF'
function slurm_cli_setup_defaults(options, early_pass)
  options["comment"] = "from-filter"
  return slurm.SUCCESS
end
function slurm_cli_pre_submit(options, offset)
  if options["type"] == "sbatch" and options["time"] == nil then
    slurm.log_error("give every batch job a --time")
    return slurm.ERROR
  end
  return slurm.SUCCESS
end
function slurm_cli_post_submit(offset, job_id, step_id)
  local f = io.open(os.getenv("POST_FILE"), "a")
  f:write(job_id, "\n")
  f:close()
end
EOF
export POST_FILE="$dir/work/posted"
if sbatch --wrap true >out 2>err; then fail "cli_filter.lua let a job without --time through"; fi
[[ $(cat err) == "sbatch: error: give every batch job a --time
sbatch: error: cli_filter plugin terminated with error" ]] || fail "cli_filter refusal: $(cat err)"
job=$(sbatch --parsable -t 5 --wrap true) || fail "with --time: $(cat err)"
mine=$(sbatch --parsable -t 5 --comment=mine --wrap true)
[[ $(squeue -h -j "$job" -t all -o '%k') == from-filter ]] || fail "the filter's default comment"
[[ $(squeue -h -j "$mine" -t all -o '%k') == mine ]] || fail "--comment under the filter's default"
[[ $(cat "$POST_FILE") == "$job
$mine" ]] || fail "post_submit saw: $(cat "$POST_FILE")"
echo "ok: cli_filter.lua: defaults under the command line, a refusal with its message, post_submit"
