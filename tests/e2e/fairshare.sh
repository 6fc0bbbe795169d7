#!/usr/bin/env bash
# Fair share end to end: on a cluster with accounting and priority/multifactor, one account
# uses the whole cluster; then both accounts queue a whole-cluster job, the busy account's
# first. The idle account's job starts first: its fair-share factor and priority are the
# higher ones, as sshare and sprio show in Slurm's layouts; a controller restart keeps the
# usage. Then limits: a GPU-limited QOS holds a job with QOSGrpGRES while GPUs are free, and
# scontrol show assoc_mgr shows what counts against it.
#
#   tests/e2e/fairshare.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: fairshare.sh BUILD_BIN_DIR}" && pwd)
dir=$(mktemp -d /tmp/loom-fairshare.XXXXXX)
chmod 755 "$dir"
cleanup() {
  "$bin/loom" cluster down --dir "$dir/c" >/dev/null 2>&1 || true
  [[ "${LOOM_KEEP_TEST_DIRS:-0}" == 1 ]] || rm -rf "$dir"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster=$dir/c
fail() { echo "FAIL: $*" >&2; show_logs "$cluster"/log/*.log; exit 1; }
export PATH="$bin:$PATH"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"; }
state() { squeue -h -j "$1" -o %T; }

out=$("$bin/loom" cluster up --dir "$cluster" --nodes 2) || fail "up: $out"
eval "$(grep '^export SLURM_CONF=' <<<"$out")"
mkdir -p "$dir/work"
chmod 777 "$dir/work"
cd "$dir/work"

sacctmgr -i add account physics,bio >/dev/null
sacctmgr -i add user root account=physics >/dev/null
sacctmgr -i add user nobody account=bio defaultaccount=bio >/dev/null
# The controller reads the tree every few seconds.
wait_until "sshare -a -n -P -o Account,User | grep -q '^  bio|nobody$'" 150 ||
  fail "the tree never reached the controller: $(sshare -a)"

# physics uses the whole cluster for a few seconds.
busy=$(sbatch --parsable -A physics -N2 --exclusive -o /dev/null --wrap 'sleep 4')
wait_until "[[ \$(state $busy) == RUNNING ]]" || fail "the busy job never ran"
# Both accounts queue a whole-cluster job while it runs: physics's first.
mine=$(sbatch --parsable -A physics -N2 --exclusive -o /dev/null --wrap 'sleep 3')
# The idle account's job runs until cancelled below, so that it charges no usage (that comes
# at its end or at PriorityCalcPeriod, 5 minutes) while sprio and sshare are read: a slow run
# of the test must not see both accounts used.
theirs=$(as_nobody sbatch --parsable -N2 --exclusive -o /dev/null --wrap 'sleep 300')
# Nothing used yet counts the same for both: submission order.
[[ $(squeue -h -j "$mine" -o %Q) == $(squeue -h -j "$theirs" -o %Q) ]] ||
  fail "priorities differ before any usage: $(squeue -o '%i %u %a %Q')"

wait_until "[[ \$(state $busy) == '' ]]" 200 || fail "the busy job did not end"
wait_until "[[ \$(state $theirs) == RUNNING ]]" 100 ||
  fail "the idle account's job did not start first: $(squeue -o '%i %u %a %Q %T')"
[[ $(state "$mine") == PENDING ]] || fail "physics's job ran alongside: $(squeue)"

# sprio: the factors of the job that waits, in Slurm's columns; physics's fair share is the
# lowest of the three users' (root under root, nobody under bio, root under physics): 1/3.
got=$(sprio -j "$mine")
header=$(head -1 <<<"$got")
[[ $header == "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION        QOS" ]] ||
  fail "sprio header: '$header'"
read -r _ _ prio _ _ fs _ <<<"$(tail -1 <<<"$got")"
[[ $fs == 3333 ]] || fail "physics's fair share after its usage: $got"
[[ $prio == $(squeue -h -j "$mine" -o %Q) ]] || fail "sprio's priority is not squeue's: $got"
sprio -w | grep -q "Weights .* 1 .*1000 .*10000" || fail "sprio -w: $(sprio -w)"

# sshare: physics has the usage (2 nodes x all their CPUs x ~4 s); Fair Tree's columns.
line=$(sshare -a -P -n -o Account,User,RawUsage,FairShare,LevelFS | grep '^  physics|root|')
IFS='|' read -r _ _ usage factor levelfs <<<"$line"
(( usage > 0 )) || fail "no usage charged to physics: $(sshare -a -l)"
[[ $factor == 0.333333 && $levelfs != inf ]] || fail "physics's root: $(sshare -a -l)"
header=$(sshare | head -1)
[[ $header == "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare " ]] ||
  fail "sshare header: '$header'"
# Without -a: every account, and only the caller's own associations.
[[ $(sshare -n -P -o Account,User | grep -c nobody) == 0 && $(sshare -n -P -o Account | grep -c bio) == 1 ]] ||
  fail "sshare's default rows: $(sshare)"
echo "ok: the idle account's job started first; sprio and sshare show why"

# A controller restart keeps the usage.
before=$(sshare -a -P -n -o Account,User,RawUsage | grep '^  physics|root|')
"$bin/loom" cluster restart loomctld --dir "$cluster" >/dev/null || fail "restart"
wait_until "sshare -a -P -n -o Account,User,RawUsage >/dev/null 2>&1" 150 || fail "no controller"
after=$(sshare -a -P -n -o Account,User,RawUsage | grep '^  physics|root|')
# The same usage, decayed by the seconds the restart took (a week's half-life: under one unit).
IFS='|' read -r _ _ u0 <<<"$before"
IFS='|' read -r _ _ u1 <<<"$after"
(( u0 > 0 && u1 >= u0 - 1 && u1 <= u0 )) || fail "usage before the restart $u0, after $u1"
echo "ok: a controller restart keeps the usage"

# Limits (AccountingStorageEnforce=limits): a QOS with 4 GPUs at once holds a third 2-GPU job
# with QOSGrpGRES although 4 more GPUs are free, and starts it when one ends; a job over
# the QOS's MaxWall waits with QOSMaxWallDurationPerJobLimit.
echo "AccountingStorageEnforce=associations,limits" >>"$SLURM_CONF"
scontrol reconfigure || fail "reconfigure"
sacctmgr -i add qos gpu4 GrpTRES=gres/gpu=4 MaxWall=1:00:00 >/dev/null || fail "add qos"
sacctmgr -i modify user root set QOS=normal,gpu4 >/dev/null || fail "modify user"
scancel "$mine" "$theirs" 2>/dev/null || true
wait_until "[[ -z \$(squeue -h) ]]" 100 || fail "jobs did not end: $(squeue)"
# The restarted controller counts a node again once its daemon reports (within a heartbeat).
wait_until "[[ \$(sinfo -h -N -o %T | sort -u) == idle ]]" 600 || fail "nodes: $(sinfo -N)"
submit_gpu() { sbatch --parsable -A physics --qos=gpu4 -p batch --gres=gpu:2 -t 10 -o /dev/null --wrap "$1"; }
# Without AccountingStorageEnforce=qos a submission naming a QOS the controller does not know
# yet is taken: wait until the controller holds the QOS's limit.
wait_until "scontrol show assoc_mgr flags=qos qos=gpu4 | grep -q '^    GrpTRES=.*gres/gpu=4('" 150 ||
  fail "QOS gpu4 never reached the controller: $(scontrol show assoc_mgr flags=qos qos=gpu4)"
g1=$(submit_gpu 'sleep 30')
g2=$(submit_gpu 'sleep 30')
g3=$(submit_gpu 'sleep 30')
wait_until "[[ \$(state $g1) == RUNNING && \$(state $g2) == RUNNING ]]" 300 || fail "GPU jobs: $(squeue)"
wait_until "[[ \$(squeue -h -j $g3 -o %r) == QOSGrpGRES ]]" 100 ||
  fail "the third GPU job: $(squeue -j "$g3" -o '%i %T %r')"
# scontrol show assoc_mgr: the QOS's 4 GPUs all held, by root's jobs in physics.
mgr=$(scontrol show assoc_mgr flags=qos qos=gpu4)
grep -q '^QOS=gpu4$' <<<"$mgr" || fail "assoc_mgr: $mgr"
grep -q '^    GrpTRES=cpu=N([0-9]*),mem=N([0-9]*),node=N(2),billing=N([0-9]*),gres/gpu=4(4)$' <<<"$mgr" ||
  fail "assoc_mgr's QOS GrpTRES: $mgr"
grep -q '^      \[root(0)\]$' <<<"$mgr" || fail "assoc_mgr's user limits: $mgr"
mgr=$(scontrol show assoc_mgr flags=assoc accounts=physics users=root)
grep -q '^ClusterName=.* Account=physics UserName=root(0) Partition= Priority=0$' <<<"$mgr" ||
  fail "assoc_mgr's association: $mgr"
grep -q '^    GrpTRES=.*gres/gpu=N(4)$' <<<"$mgr" || fail "assoc_mgr's association GrpTRES: $mgr"
echo "ok: scontrol show assoc_mgr shows the QOS's GPUs held against its GrpTRES"
scancel "$g1"
wait_until "[[ \$(state $g3) == RUNNING ]]" 150 || fail "the third GPU job never started: $(squeue)"
long=$(sbatch --parsable -A physics --qos=gpu4 -t 2:00:00 -o /dev/null --wrap true)
wait_until "[[ \$(squeue -h -j $long -o %r) == QOSMaxWallDurationPerJobLimit ]]" 100 ||
  fail "over MaxWall: $(squeue -j "$long" -o '%i %T %r')"
scancel "$g2" "$g3" "$long"
echo "ok: a GPU-limited QOS holds jobs with QOSGrpGRES; MaxWall with its reason"

# Partition access: a partition that denies physics refuses its jobs with Slurm's error and
# scontrol show partition lists it; a waiting job's QOS changes with scontrol update, checked
# as a submission is (with AccountingStorageEnforce=qos: an unknown QOS is refused).
nodes=$(sinfo -h -p batch -o %N)
sed -i 's/^AccountingStorageEnforce=associations,limits$/AccountingStorageEnforce=associations,limits,qos/' "$SLURM_CONF"
echo "PartitionName=nophys Nodes=$nodes DenyAccounts=physics" >>"$SLURM_CONF"
scontrol reconfigure || fail "reconfigure"
wait_until "scontrol show partition nophys >/dev/null 2>&1" 100 || fail "no partition nophys"
scontrol show partition nophys | grep -q " DenyAccounts=physics AllowQos=ALL$" ||
  fail "show partition: $(scontrol show partition nophys)"
err=$(sbatch -A physics -p nophys -o /dev/null --wrap true 2>&1) && fail "physics ran in nophys: $err"
[[ $err == *"Invalid account or account/partition combination specified"* ]] || fail "refusal: $err"
held=$(sbatch --parsable -H -A physics -o /dev/null --wrap true)
scontrol update JobId="$held" QOS=gpu4 || fail "update QOS"
[[ $(squeue -h -j "$held" -o %q) == gpu4 ]] || fail "QOS after update: $(squeue -h -j "$held" -o %q)"
err=$(scontrol update JobId="$held" QOS=nosuch 2>&1) && fail "an unknown QOS was taken"
[[ $err == *"Invalid qos specification"* ]] || fail "unknown QOS: $err"
scancel "$held"
echo "ok: DenyAccounts refuses physics in nophys; scontrol update job QOS= checks the QOS"

# GrpTRESMins: a budget of no CPU-minutes for physics holds its next job with Slurm's reason,
# and scontrol show assoc_mgr shows the budget against the decayed minutes used.
sacctmgr -i modify account physics set GrpTRESMins=cpu=0 >/dev/null || fail "GrpTRESMins"
budget_set() { scontrol show assoc_mgr flags=assoc accounts=physics | grep -q '^    GrpTRESMins=cpu=0([0-9]*),'; }
wait_until budget_set 150 || fail "assoc_mgr's GrpTRESMins: $(scontrol show assoc_mgr flags=assoc accounts=physics)"
budget=$(sbatch --parsable -A physics -o /dev/null --wrap true)
wait_until "[[ \$(squeue -h -j $budget -o %r) == AssocGrpCPUMinutesLimit ]]" 150 ||
  fail "GrpTRESMins: $(squeue -j "$budget" -t all -o '%i %T %r')"
scancel "$budget"
echo "ok: GrpTRESMins holds physics's job with AssocGrpCPUMinutesLimit"

# An association's Priority (PriorityWeightAssoc) reaches the controller.
sacctmgr -i modify account bio set Priority=5 >/dev/null || fail "Priority"
wait_until "scontrol show assoc_mgr flags=assoc accounts=bio | grep -q '^ClusterName=.* Account=bio UserName= Partition= Priority=5$'" 150 ||
  fail "assoc_mgr's Priority: $(scontrol show assoc_mgr flags=assoc accounts=bio)"
echo "ok: an association's Priority shows in assoc_mgr"
