#!/usr/bin/env bash
# Accounting end to end, as a site uses it: `loom cluster up` gives a cluster with loomdbd;
# sacct shows jobs and steps in Slurm's layout; sacctmgr builds an account tree and only an
# administrator may change it; PrivateData=jobs hides other users' jobs; loomdbd is killed
# during a burst of 1,000 jobs and the controller is killed (-9) while records wait, and
# every job is in sacct afterwards; then the same on a PostgreSQL store (a private server
# this test starts as an unprivileged user and stops by pid), restarted under load.
#
#   tests/e2e/accounting.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: accounting.sh BUILD_BIN_DIR}" && pwd)
dir=$(mktemp -d /tmp/loom-acct.XXXXXX)
chmod 755 "$dir"
pg_pid=""
pgdir=""
cleanup() {
  "$bin/loom" cluster down --dir "$dir/c" >/dev/null 2>&1 || true
  "$bin/loom" cluster down --dir "$dir/pg" >/dev/null 2>&1 || true
  if [[ -n $pg_pid ]]; then
    kill -INT "$pg_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pg_pid" 2>/dev/null || true
  fi
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; [[ -z $pgdir ]] || rm -rf "$pgdir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster=$dir/c
fail() { echo "FAIL: $*" >&2; show_logs "$cluster"/log/*.log; exit 1; }
export PATH="$bin:$PATH"

# The pid `loom cluster` recorded for daemon $2 of cluster $1.
pid_of() { awk -v n="$2" '$1 == n { print $2 }' "$1/run/pids"; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"; }
dbd_queue() { sdiag | awk -F: '/DBD Agent queue size/ { gsub(/ /, "", $2); print $2 }'; }

out=$("$bin/loom" cluster up --dir "$cluster" --nodes 2) || fail "up: $out"
eval "$(grep '^export SLURM_CONF=' <<<"$out")"
mkdir -p "$dir/work"
chmod 777 "$dir/work"
cd "$dir/work"

# ------------------------------------------------------------------ sacct, the basics
ok=$(sbatch --parsable -J oker -o /dev/null --wrap true)
failer=$(sbatch --parsable -J failer -o /dev/null --wrap 'exit 3')
sleeper=$(sbatch --parsable -J sleeper -o /dev/null --wrap 'sleep 300')
srun -J hostname -N2 true
wait_until "[[ \$(squeue -h -j $sleeper -o %T) == RUNNING ]]" || fail "sleeper never ran"
scancel "$sleeper"
wait_until "[[ -z \$(squeue -h -j $ok,$failer,$sleeper) ]]" || fail "jobs did not end"
wait_until "[[ \$(dbd_queue) == 0 ]]" || fail "records still queued: $(sdiag)"
got=$(sacct -j "$ok,$failer,$sleeper" -o JobID,JobName,State,ExitCode)
expected="JobID           JobName      State ExitCode 
------------ ---------- ---------- -------- 
$ok                 oker  COMPLETED      0:0 
$ok.batch          batch  COMPLETED      0:0 
$failer               failer     FAILED      3:0 
$failer.batch          batch     FAILED      3:0 
$sleeper              sleeper CANCELLED+      0:0 
$sleeper.batch          batch  CANCELLED     0:15 "
# JobID is left-justified in 12 columns: compare with the padding normalised.
[[ $(sed 's/  */ /g' <<<"$got") == $(sed 's/  */ /g' <<<"$expected") ]] ||
  fail "sacct -j: got
$got
expected
$expected"
[[ $(sacct -X -P -n -j "$sleeper" -o State) == "CANCELLED by 0" ]] || fail "CANCELLED by: $(sacct -X -P -j "$sleeper" -o State)"
sacct -n -X -o JobName | grep -q hostname || fail "the srun job is missing: $(sacct)"
sacct -n -o JobID,JobName | grep -qE '^[0-9]+\.0 +hostname' || fail "srun's step 0: $(sacct)"
[[ $(sacct -X -n -s F -S now-1hour -E now -o JobID | tr -d ' ') == "$failer" ]] ||
  fail "sacct -s F: $(sacct -X -s F -S now-1hour -E now)"
[[ -z $(sacct -X -n -s F -S now-1hour -o JobID) ]] || fail "-s without -E looks at an instant"
runner=$(sbatch --parsable -J runner -o /dev/null --wrap 'sleep 60')
wait_until "[[ \$(squeue -h -j $runner -o %T) == RUNNING ]]" || fail "runner never ran"
wait_until "sacct -X -n -s R -o JobID | grep -qw $runner" 50 || fail "-s R without -S: the jobs running now: $(sacct -X -s R)"
scancel "$runner"
[[ $(sacct -X -P -n -j "$ok" -o JobID,ReqTRES) == "$ok|billing=1,cpu=1,node=1" ]] || fail "ReqTRES: $(sacct -X -P -j "$ok" -o JobID,ReqTRES)"
[[ $(sacct -X -p -n -j "$ok" -o JobID,State) == "$ok|COMPLETED|" ]] || fail "-p"
err=$(sacct -o JobID,Bogus 2>&1) && fail "an unknown field was accepted"
[[ $err == *'Invalid field requested: "Bogus"'* ]] || fail "unknown field: $err"
err=$(sacct -S yesterday-ish 2>&1) && fail "a bad time was accepted"
[[ $err == *"Invalid time specification"* ]] || fail "bad time: $err"
[[ $(sacct -n -j 999999 | wc -l) == 0 ]] || fail "unknown job"
echo "ok: sacct layout, states, exit codes, steps, windows and errors"

# sacct --json: Slurm 22.05's document, the same jobs, states and exit codes.
sacct --json -j "$ok,$failer,$sleeper" >"$dir/sacct.json" || fail "sacct --json"
python3 - "$dir/sacct.json" "$ok" "$failer" "$sleeper" <<'PY' || fail "sacct --json: $(head -c 2000 "$dir/sacct.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
ok, failer, sleeper = (int(x) for x in sys.argv[2:5])
assert doc["meta"]["plugin"]["type"] == "openapi/dbv0.0.38", doc["meta"]
assert doc["errors"] == []
jobs = {j["job_id"]: j for j in doc["jobs"]}
assert sorted(jobs) == sorted([ok, failer, sleeper]), sorted(jobs)
assert jobs[ok]["state"]["current"] == "COMPLETED"
assert jobs[ok]["exit_code"] == {"status": "SUCCESS", "return_code": 0}
assert jobs[failer]["state"]["current"] == "FAILED"
assert jobs[failer]["exit_code"] == {"status": "FAILED", "return_code": 3}
assert jobs[sleeper]["state"]["current"] == "CANCELLED"
assert jobs[sleeper]["kill_request_user"] == "root"
batch = jobs[failer]["steps"][0]
assert batch["step"]["id"] == "%d.batch" % failer and batch["state"] == "FAILED", batch["step"]
cpu = [t for t in jobs[ok]["tres"]["requested"] if t["type"] == "cpu"]
assert cpu == [{"type": "cpu", "name": None, "id": 1, "count": 1}], jobs[ok]["tres"]
assert jobs[ok]["time"]["start"] >= jobs[ok]["time"]["submission"] > 0
PY
echo "ok: sacct --json"

# sreport reads loomdbd's hourly rollups (their arithmetic: dbd_service_test); here, that
# each report answers in its shape.
rep=$(sreport -P -T cpu,gres/gpu cluster utilization Start=now-1day End=now) || fail "sreport: $rep"
grep -q "^Cluster|TRES Name|Allocated|Down|PLND Down|Idle|Reserved|Reported$" <<<"$rep" || fail "sreport utilization: $rep"
grep -q "^local|gres/gpu|" <<<"$rep" || fail "sreport gres/gpu line: $rep"
for r in "cluster AccountUtilizationByUser" "cluster UserUtilizationByAccount" "user topusage" "job sizesbyaccount"; do
  sreport -n $r >/dev/null || fail "sreport $r"
done
err=$(sreport cluster nosuch 2>&1) && fail "an unknown report was accepted"
[[ $err == *"Not valid report"* ]] || fail "unknown report: $err"

# ------------------------------------------------------------------ sacctmgr and permissions
sacctmgr -i add qos high Priority=100 MaxWall=2:00:00 >/dev/null || fail "add qos"
sacctmgr -i add account physics Description=Physics Fairshare=10 QOS=normal,high >/dev/null || fail "add account"
sacctmgr -i add user nobody Account=physics >/dev/null || fail "add user"
got=$(sacctmgr -n -P show assoc format=account,user,qos where account=physics)
[[ $got == "physics||normal,high
physics|nobody|normal" ]] || fail "show assoc: $got"
[[ $(sacctmgr -n -P show qos format=name,priority,maxwall name=high) == "high|100|02:00:00" ]] || fail "show qos: $(sacctmgr show qos)"
err=$(sacctmgr -i add user nobody Account=nosuch 2>&1) && fail "an unknown account was accepted"
[[ $err == *"This account 'nosuch' doesn't exist"* ]] || fail "unknown account: $err"
err=$(as_nobody sacctmgr -i add account rogue 2>&1) && fail "nobody changed the tree"
[[ $err == *"privileges"* ]] || fail "permission: $err"
[[ $(sacctmgr -n -P show account format=account name=rogue) == "" ]] || fail "rogue account exists"
echo "ok: sacctmgr tree, checks and permissions"

# sacctmgr dump and load: the tree out to a file and back (a changed share is set back, a
# deleted user added again), and the same file drives fair share in the simulator.
sacctmgr dump File="$dir/local.cfg" >/dev/null || fail "sacctmgr dump"
grep -qx "Account - 'physics':Description='Physics':Organization='physics':Fairshare=10:QOS='normal,high'" "$dir/local.cfg" ||
  fail "dump, physics: $(cat "$dir/local.cfg")"
grep -qx "User - 'nobody':DefaultAccount='physics':Fairshare=1:QOS='normal'" "$dir/local.cfg" ||
  fail "dump, nobody: $(cat "$dir/local.cfg")"
sacctmgr -i modify account where name=physics set Fairshare=20 >/dev/null || fail "modify physics"
sacctmgr -i delete user nobody >/dev/null || fail "delete nobody"
err=$(as_nobody sacctmgr -i load File="$dir/local.cfg" 2>&1) && fail "nobody loaded a tree"
[[ $err == *"privileges"* ]] || fail "load as nobody: $err"
sacctmgr -i load File="$dir/local.cfg" >/dev/null || fail "sacctmgr load"
sacctmgr dump | diff - "$dir/local.cfg" >/dev/null || fail "load did not restore the tree: $(sacctmgr dump | diff - "$dir/local.cfg")"
printf "Cluster - 'local'\nParent - 'nosuch'\n" >"$dir/bad.cfg"
err=$(sacctmgr -i load File="$dir/bad.cfg" 2>&1) && fail "a bad dump was loaded"
[[ $err == *"bad.cfg:2: Parent 'nosuch' is not an account defined above"* ]] || fail "bad dump: $err"
"$bin/loom" sim --policy easy --priority fairshare --shares "$dir/local.cfg" >/dev/null || fail "loom sim --shares of a dump"
echo "ok: sacctmgr dump and load; a dump drives loom sim --shares"

# ------------------------------------------------------------------ node events
# A drained node, then a node set DOWN, each an event with its reason and who gave it, ended
# when the node is back (sacctmgr show event).
node=$(sinfo -h -N -o %N | tail -1)
scontrol update NodeName="$node" State=DRAIN Reason="bad gpu" || fail "drain $node"
events() { sacctmgr -n -P show event format=NodeName,State,Reason,User,TimeEnd Nodes="$node"; }
wait_until "events | grep -qx '$node|DRAIN|bad gpu|root|Unknown'" || fail "no open drain event: $(events)"
sleep 1  # events are kept to the second: a change within the same second replaces the event
scontrol update NodeName="$node" State=DOWN Reason="maintenance" || fail "down $node"
wait_until "events | grep -qx '$node|DOWN+DRAIN|maintenance|root|Unknown'" || fail "no down event: $(events)"
scontrol update NodeName="$node" State=RESUME || fail "resume $node"
wait_until "[[ -z \$(sacctmgr -n show event States=DRAIN,DOWN) ]]" || fail "events still open: $(sacctmgr show event)"
got=$(events | cut -d'|' -f1-4)
[[ $got == "$node|DRAIN|bad gpu|root
$node|DOWN+DRAIN|maintenance|root" ]] || fail "events: $got"
events | grep -q '|Unknown$' && fail "an event was not ended: $(events)"
echo "ok: node events (drain, down, resume) in sacctmgr show event"

# ------------------------------------------------------------------ AccountingStorageEnforce
echo "AccountingStorageEnforce=associations,qos" >>"$SLURM_CONF"
scontrol reconfigure || fail "reconfigure"
err=$(sbatch -A nosuch -o /dev/null --wrap true 2>&1) && fail "an unknown account was accepted"
[[ $err == *"Invalid account or account/partition combination specified"* ]] || fail "-A nosuch: $err"
# sacctmgr's changes reach the controller within seconds.
wait_until "as_nobody sbatch -o /dev/null -D $dir/work --wrap true >/dev/null 2>&1" 100 ||
  fail "nobody cannot submit to its default account: $(as_nobody sbatch -o /dev/null -D "$dir/work" --wrap true 2>&1)"
err=$(as_nobody sbatch -A root -o /dev/null -D "$dir/work" --wrap true 2>&1) && fail "nobody used root's account"
[[ $err == *"Invalid account or account/partition combination specified"* ]] || fail "-A root as nobody: $err"
err=$(as_nobody sbatch --qos=high -o /dev/null -D "$dir/work" --wrap true 2>&1) && fail "nobody used QOS high"
[[ $err == *"Invalid qos specification"* ]] || fail "--qos=high as nobody: $err"
j=$(as_nobody sbatch --parsable -o /dev/null -D "$dir/work" --wrap 'sleep 2')
[[ $(squeue -h -j "$j" -o '%a %q') == "physics normal" ]] || fail "account and QOS: $(squeue -j "$j" -o '%i %a %q')"
sed -i '/^AccountingStorageEnforce=/d' "$SLURM_CONF"
scontrol reconfigure || fail "reconfigure"
echo "ok: jobs carry their default account and QOS; AccountingStorageEnforce=associations,qos"

# ------------------------------------------------------------------ users and PrivateData
mine=$(as_nobody sbatch --parsable -J mine -o /dev/null -D "$dir/work" --wrap true)
wait_until "[[ -z \$(squeue -h -j $mine) ]]" || fail "nobody's job did not end"
wait_until "[[ \$(dbd_queue) == 0 ]]"
as_nobody sacct -X -n -P -o JobID,Account | grep -qx "$mine|physics" || fail "nobody's own jobs: $(as_nobody sacct -X)"
[[ $(as_nobody sacct -X -n -P -o User | sort -u) == nobody ]] || fail "nobody sees others' jobs by default: $(as_nobody sacct -X -o JobID,User)"
as_nobody sacct -X -n -a -o JobID | grep -q "^ *$ok *$" || fail "-a without PrivateData"
echo "PrivateData=jobs" >>"$cluster/etc/slurmdbd.conf"
"$bin/loom" cluster restart --dir "$cluster" loomdbd >/dev/null || fail "restart loomdbd"
wait_until "sacct -n -j $ok >/dev/null 2>&1" || fail "loomdbd did not come back"
[[ $(as_nobody sacct -X -n -a -P -o User | sort -u) == nobody ]] || fail "PrivateData=jobs: $(as_nobody sacct -X -a -o JobID,User)"
sacct -X -n -a -o JobID | grep -q "^ *$ok *$" || fail "root sees every job"
echo "ok: a user's jobs carry the default account; PrivateData=jobs"

# ------------------------------------------------------------------ records loaded from a file
# A simulated month, as `loom sim --accounting-out` writes it, loaded with sacctmgr archive
# load: sacct and sreport answer about it (the built-in KTH trace began in September 1996).
"$bin/loom" sim --policy easy --accounting-out "$dir/kth.acct" >/dev/null || fail "loom sim --accounting-out"
records=$(grep -vc -e '^#' -e '^Cluster|' "$dir/kth.acct")
err=$(as_nobody sacctmgr archive load File="$dir/kth.acct" 2>&1) && fail "nobody loaded records"
[[ $err == *"Access/permission denied"* ]] || fail "archive load as nobody: $err"
printf 'JobID|User|Submit|State\n1|a|1996-10-01T00:00:00|DONE\n' >"$dir/bad.acct"
err=$(sacctmgr archive load File="$dir/bad.acct" 2>&1) && fail "a bad state was loaded"
[[ $err == *"bad.acct:2: State 'DONE': not a job state"* ]] || fail "bad file: $err"
got=$(sacctmgr archive load File="$dir/kth.acct") || fail "archive load: $got"
[[ $got == " Loaded $records jobs of cluster easy" ]] || fail "archive load said: $got"
sacctmgr archive load File="$dir/kth.acct" >/dev/null || fail "a second load"
n=$(sacct -M easy -a -X -n -S 1996-09-01 -E 1997-12-31 -o JobID | wc -l)
(( n == records )) || fail "$n of $records loaded jobs in sacct after two loads"
got=$(sacct -M easy -u u14 -X -n -P -S 1996-10-01 -E 1996-10-02 -o JobID,User,Account,State | head -1)
[[ $got == "3|u14|g14|COMPLETED" ]] || fail "sacct -u of a simulated user: $got"
# October 1996 on 100 CPUs: 744 hours x 100 CPUs, all of it allocated or idle.
IFS='|' read -r name alloc down plnd idle resv reported < <(
  sreport -n -P cluster utilization cluster=easy start=1996-10-01 end=1996-11-01 -t hours)
[[ $name == easy && $reported == 74400 && $down == 0 ]] || fail "sreport on the loaded month: $name $alloc $down $idle $reported"
(( alloc > 0 && alloc + idle == reported )) || fail "allocated $alloc + idle $idle != $reported"
[[ $(sacctmgr -n -P show cluster format=cluster,controlhost | grep -c '^easy|$') == 1 ]] || fail "the loaded cluster: $(sacctmgr show cluster)"
sacctmgr -n -P show cluster format=cluster,controlhost | grep -q '^local|127.0.0.1$' || fail "the live cluster lost its controller: $(sacctmgr show cluster)"
echo "ok: a simulated month loaded with sacctmgr archive load ($records jobs): sacct, sreport ($alloc of $reported CPU hours)"

# ------------------------------------------------------------------ loomdbd down during a burst
array=$(sbatch --parsable -o /dev/null --array=1-1000 --wrap true)
sleep 0.5
kill "$(pid_of "$cluster" loomdbd)"
wait_until "[[ \$(dbd_queue) -gt 0 ]]" || fail "no record queued while loomdbd is down"
# Records wait in the controller's store: even a controller killed -9 keeps them.
wait_until "[[ \$(squeue -h -r -j $array | wc -l) -lt 500 ]]" 600 || fail "the burst stalled"
kill -KILL "$(pid_of "$cluster" loomctld)"
"$bin/loom" cluster restart --dir "$cluster" loomctld >/dev/null || fail "restart loomctld"
wait_until "squeue -h >/dev/null 2>&1" || fail "the controller did not come back"
wait_until "[[ -z \$(squeue -h -r -j $array) ]]" 1200 || fail "the burst did not finish: $(squeue | head -5; sinfo)"
queued=$(dbd_queue)
(( queued > 0 )) || fail "nothing queued before loomdbd returns"
"$bin/loom" cluster restart --dir "$cluster" loomdbd >/dev/null || fail "restart loomdbd"
wait_until "[[ \$(dbd_queue) == 0 ]]" 600 || fail "the queue did not drain: $(sdiag | head -6)"
n=$(sacct -X -n -j "$array" -s CD -S now-1hour -E now -o JobID | wc -l)
(( n == 1000 )) || fail "$n of 1000 jobs in sacct after loomdbd and the controller were killed"
echo "ok: loomdbd killed during 1,000 jobs, the controller killed -9: $queued records waited, all 1000 in sacct"
"$bin/loom" cluster down --dir "$cluster" >/dev/null

# ------------------------------------------------------------------ PostgreSQL
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [[ -z $pgbin || ! -x $pgbin/initdb ]]; then
  echo "FAIL: PostgreSQL's server is not installed (apt-get install postgresql-15)" >&2
  exit 1
fi
pgdir=$(mktemp -d /tmp/loom-acct-pg.XXXXXX)
chown nobody:nogroup "$pgdir"
as_pg() { (cd "$pgdir" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
as_pg "$pgbin/initdb" -D "$pgdir/data" -A trust -U loom >"$pgdir/initdb.log" 2>&1 || { cat "$pgdir/initdb.log"; fail "initdb"; }
read -r pgport ctl_port <<<"$(free_ports 2)"
start_pg() {
  # exec all the way down: $! is postgres itself, stopped by that pid.
  (cd "$pgdir" && exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$pgbin/postgres" \
    -D "$pgdir/data" -c listen_addresses=127.0.0.1 -c port="$pgport" \
    -c unix_socket_directories="$pgdir") >>"$pgdir/server.log" 2>&1 &
  pg_pid=$!
  wait_until "as_pg $pgbin/pg_isready -q -h 127.0.0.1 -p $pgport" || { cat "$pgdir/server.log"; fail "postgres did not start"; }
}
stop_pg() {
  kill -INT "$pg_pid"
  wait_until "! kill -0 $pg_pid 2>/dev/null" || fail "postgres did not stop"
}
start_pg
as_pg "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U loom loom_acct || fail "createdb"
site=$dir/site
mkdir -p "$site"
cat >"$site/slurm.conf" <<CONF
ClusterName=pgsite
SlurmctldHost=ctl1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=dbd1
NodeName=n[1-2] CPUs=8 RealMemory=8000 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
cat >"$site/slurmdbd.conf" <<CONF
DbdHost=dbd1
StorageType=accounting_storage/pgsql
StorageHost=127.0.0.1
StoragePort=$pgport
StorageUser=loom
StorageLoc=loom_acct
CONF
cluster=$dir/pg
out=$("$bin/loom" cluster up --dir "$cluster" --config "$site/slurm.conf") || fail "up on PostgreSQL: $out"
eval "$(grep '^export SLURM_CONF=' <<<"$out")"
grep -q "accounting store: loom_acct" "$cluster/log/loomdbd.log" || grep -q "127.0.0.1:$pgport" "$cluster/log/loomdbd.log" || fail "loomdbd did not use PostgreSQL: $(cat "$cluster/log/loomdbd.log")"
first=$(sbatch --parsable -o /dev/null --array=1-200 --wrap true)
sleep 0.3
# The database restarts under load: loomdbd reconnects, nothing is lost.
stop_pg
start_pg
wait_until "[[ -z \$(squeue -h -r -j $first) ]]" 600 || fail "the PostgreSQL burst did not finish"
wait_until "[[ \$(dbd_queue) == 0 ]]" 600 || fail "the queue did not drain on PostgreSQL: $(sdiag | head -6)"
n=$(sacct -X -n -j "$first" -S now-1hour -E now -s CD -o JobID | wc -l)
(( n == 200 )) || fail "$n of 200 jobs on PostgreSQL"
rows=$(as_pg "$pgbin/psql" -h 127.0.0.1 -p "$pgport" -U loom -d loom_acct -Atc "SELECT count(*) FROM acct_jobs WHERE cluster = 'pgsite'")
(( rows >= 200 )) || fail "PostgreSQL holds $rows job rows"
echo "ok: PostgreSQL store, restarted under load: all 200 jobs in sacct ($rows rows)"
