#!/usr/bin/env bash
# MPI through srun, with Debian's Open MPI (PMIx) and MPICH (PMI-1) built here from a small
# C program, on the seed articles' cluster (examples/seeds/slurm.conf, 20 emulated nodes)
# brought up by `loom cluster up --config`:
#   - srun --mpi=list, and an unknown type refused as Slurm refuses it;
#   - 4 nodes x 2 ranks of Open MPI from outside an allocation: every rank once, on its node,
#     the allreduce's sum right, the barrier passed; the same with direct modex (no data in
#     the fence: each node asks the node that holds a rank);
#   - inside a batch job: srun --mpi=pmix over the whole allocation and over part of it, and
#     mpirun (Open MPI's own launcher, which starts its daemons through Loom's srun);
#   - a rank that exits 1 ends the step FAILED on every node, MPI_Abort likewise, a supervisor
#     killed while the others wait in a fence likewise, and nothing of any of them is left
#     running, nor any wire-up directory;
#   - MpiDefault=pmix makes --mpi unnecessary;
#   - MPICH with --mpi=pmi2 (it speaks PMI-1), and a PMI-2 client speaking the PMI-2 protocol;
#   - the seed script 002-gpu-training.sh, unchanged, with a stand-in torchrun.
#
#   tests/e2e/mpi.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: mpi.sh BUILD_BIN_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/loom-mpi.XXXXXX)
work="$dir/work"
cleanup() {
  "$bin/loom" cluster down --dir "$dir/cluster" >/dev/null 2>&1 || true
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL: $*" >&2; show_logs "$dir"/cluster/log/*.log; exit 1; }

for tool in mpicc.openmpi mpicc.mpich; do
  command -v "$tool" >/dev/null ||
    fail "$tool is missing: scripts/install-deps installs Open MPI and MPICH"
done
mkdir -p "$work"
cd "$work"
mpicc.openmpi -o hello_ompi "$src/tests/e2e/mpi/hello.c"
mpicc.mpich -o hello_mpich "$src/tests/e2e/mpi/hello.c"

out=$("$bin/loom" cluster up --dir "$dir/cluster" --config "$src/examples/seeds/slurm.conf") ||
  fail "up: $out"
eval "$(grep '^export SLURM_CONF=' <<<"$out")"
export PATH="$bin:$PATH"
# The tests run as root, which Open MPI refuses unless told; its TCP transport leaves the
# loopback out unless told, and the emulated nodes have nothing else between them.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_tcp_if_include=lo

state() { squeue -h -j "$1" -t all -o '%T'; }
wait_state() {  # job state [tries of 0.1 s]
  for _ in $(seq "${3:-300}"); do
    [[ $(state "$1") == "$2" ]] && return 0
    sleep 0.1
  done
  fail "job $1 is $(state "$1"), not $2: $(cat slurm-"$1".out 2>/dev/null)"
}
last_job() { squeue -h -t all -o '%i' | sort -n | tail -n1; }
# 8 ranks, each once, two on each of the step's nodes, every sum right. The ranks' stdout
# only: Open MPI's warnings go to stderr.
check_ranks() {  # file nodes...
  local file=$1
  shift
  local r node
  for r in 0 1 2 3 4 5 6 7; do
    grep -q "^rank $r of 8 on .* sum 28 ok\$" "$file" || fail "rank $r: $(cat "$file")"
  done
  (( $(wc -l <"$file") == 8 )) || fail "not 8 lines: $(cat "$file")"
  for node in "$@"; do
    (( $(grep -c " on $node sum" "$file") == 2 )) || fail "not 2 ranks on $node: $(cat "$file")"
  done
}
# Nothing of job $1 runs any more: no rank, no supervisor, no wire-up directory.
check_gone() {
  wait_until "! pgrep -f 'hello_(ompi|mpich)' >/dev/null" 100 ||
    fail "ranks of job $1 still run: $(pgrep -af hello_)"
  ! ls -d /dev/shm/loom-pmix."$1".* /tmp/loom-pmix."$1".* 2>/dev/null ||
    fail "job $1 left its wire-up directory"
}

# --mpi=list and a type Loom does not have.
[[ $(srun --mpi=list) == $'MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\nspecific pmix plugin versions available: pmix_v4' ]] ||
  fail "--mpi=list: $(srun --mpi=list)"
if srun --mpi=openmpi true 2>err.txt; then fail "--mpi=openmpi ran"; fi
[[ $(cat err.txt) == "srun: error: Invalid MPI type 'openmpi', --mpi=list for acceptable types" ]] ||
  fail "--mpi=openmpi said: $(cat err.txt)"
echo "ok: --mpi=list, and an unknown type refused"

# Open MPI, 4 nodes x 2 ranks, from outside an allocation.
srun -p compute -N4 --ntasks-per-node=2 --mpi=pmix ./hello_ompi >ompi.txt 2>ompi.err ||
  fail "srun --mpi=pmix: $(cat ompi.err)"
check_ranks ompi.txt cpu01 cpu02 cpu03 cpu04
[[ $(state "$(last_job)") == COMPLETED ]] || fail "the job is $(state "$(last_job)")"
echo "ok: Open MPI 4 nodes x 2 ranks through PMIx: ranks, nodes, allreduce, barrier"

# A user's job: the server's directory and socket are the user's, its clients the user's.
getent passwd loomtest1 >/dev/null || useradd -M -s /usr/sbin/nologin loomtest1
chmod 755 "$dir"
mkdir -p "$dir/user"
chmod 777 "$dir/user"
cp hello_ompi "$dir/user/"
su -s /bin/sh loomtest1 -c "cd $dir/user && SLURM_CONF=$SLURM_CONF OMPI_MCA_btl_tcp_if_include=lo \
  $bin/srun -p compute -N4 --ntasks-per-node=2 --mpi=pmix ./hello_ompi" >user.txt 2>user.err ||
  fail "as loomtest1: $(cat user.txt user.err)"
check_ranks user.txt cpu01 cpu02 cpu03 cpu04
echo "ok: the same as an unprivileged user"

# Direct modex: the fence carries no data, each node asks for the ranks it needs.
OMPI_MCA_pmix_base_async_modex=1 OMPI_MCA_pmix_base_collect_data=0 \
  srun -p compute -N4 --ntasks-per-node=2 --mpi=pmix ./hello_ompi >dmodex.txt 2>dmodex.err ||
  fail "direct modex: $(cat dmodex.txt dmodex.err)"
check_ranks dmodex.txt cpu01 cpu02 cpu03 cpu04
job=$(last_job)
served=0
for n in $(grep -h "loom.pmix.$job.0: .* direct modex requests sent" "$dir"/cluster/log/*.log |
  sed 's/.* \([0-9]*\) direct modex requests sent.*/\1/'); do
  served=$((served + n))
done
(( served > 0 )) || fail "no direct modex request for job $job"
echo "ok: direct modex: $served requests between the nodes, the same right answers"

# Inside a batch job: the whole allocation, part of it, and Open MPI's own mpirun.
cat >inside.sh <<'EOF'
#!/bin/sh
#SBATCH -p compute -N4 --ntasks-per-node=2
srun --mpi=pmix ./hello_ompi >whole.txt
srun --mpi=pmix -n3 ./hello_ompi >part.txt
mpirun --mca btl tcp,self ./hello_ompi >mpirun.txt
EOF
job=$(sbatch --parsable inside.sh)
wait_state "$job" COMPLETED 600
check_ranks whole.txt cpu01 cpu02 cpu03 cpu04
(( $(grep -c '^rank [0-2] of 3 on cpu0[1-4] sum 3 ok$' part.txt) == 3 )) || fail "part: $(cat part.txt)"
check_ranks mpirun.txt cpu01 cpu02 cpu03 cpu04
echo "ok: in a batch job: srun --mpi=pmix (8 and 3 ranks) and mpirun through Loom's srun"

# A rank that exits 1: the step ends FAILED on every node, nothing is left.
if srun -p compute -N4 --ntasks-per-node=2 --mpi=pmix ./hello_ompi fail 3 >fail.txt 2>fail.err; then
  fail "a failing rank left srun at 0"
fi
job=$(last_job)
grep -q "task 3: Exited with exit code 1" fail.err || fail "srun said: $(cat fail.err)"
[[ $(state "$job") == FAILED ]] || fail "job $job is $(state "$job")"
check_gone "$job"
echo "ok: rank 3 exits 1: job $job FAILED, every rank on every node ended"

# MPI_Abort on rank 5: every node ends the step. With -K0, so that the abort reaching the
# other nodes through their loomds is what ends their ranks, not srun seeing rank 5 exit.
if srun -p compute -N4 --ntasks-per-node=2 --mpi=pmix -K0 ./hello_ompi abort 5 >abort.txt 2>&1; then
  fail "MPI_Abort left srun at 0"
fi
job=$(last_job)
[[ $(state "$job") == FAILED ]] || fail "job $job is $(state "$job")"
(( $(grep -l "loom.pmix.$job.0: rank 5 aborted the step (status 7" "$dir"/cluster/log/*.log |
  wc -l) == 4 )) || fail "not every node heard of the abort"
check_gone "$job"
echo "ok: MPI_Abort(7) on rank 5: all 4 nodes end the step, job $job FAILED"

# A supervisor killed while the others wait in MPI_Init's fence (task 5 starts late): srun
# hears its node fail and ends the step, every node's ranks go, and loomd removes what the
# dead supervisor left.
srun -p compute -N4 --ntasks-per-node=2 --mpi=pmix ./hello_ompi late 5 >late.txt 2>late.err &
srun_pid=$!
wait_until "[[ \$(squeue -h -t all -o '%i %T' | sort -n | tail -n1) == *RUNNING ]]" ||
  fail "the late job does not run"
job=$(last_job)
# This cluster's supervisor only: other tests' clusters name their nodes and jobs alike.
supervisor="loom-stepd --spool $dir/cluster/spool/cpu01 .*--job $job "
wait_until "pgrep -f '$supervisor' >/dev/null" || fail "no supervisor on cpu01"
wait_until "(( \$(pgrep -cx hello_ompi) == 8 ))" || fail "not all ranks started: $(pgrep -ax hello_ompi)"
kill -9 "$(pgrep -f "$supervisor")"
if wait "$srun_pid"; then fail "srun ended 0 after a supervisor died"; fi
grep -q "^srun: error: Node failure on cpu01\$" late.err || fail "srun said: $(cat late.err)"
wait_state "$job" FAILED
check_gone "$job"
echo "ok: a supervisor killed mid-fence: srun ends the step, no rank and no wire-up directory left"

# MpiDefault=pmix: srun without --mpi.
sed 's/^MpiDefault=.*//' "$SLURM_CONF" >pmix.conf
echo "MpiDefault=pmix" >>pmix.conf
SLURM_CONF=$work/pmix.conf srun -p compute -N4 --ntasks-per-node=2 ./hello_ompi >default.txt 2>default.err ||
  fail "MpiDefault=pmix: $(cat default.txt default.err)"
check_ranks default.txt cpu01 cpu02 cpu03 cpu04
echo "ok: MpiDefault=pmix: no --mpi needed"

# MPICH through PMI (its library speaks PMI-1), and the PMI-2 protocol itself.
srun -p compute -N4 --ntasks-per-node=2 --mpi=pmi2 ./hello_mpich >mpich.txt 2>mpich.err ||
  fail "MPICH: $(cat mpich.err)"
check_ranks mpich.txt cpu01 cpu02 cpu03 cpu04
srun -p compute -N2 --ntasks-per-node=2 -m cyclic --mpi=pmi2 python3 \
  "$src/tests/e2e/mpi/pmi2_client.py" >pmi2.txt 2>pmi2.err || fail "PMI-2: $(cat pmi2.err)"
(( $(grep -c '^rank [0-3] of 4 ok (vector,(0,2,1),(0,2,1))$' pmi2.txt) == 4 )) ||
  fail "PMI-2: $(cat pmi2.txt)"
echo "ok: MPICH 4 nodes x 2 ranks over PMI; the PMI-2 protocol: put, fence, get, node attributes"

# The seed article's training script, unchanged: 4 nodes x 8 tasks of torchrun. The stand-in
# checks what torchrun's rendezvous would read and what the PMIx server gave each task.
mkdir -p standin
cat >standin/torchrun <<'EOF'
#!/bin/sh
[ -n "$PMIX_NAMESPACE" ] && [ -n "$PMIX_SERVER_URI41" ] && [ "$PMIX_RANK" = "$SLURM_PROCID" ] ||
  { echo "torchrun: no PMIx for task $SLURM_PROCID" >&2; exit 1; }
echo "torchrun $* task $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME gpus $CUDA_VISIBLE_DEVICES"
EOF
chmod +x standin/torchrun
touch train.py
job=$(PATH="$work/standin:$PATH" sbatch --parsable "$src/examples/seeds/jobs/002-gpu-training.sh")
wait_state "$job" COMPLETED 600
(( $(grep -c '^torchrun --nnodes=4 --nproc-per-node=8 train.py task [0-9]* of 32 on gpu[0-9]* gpus 0,1,2,3,4,5,6,7$' "slurm-$job.out") == 32 )) ||
  fail "002: $(cat "slurm-$job.out")"
echo "ok: 002-gpu-training.sh unchanged: 32 torchrun tasks over 4 nodes, each with PMIx and 8 GPUs"
