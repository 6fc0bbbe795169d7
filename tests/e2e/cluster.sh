#!/usr/bin/env bash
# `loom cluster up` as a new user runs it, then the example job scripts: hello, an array
# with %2 that never runs more than two tasks at once, an afterok chain whose afternotok leg
# never runs, a GPU job that sees its CUDA_VISIBLE_DEVICES; a time limit ends as TIMEOUT;
# `loom cluster down` leaves none of the processes it started, nor a running job; `up
# --config` carries cgroup.conf (and confines by it) and the other files beside slurm.conf.
#
#   tests/e2e/cluster.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: cluster.sh BUILD_BIN_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/loom-cluster.XXXXXX)
work="$dir/work"
cleanup() {
  "$bin/loom" cluster down --dir "$dir/cluster" >/dev/null 2>&1 || true
  "$bin/loom" cluster down --dir "$dir/demo" >/dev/null 2>&1 || true
  "$bin/loom" cluster down --dir "$dir/carried" >/dev/null 2>&1 || true
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL: $*" >&2; show_logs "$dir"/cluster/log/*.log; exit 1; }

out=$("$bin/loom" cluster up --dir "$dir/cluster" --nodes 4)
export_line=$(grep '^export SLURM_CONF=' <<<"$out") || fail "up printed: $out"
eval "$export_line"
export PATH="$bin:$PATH"
[[ $(sinfo -h -o '%D %T') == "4 idle" ]] || fail "sinfo: $(sinfo)"
"$bin/loom" cluster status --dir "$dir/cluster" >/dev/null || fail "status: $("$bin/loom" cluster status --dir "$dir/cluster")"

mkdir -p "$work"
cp "$src"/examples/jobs/*.sh "$work/"
cd "$work"
hello=$(sbatch --parsable hello.sh)
array=$(sbatch --parsable array.sh)
chain=$(./chain.sh)
gpu=$(sbatch --parsable gpu.sh)
limit=$(sbatch --parsable -t 1 --wrap 'trap "" TERM; sleep 600')  # ignores SIGTERM: needs SIGKILL


# Watch the array: never more than two tasks running.
max=0
for _ in $(seq 150); do
  n=$(squeue -h -t R -o '%i' | grep -c "^${array}_" || true)
  (( n > max )) && max=$n
  left=$(squeue -h -t PD,R -o '%i' | grep -c "^${array}_" || true)
  (( left == 0 )) && break
  sleep 0.1
done
(( max <= 2 )) || fail "array ran $max tasks at once under %2"
(( max == 2 )) || fail "array never ran two tasks at once (max $max)"
for t in 0 1 2 3 4 5 6 7; do
  grep -q "^task $t of array $array on " "array-${array}_$t.out" || fail "array task $t output"
done
echo "ok: array %2 (at most $max running)"

grep -q "^Hello from job $hello (hello) on " "hello-$hello.out" || fail "hello output"
grep -q "CUDA_VISIBLE_DEVICES=0,1$" "gpu-$gpu.out" || fail "gpu output: $(cat gpu-$gpu.out)"
echo "ok: hello and GPU job"

eval "$(tr ' ' '\n' <<<"$chain")"   # prepare=.. train=.. report=.. cleanup=..
for _ in $(seq 100); do
  [[ $(squeue -h -j "$report" -t all -o '%T') == COMPLETED ]] && break
  sleep 0.1
done
[[ $(squeue -h -j "$train" -t all -o '%T') == COMPLETED ]] || fail "train: $(squeue -t all)"
[[ $(squeue -h -j "$report" -t all -o '%T') == COMPLETED ]] || fail "report: $(squeue -t all)"
[[ $(squeue -h -j "$cleanup" -o '%T %r') == "PENDING DependencyNeverSatisfied" ]] ||
  fail "cleanup: $(squeue -h -j "$cleanup" -o '%T %r')"
echo "ok: afterok chain, afternotok never satisfied"

# The one-minute limit: SIGTERM at the limit, SIGKILL KillWait later, TIMEOUT.
for _ in $(seq 900); do
  st=$(squeue -h -j "$limit" -t all -o '%T')
  [[ "$st" == TIMEOUT ]] && break
  sleep 0.1
done
[[ "$st" == TIMEOUT ]] || fail "job $limit with -t 1 is $st"
echo "ok: time limit ends as TIMEOUT"

# A daemon that died is started again by `restart`, on its own port, with nothing else
# touched; a named one that runs is stopped and started; an unknown name is refused.
ctld_pid=$(awk '$1 == "loomctld" {print $2}' "$dir/cluster/run/pids")
node_pid=$(awk '$1 == "loomd:cpu01" {print $2}' "$dir/cluster/run/pids")
kill -9 "$node_pid"
while kill -0 "$node_pid" 2>/dev/null; do sleep 0.1; done
"$bin/loom" cluster status --dir "$dir/cluster" >/dev/null && fail "status with a dead loomd"
"$bin/loom" cluster restart --dir "$dir/cluster" >"$work/restart.out" || fail "restart: $(cat "$work/restart.out")"
grep -q "^loom cluster: loomd:cpu01 restarted" "$work/restart.out" || fail "restart said: $(cat "$work/restart.out")"
[[ $(awk '$1 == "loomctld" {print $2}' "$dir/cluster/run/pids") == "$ctld_pid" ]] || fail "restart touched loomctld"
"$bin/loom" cluster status --dir "$dir/cluster" >/dev/null || fail "status after restart: $("$bin/loom" cluster status --dir "$dir/cluster")"
"$bin/loom" cluster restart --dir "$dir/cluster" loomctld >/dev/null || fail "restart loomctld"
[[ $(awk '$1 == "loomctld" {print $2}' "$dir/cluster/run/pids") != "$ctld_pid" ]] || fail "loomctld not restarted"
if "$bin/loom" cluster restart --dir "$dir/cluster" nosuch 2>"$work/restart.err"; then fail "restart nosuch"; fi
grep -q "has no daemon 'nosuch'" "$work/restart.err" || fail "restart nosuch said: $(cat "$work/restart.err")"
# A restarted controller hears from each node at its next heartbeat (SlurmdTimeout/3: 20 s).
for _ in $(seq 300); do [[ $(sinfo -h -N -o '%N %t' | grep -c idle) == 4 ]] && break; sleep 0.1; done
[[ $(sinfo -h -N -o '%N %t' | grep -c idle) == 4 ]] || fail "nodes after restart: $(sinfo -h -N -o '%N %t')"
# The daemons `up` started hold no descriptor of its own (the pids file was one).
for p in $(awk '{print $2}' "$dir/cluster/run/pids"); do
  if ls -l "/proc/$p/fd" 2>/dev/null | grep -q "run/pids"; then fail "pid $p holds run/pids open"; fi
done
echo "ok: restart starts again a dead loomd and a named loomctld; no daemon holds run/pids"

# A job still running at `down` ends with the cluster, and so does its supervisor.
running=$(sbatch --parsable --wrap "echo \$\$ >$work/running.pid; exec sleep 600")
for _ in $(seq 100); do [[ -s "$work/running.pid" ]] && break; sleep 0.1; done
job_pid=$(cat "$work/running.pid" 2>/dev/null) || fail "job $running did not start"
stepd_pids=$(cat "$dir"/cluster/spool/*/stepd/*_job"$running"/pid | awk '{print $1}')
[[ -n "$stepd_pids" ]] || fail "no supervisor recorded for job $running"
pids=$(awk '{print $2}' "$dir/cluster/run/pids")
"$bin/loom" cluster down --dir "$dir/cluster" >/dev/null
for p in $pids $stepd_pids $job_pid; do
  if kill -0 "$p" 2>/dev/null; then fail "pid $p still runs after down"; fi
done
echo "ok: down stopped every process it started, running jobs and their supervisors too"

# `up --config` carries the files Slurm reads beside slurm.conf: with its cgroup.conf, a job
# over its --mem is confined and ends OUT_OF_MEMORY (needs root and cgroup v1's memory
# controller, as tests/e2e/stepd.sh); job_submit.lua and cli_filter.lua are carried; a
# plugstack.conf, which Loom does not act on, is carried and named in a warning.
site="$dir/site"
mkdir -p "$site"
cnode=cu$$  # cgroups live under loom/<node>: a name no other test on this host uses
cat >"$site/slurm.conf" <<CONF
ClusterName=carried
SlurmctldHost=localhost
SlurmdParameters=config_overrides
NodeName=$cnode CPUs=2 RealMemory=2000
PartitionName=debug Nodes=$cnode Default=YES MaxTime=01:00:00
CONF
printf 'CgroupPlugin=cgroup/v1\nConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=0\n' \
  >"$site/cgroup.conf"
echo 'function slurm_job_submit(job_desc, part_list, submit_uid) return slurm.SUCCESS end' \
  >"$site/job_submit.lua"
echo 'function slurm_cli_pre_submit(options, pack_offset) return slurm.SUCCESS end' \
  >"$site/cli_filter.lua"
echo 'optional /usr/lib/x86_64-linux-gnu/slurm/spank_demo.so' >"$site/plugstack.conf"
out=$("$bin/loom" cluster up --dir "$dir/carried" --config "$site/slurm.conf" 2>&1) ||
  fail "up --config with cgroup.conf: $out"
for f in cgroup.conf job_submit.lua cli_filter.lua plugstack.conf; do
  cmp -s "$site/$f" "$dir/carried/etc/$f" || fail "up did not take $f along"
done
grep -q "plugstack.conf is carried over but not acted on by Loom yet" <<<"$out" ||
  fail "no warning for plugstack.conf: $out"
! grep -q "\.lua is carried over" <<<"$out" || fail "a Lua script warned about: $out"
cg=/sys/fs/cgroup
if [[ $EUID == 0 && -w $cg/memory/cgroup.procs ]]; then
  (
    eval "$(grep '^export SLURM_CONF=' <<<"$out")"
    cd "$work"
    hog=$(sbatch --parsable --mem=64M -o hog.out \
      --wrap 'python3 -c "b = bytearray(512 << 20); b[::4096] = b\"x\" * len(b[::4096])"')
    for _ in $(seq 300); do
      st=$(squeue -h -j "$hog" -t all -o '%T' 2>/dev/null || true)
      [[ -n "$st" && "$st" != PENDING && "$st" != RUNNING && "$st" != COMPLETING ]] && break
      sleep 0.1
    done
    [[ "$st" == OUT_OF_MEMORY ]] || fail "a --mem=64M hog under the carried cgroup.conf ended $st"
  )
  echo "ok: up --config carries cgroup.conf (a job over its --mem ends OUT_OF_MEMORY), job_submit.lua, cli_filter.lua and plugstack.conf (warned)"
else
  echo "ok: up --config carries cgroup.conf, job_submit.lua, cli_filter.lua and plugstack.conf (warned); confinement not checked: needs root and cgroup v1 memory"
fi
"$bin/loom" cluster down --dir "$dir/carried" >/dev/null
for h in memory cpuset devices freezer cpuacct; do
  rmdir "$cg/$h/loom/$cnode"/job_*/step_* "$cg/$h/loom/$cnode"/job_* "$cg/$h/loom/$cnode" 2>/dev/null || true
done

# The README's main command: `loom cluster demo`, from the source tree, on a fresh directory.
cd "$src"
"$bin/loom" cluster demo --dir "$dir/demo" >"$dir/demo.out" 2>&1 || fail "demo: $(cat "$dir/demo.out")"
for want in "Submitted batch job" "CUDA_VISIBLE_DEVICES=0,1" "(DependencyNeverSatisfied)" \
            "Hello from job" "export SLURM_CONF=$dir/demo/etc/slurm.conf"; do
  grep -qF -- "$want" "$dir/demo.out" || fail "demo output lacks '$want': $(cat "$dir/demo.out")"
done
grep -q ' COMPLETED ' "$dir/demo.out" || fail "demo: no job completed: $(cat "$dir/demo.out")"
"$bin/loom" cluster down --dir "$dir/demo" >/dev/null
echo "ok: loom cluster demo"
echo "PASS"
