#!/usr/bin/env bash
# The job scripts of the seed articles (examples/seeds/jobs), unchanged, on the cluster
# examples/seeds/slurm.conf describes, brought up by `loom cluster up --config`:
#   - every script is accepted, held, and `scontrol show job -o` shows what it asked for
#     field by field as Slurm 22.05 shows it (tests/data/seeds/held.txt);
#   - released (one comma-separated job list), each runs on nodes of its partition and
#     ends as under Slurm: their srun/torchrun/python lines fail, llama70b's last echo
#     succeeds, hello is still sleeping; an ended job keeps its nodes and TRES;
#   - the commands the articles show (sinfo -o, sinfo -N -l, squeue --user) answer;
#   - `loom cluster down` stops exactly the processes `up` started.
#
#   tests/e2e/seeds.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: seeds.sh BUILD_BIN_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/loom-seeds.XXXXXX)
work="$dir/work"
cleanup() {
  "$bin/loom" cluster down --dir "$dir/cluster" >/dev/null 2>&1 || true
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL: $*" >&2; show_logs "$dir"/cluster/log/loomctld.log; exit 1; }

out=$("$bin/loom" cluster up --dir "$dir/cluster" --config "$src/examples/seeds/slurm.conf") ||
  fail "up: $out"
export_line=$(grep '^export SLURM_CONF=' <<<"$out") || fail "up printed: $out"
eval "$export_line"
export PATH="$bin:$PATH"
for f in gres.conf topology.conf; do
  cmp -s "$src/examples/seeds/$f" "$dir/cluster/etc/$f" || fail "up did not take $f along"
done
[[ $(sinfo -h -o '%P %D %t %N') == "train* 16 idle gpu[01-16]
training 16 idle gpu[01-16]
inference 16 idle gpu[01-16]
gpu 16 idle gpu[01-16]
compute 4 idle cpu[01-04]
debug 6 idle cpu[01-04],gpu[01-02]" ]] || fail "sinfo: $(sinfo)"
echo "ok: up --config, the partitions the scripts name"

# Submitted as the articles do: 005 is a here-document on sbatch's standard input.
mkdir -p "$work"
cp "$src"/examples/seeds/jobs/*.sh "$work/"
cd "$work"
ids=()
for f in [0-9][0-9][0-9]-*.sh; do
  if [[ $f == 005-* ]]; then
    id=$(sbatch --parsable --hold <"$f" 2>"$dir/err") || fail "$f: $(cat "$dir/err")"
  else
    id=$(sbatch --parsable --hold "$f" 2>"$dir/err") || fail "$f: $(cat "$dir/err")"
  fi
  [[ ! -s "$dir/err" ]] || fail "$f: sbatch said: $(cat "$dir/err")"
  ids+=("$id")
done
(( ${#ids[@]} == 7 )) || fail "expected 7 scripts, submitted ${#ids[@]}"

# Field by field as Slurm shows them; times, AllocNode:Sid and the job id are left out.
user="$(id -un)($(id -u))"
group="$(id -gn)($(id -g))"
fields() {
  tr ' ' '\n' | grep '=' |
    grep -Ev '^(JobId|SubmitTime|EligibleTime|AccrueTime|LastSchedEval|AllocNode:Sid)='
}
n=0
while IFS= read -r ref; do
  id=${ids[n]}
  n=$((n + 1))
  want=$(sed -e "s#@WORK@#$work#g; s#@USER@#$user#; s#@GROUP@#$group#; s#@ID@#$id#g" <<<"$ref")
  got=$(scontrol show job -o "$id")
  if ! d=$(diff <(fields <<<"$want") <(fields <<<"$got")); then
    fail "job $id (script $n) differs from Slurm's (< Slurm, > Loom):
$d"
  fi
done <"$src/tests/data/seeds/held.txt"
(( n == 7 )) || fail "held.txt has $n jobs"
[[ $(squeue -h -o '%i %P %D %T %r' | sort -n) == "${ids[0]} train 4 PENDING JobHeldUser
${ids[1]} training 4 PENDING JobHeldUser
${ids[2]} compute 1 PENDING JobHeldUser
${ids[3]} debug 1 PENDING JobHeldUser
${ids[4]} train 16 PENDING JobHeldUser
${ids[5]} train 8 PENDING JobHeldUser
${ids[6]} train 16 PENDING JobHeldUser" ]] || fail "squeue: $(squeue)"
echo "ok: all 7 scripts accepted as Slurm 22.05 accepts them"

# Released together (one comma-separated job list); they run as nodes free up.
scontrol release "$(IFS=,; echo "${ids[*]}")" || fail "release of ${ids[*]}"
hello=${ids[3]}

# State, NumNodes, NumCPUs and TRES as Slurm 22.05 reports them once the jobs have run.
expect_end() {  # index state nodes cpus tres partition-nodes
  local id=${ids[$1]} got nodes
  got=$(scontrol show job -o "$id")
  for kv in "JobState=$2" "NumNodes=$3" "NumCPUs=$4" "TRES=$5"; do
    grep -q " $kv " <<<"$got" || fail "job $id: want $kv in: $got"
  done
  nodes=$(grep -o ' NodeList=[^ ]*' <<<"$got" | cut -d= -f2)
  [[ -n $nodes ]] || fail "job $id names no nodes: $got"
  (( $(scontrol show hostnames "$nodes" | wc -l) == $3 )) || fail "job $id ran on $nodes"
  for node in $(scontrol show hostnames "$nodes"); do
    grep -qx "$node" <(scontrol show hostnames "$6") || fail "job $id ran on $node, not in $6"
  done
}

# hello (002's quick start) prints where it runs, then sleeps 30 s.
for _ in $(seq 100); do [[ -s slurm-$hello.out ]] && break; sleep 0.1; done
expect_end 3 RUNNING 1 1 cpu=1,mem=3900M,node=1,billing=1 'cpu[01-04],gpu[01-02]'
hello_node=$(squeue -h -j "$hello" -o '%N')
[[ $(cat "slurm-$hello.out") == "Hello from $hello_node" ]] || fail "hello: $(cat "slurm-$hello.out")"
long=$(sinfo -N -l)
grep -q "^$hello_node .* mixed " <<<"$long" || fail "sinfo -N -l: $long"
echo "ok: hello runs on $hello_node, which sinfo -N -l shows mixed"

for _ in $(seq 300); do
  left=$(squeue -h -t PD,R -o '%i' | grep -vc "^$hello\$" || true)
  (( left == 0 )) && break
  sleep 0.1
done
(( left == 0 )) || fail "still queued or running: $(squeue)"
expect_end 0 FAILED 4 32 cpu=32,mem=124800M,node=4,billing=32 'gpu[01-16]'
expect_end 1 FAILED 4 512 cpu=512,mem=1950G,node=4,billing=512 'gpu[01-16]'
expect_end 2 FAILED 1 16 cpu=16,mem=64G,node=1,billing=16 'cpu[01-04]'
expect_end 4 FAILED 16 16 cpu=16,mem=62400M,node=16,billing=16 'gpu[01-16]'
expect_end 5 COMPLETED 8 8 cpu=8,mem=31200M,node=8,billing=8 'gpu[01-16]'
expect_end 6 FAILED 16 1024 cpu=1024,mem=3900G,node=16,billing=1024 'gpu[01-16]'
grep -q '^Job started on ' "train_${ids[4]}.out" || fail "llama-training: no train_${ids[4]}.out"
[[ -f "train_${ids[4]}.err" ]] || fail "llama-training: no train_${ids[4]}.err"
grep -q '^Finished at ' "slurm-${ids[5]}.out" || fail "llama70b: $(cat "slurm-${ids[5]}.out")"
echo "ok: the rest ran and ended as under Slurm, each on nodes of its partition"

# The other command the articles show (sinfo -o and -N -l are above).
[[ $(squeue --user="$(id -un)" -t all -h -o '%i' | sort -n | paste -sd' ') == "${ids[*]}" ]] ||
  fail "squeue --user: $(squeue --user="$(id -un)" -t all)"
echo "ok: squeue --user"

pids=$(awk '{print $2}' "$dir/cluster/run/pids")
"$bin/loom" cluster down --dir "$dir/cluster" >/dev/null
for p in $pids; do
  if kill -0 "$p" 2>/dev/null; then fail "pid $p still runs after down"; fi
done
echo "ok: down stopped every process it started"
echo "PASS"
