#!/usr/bin/env bash
# End to end on loopback, as a user would: a private munged, loomctld and two loomd;
# sbatch → run → output file → COMPLETED; a failing job; scancel; a user who may not cancel
# another's job; squeue and sinfo; then loomctld killed with -9 and restarted keeps every
# acknowledged job; SIGHUP reconfigures, pid files, -V. Every daemon is started here and
# stopped by its PID.
#
#   tests/e2e/basic.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: basic.sh BUILD_BIN_DIR}" && pwd)
dir=${LOOM_E2E_DIR:-$(mktemp -d /tmp/loom-e2e.XXXXXX)}
chmod 755 "$dir"
pids=()
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap stop_all EXIT

# Free loopback ports for the controller and the two nodes.
read -r cport n1port n2port < <(free_ports 3)

mkdir -p "$dir/state" "$dir/spool" "$dir/work" "$dir/ctld"
chmod 777 "$dir/work"
start_munged

{ conf_header e2e "$cport"; cat <<CONF; } >"$dir/slurm.conf"
SlurmdTimeout=4
KillWait=2
MinJobAge=300
SchedulerType=sched/backfill
SlurmctldLogFile=$dir/ctld/slurmctld.log
SlurmctldDebug=info
SlurmctldPidFile=$dir/ctld/loomctld.pid
SlurmdPidFile=$dir/ctld/loomd.%n.pid
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=n1 NodeAddr=127.0.0.1 Port=$n1port CPUs=4 RealMemory=4000
NodeName=n2 NodeAddr=127.0.0.1 Port=$n2port CPUs=4 RealMemory=4000
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=01:00:00 DefaultTime=00:10:00
CONF
export SLURM_CONF="$dir/slurm.conf"
for _ in $(seq 50); do [[ -S "$dir/munge/munge.socket" ]] && break; sleep 0.1; done

"$bin/loomctld" -D >"$dir/loomctld.log" 2>&1 &
ctld=$!
pids+=($ctld)
"$bin/loomd" -D -N n1 --spool "$dir/spool/n1" >"$dir/loomd-n1.log" 2>&1 &
n1pid=$!
pids+=($n1pid)
"$bin/loomd" -D -N n2 --spool "$dir/spool/n2" >"$dir/loomd-n2.log" 2>&1 &
n2pid=$!
pids+=($n2pid)

# Both nodes up.
for _ in $(seq 100); do
  out=$("$bin/sinfo" -h -o '%T %D' 2>/dev/null || true)
  [[ "$out" == "idle 2" ]] && break
  sleep 0.1
done
[[ "$out" == "idle 2" ]] || fail "nodes did not come up: '$out'"

wait_state() {  # job state: waits until `squeue` stops listing it as PENDING/RUNNING
  local id=$1
  for _ in $(seq 100); do
    st=$("$bin/squeue" -h -j "$id" -t all -o '%T' 2>/dev/null || true)
    [[ "$st" != PENDING && "$st" != RUNNING && "$st" != COMPLETING && -n "$st" ]] && { echo "$st"; return; }
    sleep 0.1
  done
  echo "$st"
}

cd "$dir/work"
# 1. submit -> run -> output file -> COMPLETED, with the job's environment.
id=$("$bin/sbatch" --parsable -J hello -o 'out-%j-%x.txt' \
  --wrap 'echo "hello from $SLURM_JOB_ID on $SLURMD_NODENAME ($SLURM_JOB_NAME)"')
[[ "$id" =~ ^[0-9]+$ ]] || fail "sbatch --parsable printed '$id'"
st=$(wait_state "$id")
[[ "$st" == COMPLETED ]] || fail "job $id ended $st, not COMPLETED"
grep -q "^hello from $id on n[12] (hello)$" "out-$id-hello.txt" || fail "output: $(cat out-$id-hello.txt 2>&1)"
echo "ok: submit, run, output file, COMPLETED"
# -w and -x decide the node: both jobs run on n2, whichever node the scheduler would prefer.
on=$("$bin/sbatch" --parsable -w n2 -o on.txt --wrap 'echo $SLURMD_NODENAME')
off=$("$bin/sbatch" --parsable -x n1 -o off.txt --wrap 'echo $SLURMD_NODENAME')
[[ $(wait_state "$on") == COMPLETED && $(wait_state "$off") == COMPLETED ]] || fail "-w/-x jobs"
[[ $(cat on.txt) == n2 && $(cat off.txt) == n2 ]] || fail "-w n2 ran on $(cat on.txt), -x n1 on $(cat off.txt)"
if "$bin/sbatch" -w n9 --wrap true 2>bad-node.err; then fail "sbatch -w n9 was accepted"; fi
grep -q "Batch job submission failed: Invalid node name specified" bad-node.err ||
  fail "sbatch -w n9 said: $(cat bad-node.err)"
echo "ok: -w and -x choose the node; an unknown node is refused"

# 2. A failing job is FAILED.
bad=$("$bin/sbatch" --parsable --wrap 'exit 3')
st=$(wait_state "$bad")
[[ "$st" == FAILED ]] || fail "job $bad ended $st, not FAILED"
echo "ok: exit 3 is FAILED"

# 3. scancel of a running job: CANCELLED.
long=$("$bin/sbatch" --parsable --wrap 'sleep 300')
for _ in $(seq 50); do [[ $("$bin/squeue" -h -j "$long" -o '%T') == RUNNING ]] && break; sleep 0.1; done
"$bin/scancel" "$long"
st=$(wait_state "$long")
[[ "$st" == CANCELLED ]] || fail "job $long ended $st, not CANCELLED"
echo "ok: scancel"

# 4. Another user may not cancel root's job (needs root to create and become the user).
held=$("$bin/sbatch" --parsable --hold --wrap true)
[[ $("$bin/squeue" -h -j "$held" -o '%T %r') == "PENDING JobHeldUser" ]] || fail "held job: $("$bin/squeue" -h -j "$held" -o '%T %r')"
if [[ $EUID == 0 ]]; then
  getent passwd loomtest1 >/dev/null || useradd -M -s /usr/sbin/nologin loomtest1
  if su -s /bin/sh loomtest1 -c "SLURM_CONF=$SLURM_CONF $bin/scancel $held" 2>"$dir/scancel.err"; then
    fail "loomtest1 cancelled root's job $held"
  fi
  grep -q "Access/permission denied" "$dir/scancel.err" || fail "scancel said: $(cat "$dir/scancel.err")"
  # By user: each refusal names the job it is about.
  if su -s /bin/sh loomtest1 -c "SLURM_CONF=$SLURM_CONF $bin/scancel -u root" 2>"$dir/scancel.err"; then
    fail "loomtest1 cancelled root's jobs"
  fi
  grep -q "Kill job error on job id $held: Access/permission denied" "$dir/scancel.err" ||
    fail "scancel -u root said: $(cat "$dir/scancel.err")"
  echo "ok: user checks"
else
  echo "skipped: user checks (not root)"
fi

# 4b. scontrol: show job, update TimeLimit, release; the released job runs.
"$bin/scontrol" show job "$held" | grep -q "JobId=$held .*" || fail "scontrol show job: $("$bin/scontrol" show job "$held")"
"$bin/scontrol" update JobId="$held" TimeLimit=5:00 || fail "scontrol update TimeLimit"
"$bin/scontrol" show job "$held" | grep -q "TimeLimit=00:05:00" || fail "TimeLimit not updated: $("$bin/scontrol" show job "$held" | grep TimeLimit)"
"$bin/scontrol" release "$held"
st=$(wait_state "$held")
[[ "$st" == COMPLETED ]] || fail "released job $held ended $st"
"$bin/scontrol" ping | grep -q "is UP" || fail "scontrol ping"
held=$("$bin/sbatch" --parsable --hold --wrap true)
"$bin/scontrol" update JobId="$held" JobName=renamed NumTasks=2 || fail "scontrol update JobName NumTasks"
"$bin/scontrol" show job "$held" | grep -q "JobName=renamed" || fail "JobName not updated: $("$bin/scontrol" show job "$held" | head -1)"
if "$bin/scontrol" update JobId="$held" Shoes=red 2>"$dir/update.err"; then fail "update of an unknown field"; fi
grep -q "Update of this parameter is not supported: Shoes=red" "$dir/update.err" || fail "unknown field: $(cat "$dir/update.err")"
echo "ok: scontrol show job, update TimeLimit JobName NumTasks, release, ping"

# Stops loomctld with the signal given (-KILL, -TERM) and starts it again on the same state.
restart_ctld() {
  kill "$1" "$ctld"
  wait "$ctld" 2>/dev/null || true
  "$bin/loomctld" -D >>"$dir/loomctld.log" 2>&1 &
  ctld=$!
  pids+=($ctld)
  for _ in $(seq 100); do "$bin/squeue" -h >/dev/null 2>&1 && break; sleep 0.1; done
}

# 5. kill -9 of loomctld during submissions: every acknowledged job is still there.
acked=()
for i in $(seq 20); do
  acked+=("$("$bin/sbatch" --parsable --hold --wrap true)")
done
restart_ctld -KILL
listed=$("$bin/squeue" -h -o '%i' | sort -n | tr '\n' ' ')
for j in "${acked[@]}" "$held"; do
  [[ " $listed " == *" $j "* ]] || fail "job $j was acknowledged but is gone after the restart (listed: $listed)"
done
[[ $("$bin/squeue" -h -j "$held" -o '%j %C') == "renamed 2" ]] || fail "update lost over a restart: $("$bin/squeue" -h -j "$held" -o '%j %C')"
echo "ok: kill -9 and restart keep ${#acked[@]} acknowledged jobs and the updated one"
# An ended job still says where it ran.
ran=$("$bin/squeue" -h -j "$id" -t all -o '%T %N')
[[ "$ran" =~ ^COMPLETED\ n[12]$ ]] || fail "job $id after the restart: '$ran'"

# 5b. Steps survive a restart of loomctld: a running step is still known, ends when its
# node reports, and the job's next step is numbered on from it (no second step 0).
stepjob=$("$bin/sbatch" --parsable -o steps.out --wrap "$bin/srun sleep 3; $bin/srun hostname; echo \"steps: \$?\"")
for _ in $(seq 100); do "$bin/scontrol" show step "$stepjob.0" 2>/dev/null | grep -q State=RUNNING && break; sleep 0.1; done
"$bin/scontrol" show step "$stepjob.0" | grep -q State=RUNNING || fail "step $stepjob.0 never ran"
restart_ctld -KILL
"$bin/scontrol" show step "$stepjob.0" | grep -q "State=RUNNING" ||
  fail "step $stepjob.0 unknown after the restart: $("$bin/scontrol" show step "$stepjob.0" 2>&1)"
st=$(wait_state "$stepjob")
[[ "$st" == COMPLETED ]] || fail "job $stepjob: $st $(cat "$dir/work/steps.out" 2>&1)"
grep -qx "steps: 0" "$dir/work/steps.out" || fail "job $stepjob's steps: $(cat "$dir/work/steps.out")"
"$bin/scontrol" show step "$stepjob.0" | grep -q "State=COMPLETED" || fail "step $stepjob.0: $("$bin/scontrol" show step "$stepjob.0")"
"$bin/scontrol" show step "$stepjob.1" | grep -q "State=COMPLETED" || fail "step $stepjob.1: $("$bin/scontrol" show step "$stepjob.1")"
echo "ok: a restarted loomctld knows the running step, which completes, and numbers the next one on"

# 6. Credentials from a munged with another key are refused, and say so.
mkdir -p "$dir/munge2" && chmod 755 "$dir/munge2"
/usr/sbin/mungekey --create --keyfile="$dir/munge2/munge.key" >/dev/null 2>&1
/usr/sbin/munged --foreground --force --socket="$dir/munge2/munge.socket" \
  --key-file="$dir/munge2/munge.key" --pid-file="$dir/munge2/munged.pid" \
  --log-file="$dir/munge2.log" --seed-file="$dir/munge2/seed" &
pids+=($!)
for _ in $(seq 50); do [[ -S "$dir/munge2/munge.socket" ]] && break; sleep 0.1; done
sed "s|^AuthInfo=.*|AuthInfo=socket=$dir/munge2/munge.socket|" "$dir/slurm.conf" >"$dir/forged.conf"
if SLURM_CONF="$dir/forged.conf" "$bin/squeue" >"$dir/forged.out" 2>&1; then
  fail "a forged credential was accepted: $(cat "$dir/forged.out")"
fi
grep -qi "credential" "$dir/forged.out" || fail "forged credential error: $(cat "$dir/forged.out")"
echo "ok: forged credential refused ($(head -c 80 "$dir/forged.out"))"

# 6b. A replayed request is refused; so are bytes that are not a request. The first
# request squeue sends is caught on its way (a one-shot relay), then sent again as is.
python3 - "$cport" "$dir/slurm.conf" "$bin/squeue" <<'PY' || fail "replayed or corrupt request"
import os, socket, subprocess, sys, threading
cport, conf, squeue = int(sys.argv[1]), sys.argv[2], sys.argv[3]
relay = socket.socket(); relay.bind(("127.0.0.1", 0)); relay.listen(1)
caught = {}
def serve():
    c, _ = relay.accept(); u = socket.create_connection(("127.0.0.1", cport))
    head = c.recv(4, socket.MSG_WAITALL); n = int.from_bytes(head, "big")
    body = c.recv(n, socket.MSG_WAITALL); caught["frame"] = head + body
    u.sendall(head + body); r = u.recv(4, socket.MSG_WAITALL)
    c.sendall(r + u.recv(int.from_bytes(r, "big"), socket.MSG_WAITALL)); c.close(); u.close()
threading.Thread(target=serve, daemon=True).start()
text = open(conf).read().replace(f"SlurmctldPort={cport}", f"SlurmctldPort={relay.getsockname()[1]}")
open(conf + ".relay", "w").write(text)
subprocess.run([squeue, "-h"], env=dict(os.environ, SLURM_CONF=conf + ".relay"), check=True,
               stdout=subprocess.DEVNULL)
def ask(raw):
    s = socket.create_connection(("127.0.0.1", cport)); s.sendall(raw)
    r = s.recv(4, socket.MSG_WAITALL); n = int.from_bytes(r, "big")
    out = s.recv(n, socket.MSG_WAITALL) if n else b""; s.close(); return out
for what, raw, want in [("replayed request", caught["frame"], b"replay"),
                        ("garbage frame", b"\0\0\0\x05hello", b"corrupt request"),
                        ("oversized frame", b"\x7f\xff\xff\xffzz", b"more than the")]:
    reply = ask(raw)
    if want not in reply: sys.exit(f"{what}: unexpected answer {reply!r}")
    print(f"ok: {what} refused ({reply[4:80]!r})")
PY
"$bin/squeue" -h >/dev/null || fail "the controller stopped answering after corrupt requests"

# 6d. sbatch --test-only: when and where, nothing submitted (an id is spent, as in Slurm).
# After the restart above, the node daemons report in at their next heartbeat.
for _ in $(seq 100); do
  [[ $("$bin/sinfo" -h -N -o '%T' | grep -c -E '^(idle|mixed|allocated)$') == 2 ]] && break
  sleep 0.1
done
before=$("$bin/squeue" -h -t all | wc -l)
"$bin/sbatch" --test-only -c 2 -t 5 --wrap=true 2>"$dir/testonly.err" || fail "--test-only: $(cat "$dir/testonly.err")"
grep -Eq '^sbatch: Job [0-9]+ to start at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8} using 2 processors on nodes n[12] in partition debug$' "$dir/testonly.err" ||
  fail "--test-only said: $(cat "$dir/testonly.err")"
[[ $("$bin/squeue" -h -t all | wc -l) == "$before" ]] || fail "--test-only submitted a job"
echo "ok: sbatch --test-only ($(cat "$dir/testonly.err"))"

# 6c. scontrol update NodeName= State=DRAIN/DOWN/RESUME, as an administrator would; the
# reason survives a controller restart; a plain user may not do it.
"$bin/scontrol" update nodename=n1 state=drain reason='maintenance test' || fail "drain n1"
"$bin/sinfo" -R | grep -Eq '^maintenance test +root +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8} n1$' ||
  fail "sinfo -R after drain: $("$bin/sinfo" -R)"
"$bin/sinfo" -h -N -o '%N %T' | grep -Eq '^n1 (drained|draining)$' || fail "n1 not drained: $("$bin/sinfo" -h -N -o '%N %T')"
if "$bin/scontrol" update nodename=n1 state=drain 2>"$dir/noreason.err"; then fail "drain without a reason"; fi
grep -q "You must specify a reason" "$dir/noreason.err" || fail "no-reason error: $(cat "$dir/noreason.err")"
if su -s /bin/bash loomtest1 -c "SLURM_CONF=$SLURM_CONF $bin/scontrol update nodename=n2 state=drain reason=x" 2>"$dir/user.err"; then
  fail "a plain user drained a node"
fi
grep -q "Access/permission denied" "$dir/user.err" || fail "user drain error: $(cat "$dir/user.err")"
restart_ctld -TERM
"$bin/sinfo" -R | grep -q '^maintenance test' || fail "drain reason lost over a restart: $("$bin/sinfo" -R)"
"$bin/scontrol" update nodename=n[1-2] state=resume || fail "resume"
# The restarted controller hears from the node daemons at their next heartbeat.
for _ in $(seq 100); do [[ $("$bin/sinfo" -R | wc -l) == 1 ]] && break; sleep 0.1; done
[[ $("$bin/sinfo" -R | wc -l) == 1 ]] || fail "sinfo -R after resume: $("$bin/sinfo" -R)"
echo "ok: drain, reason kept over a restart, resume; users may not"

# 6e. scontrol reconfigure: a new partition appears and no job is lost; a file with an
# error is refused with its line and changes nothing; show config reads the new values.
jobs_before=$("$bin/squeue" -h -t all | wc -l)
cp "$dir/slurm.conf" "$dir/slurm.conf.orig"
echo "PartitionName=extra Nodes=n1 MaxTime=00:30:00" >>"$dir/slurm.conf"
"$bin/scontrol" reconfigure || fail "reconfigure"
"$bin/sinfo" -h -p extra -o '%P %l %D' | grep -q '^extra 30:00 1$' || fail "no partition extra: $("$bin/sinfo" -h)"
[[ $("$bin/squeue" -h -t all | wc -l) == "$jobs_before" ]] || fail "jobs lost over reconfigure"
cp "$dir/slurm.conf" "$dir/slurm.conf.good"
echo "NodeName=n9 CPUs=lots" >>"$dir/slurm.conf"
if "$bin/scontrol" reconfigure 2>"$dir/reconf.err"; then fail "reconfigure took a bad file"; fi
grep -q "slurm.conf:[0-9]*: error: invalid value 'lots' for CPUs" "$dir/reconf.err" || fail "reconfigure error: $(cat "$dir/reconf.err")"
cp "$dir/slurm.conf.good" "$dir/slurm.conf"
"$bin/sinfo" -h -p extra -o "%P" | grep -q "^extra$" || fail "a refused reconfigure changed something: $("$bin/sinfo" -h)"
"$bin/scontrol" show config | grep -q '^SLURM_CONF              = ' || fail "show config: $("$bin/scontrol" show config | head)"
cp "$dir/slurm.conf.orig" "$dir/slurm.conf"
"$bin/scontrol" reconfigure || fail "reconfigure back"
echo "ok: reconfigure adds a partition, keeps jobs, refuses a bad file; show config"

# 6g. scontrol requeue: a running job is stopped and runs again (Restarts=1); a pending one
# is refused.
rq=$("$bin/sbatch" --parsable --wrap 'sleep 300')
for _ in $(seq 100); do [[ $("$bin/squeue" -h -j "$rq" -o '%T') == RUNNING ]] && break; sleep 0.1; done
"$bin/scontrol" requeue "$rq" || fail "requeue $rq"
"$bin/scontrol" show job "$rq" | grep -q 'Restarts=1 ' || fail "requeue: $("$bin/scontrol" show job "$rq" | grep Restarts)"
for _ in $(seq 150); do [[ $("$bin/squeue" -h -j "$rq" -o '%T') == RUNNING ]] && break; sleep 0.1; done
[[ $("$bin/squeue" -h -j "$rq" -o '%T') == RUNNING ]] || fail "requeued job $rq did not run again: $("$bin/squeue" -h -j "$rq" -t all -o '%T %r')"
pend=$("$bin/sbatch" --parsable --hold --wrap true)
if "$bin/scontrol" requeue "$pend" 2>"$dir/requeue.err"; then fail "requeue of a pending job"; fi
grep -q "Job is pending execution" "$dir/requeue.err" || fail "requeue pending: $(cat "$dir/requeue.err")"
"$bin/scancel" "$rq" "$pend"
echo "ok: requeue runs a job again; a pending one is refused"

# 6f. A node whose daemon finds less than slurm.conf gives it is drained with Slurm's reason
# (here without SlurmdParameters=config_overrides, which the rest of this test relies on).
n3port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cp "$dir/slurm.conf" "$dir/slurm.conf.orig"
grep -v '^SlurmdParameters=' "$dir/slurm.conf.orig" >"$dir/slurm.conf"
echo "NodeName=n3 NodeAddr=127.0.0.1 Port=$n3port CPUs=4096 RealMemory=4000" >>"$dir/slurm.conf"
"$bin/scontrol" reconfigure || fail "reconfigure with n3"
"$bin/loomd" -D -N n3 --spool "$dir/spool/n3" >"$dir/loomd-n3.log" 2>&1 &
n3pid=$!
pids+=($n3pid)
for _ in $(seq 100); do "$bin/sinfo" -R | grep -q '^Low socket.* n3$' && break; sleep 0.1; done
"$bin/sinfo" -R | grep -Eq '^Low socket\*core\*thre +root +.* n3$' || fail "n3 not drained: $("$bin/sinfo" -R)"
"$bin/scontrol" show node n3 | grep -q 'Reason=Low socket\*core\*thread count, Low CPUs (reported:[0-9]* < configured:4096)' ||
  fail "n3 reason: $("$bin/scontrol" show node n3)"
kill -TERM "$n3pid"; wait "$n3pid" 2>/dev/null || true
cp "$dir/slurm.conf.orig" "$dir/slurm.conf"
"$bin/scontrol" reconfigure || fail "reconfigure without n3"
echo "ok: a node with less than configured is drained with Slurm's reason"

# 7. A node daemon killed and not restarted: its node goes DOWN after SlurmdTimeout and its
# job ends NODE_FAIL.
victim=$("$bin/sbatch" --parsable --no-requeue -w n1 --wrap 'sleep 300' 2>/dev/null ||
         "$bin/sbatch" --parsable --no-requeue --wrap 'sleep 300')
for _ in $(seq 50); do [[ $("$bin/squeue" -h -j "$victim" -o '%T') == RUNNING ]] && break; sleep 0.1; done
node=$("$bin/squeue" -h -j "$victim" -o '%N')
# The launch has reached the node (its supervisor runs) before the daemon dies.
for _ in $(seq 50); do compgen -G "$dir/spool/$node/stepd/${node}_job$victim/pid" >/dev/null && break; sleep 0.1; done
if [[ "$node" == n1 ]]; then kill -9 "$n1pid"; else kill -9 "$n2pid"; fi
for _ in $(seq 150); do
  [[ $("$bin/squeue" -h -j "$victim" -t all -o '%T') == NODE_FAIL ]] && break
  sleep 0.1
done
[[ $("$bin/squeue" -h -j "$victim" -t all -o '%T') == NODE_FAIL ]] || fail "job $victim on dead $node: $("$bin/squeue" -h -j "$victim" -t all -o '%T')"
for _ in $(seq 50); do "$bin/sinfo" -h -N -o '%N %T' | grep -q "^$node down" && break; sleep 0.1; done
"$bin/sinfo" -h -N -o '%N %T' | grep -q "^$node down" || fail "node $node: $("$bin/sinfo" -h -N -o '%N %T')"
# The controller gave the reason: sinfo -R names SlurmUser (root here) and the time.
why=$("$bin/sinfo" -R -h -o '%E|%U|%H' -n "$node")
[[ "$why" =~ ^Not\ responding\|root\(0\)\|20[0-9][0-9]-[0-9-]+T[0-9:]+$ ]] || fail "sinfo -R for $node: '$why'"
echo "ok: loomd killed -> $node down ($why), job NODE_FAIL"

# 7b. The daemon comes back: it finds the job still running under its supervisor and says
# so; the controller, for which the job ended NODE_FAIL, has it killed there.
read -r _ _ victim_pid _ <"$dir/spool/$node/stepd/${node}_job$victim/pid"
kill -0 "$victim_pid" 2>/dev/null || fail "job $victim's script should still run on $node"
"$bin/loomd" -D -N "$node" --spool "$dir/spool/$node" >>"$dir/loomd-$node.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do running "$victim_pid" || break; sleep 0.1; done
running "$victim_pid" && fail "orphan job $victim (pid $victim_pid) still runs on $node"
grep -q "node $node still runs JobId=$victim, which does not run there; killing it" "$dir/loomctld.log" ||
  fail "controller log: $(tail -5 "$dir/loomctld.log")"
[[ $("$bin/squeue" -h -j "$victim" -t all -o '%T') == NODE_FAIL ]] || fail "job $victim after the kill"
echo "ok: loomd back on $node: the job the controller had ended is killed there"

# 8. The controller's log file: Slurm's prefix, levels changed live, reopened on SIGUSR2.
log="$dir/ctld/slurmctld.log"
grep -Eq '^\[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}\] serving on ' "$log" ||
  fail "SlurmctldLogFile: $(tail -3 "$log")"
! grep -q '\] debug2: ' "$log" || fail "debug2 lines at SlurmctldDebug=info"
"$bin/scontrol" setdebug debug2 || fail "scontrol setdebug debug2"
"$bin/scontrol" setdebugflags +SCHEDULING,+BACKFILL || fail "scontrol setdebugflags"
"$bin/scontrol" show config | grep -Eq '^SlurmctldDebug += debug2$' ||
  fail "show config: $("$bin/scontrol" show config | grep -i debug)"
"$bin/scontrol" show config | grep -Eq '^DebugFlags += Backfill,Scheduling$' ||
  fail "show config: $("$bin/scontrol" show config | grep -i debug)"
if "$bin/scontrol" setdebug loud 2>"$dir/setdebug.err"; then fail "setdebug loud accepted"; fi
grep -q "invalid debug level: loud" "$dir/setdebug.err" || fail "setdebug loud: $(cat "$dir/setdebug.err")"
if [[ $EUID == 0 ]]; then
  if su -s /bin/sh loomtest1 -c "SLURM_CONF=$SLURM_CONF $bin/scontrol setdebug debug" 2>"$dir/setdebug-user.err"; then
    fail "a plain user set the controller's debug level"
  fi
  grep -q "Access/permission denied" "$dir/setdebug-user.err" || fail "user setdebug: $(cat "$dir/setdebug-user.err")"
fi
"$bin/sbatch" -o /dev/null --wrap true >/dev/null || fail "sbatch after setdebug"
for _ in $(seq 50); do grep -q '\] debug2: ' "$log" && break; sleep 0.1; done
grep -q '\] debug2: ' "$log" || fail "no debug2 line after scontrol setdebug debug2: $(tail -3 "$log")"
"$bin/scontrol" setdebug info || fail "scontrol setdebug info"
mv "$log" "$log.1"
kill -USR2 "$ctld"
for _ in $(seq 50); do [[ -s "$log" ]] && break; sleep 0.1; done
grep -q "log file reopened on SIGUSR2" "$log" || fail "no new log file after SIGUSR2"
[[ -s "$log.1" ]] || fail "the moved log file is empty"
echo "ok: SlurmctldLogFile has Slurm's prefix; setdebug/setdebugflags act live; SIGUSR2 reopens it"

# 8b. Slurm's signals and pid files: SIGHUP makes loomctld read slurm.conf again (a new
# partition appears; a broken file is refused and changes nothing) and loomd too; each
# daemon's pid file names it, and goes when it stops.
[[ $(cat "$dir/ctld/loomctld.pid") == "$ctld" ]] || fail "SlurmctldPidFile: '$(cat "$dir/ctld/loomctld.pid" 2>&1)', pid $ctld"
[[ $(cat "$dir/ctld/loomd.n2.pid") == "$n2pid" ]] || fail "SlurmdPidFile: '$(cat "$dir/ctld/loomd.n2.pid" 2>&1)', pid $n2pid"
cp "$dir/slurm.conf" "$dir/slurm.conf.before"
echo "PartitionName=extra Nodes=n2 MaxTime=00:30:00" >>"$dir/slurm.conf"
kill -HUP "$ctld"
for _ in $(seq 50); do "$bin/scontrol" show partition extra >/dev/null 2>&1 && break; sleep 0.1; done
"$bin/scontrol" show partition extra >/dev/null 2>&1 || fail "no partition extra after SIGHUP: $(tail -3 "$log")"
grep -q "reconfigured on SIGHUP" "$log" || fail "SIGHUP not logged: $(tail -3 "$log")"
echo "NodeName=n9 CPUs=banana" >>"$dir/slurm.conf"
kill -HUP "$ctld"
for _ in $(seq 50); do grep -q "reconfigure on SIGHUP refused" "$log" && break; sleep 0.1; done
grep -q "reconfigure on SIGHUP refused" "$log" || fail "a broken slurm.conf on SIGHUP: $(tail -3 "$log")"
kill -0 "$ctld" 2>/dev/null || fail "loomctld died of SIGHUP"
sed -i '$d' "$dir/slurm.conf"  # the commands read the file too: it must load again
"$bin/scontrol" show partition extra >/dev/null 2>&1 || fail "the refused reconfigure changed the partitions"
cp "$dir/slurm.conf.before" "$dir/slurm.conf"
kill -HUP "$n2pid"
for _ in $(seq 50); do grep -q "reconfigured on SIGHUP" "$dir/loomd-n2.log" && break; sleep 0.1; done
grep -q "reconfigured on SIGHUP" "$dir/loomd-n2.log" || fail "loomd on SIGHUP: $(tail -3 "$dir/loomd-n2.log")"
kill -0 "$n2pid" 2>/dev/null || fail "loomd died of SIGHUP"
kill -TERM "$n2pid"
for _ in $(seq 50); do kill -0 "$n2pid" 2>/dev/null || break; sleep 0.1; done
[[ ! -e "$dir/ctld/loomd.n2.pid" ]] || fail "loomd's pid file outlived it"
"$bin/loomctld" -V | grep -qx "slurm-wlm 22.05.8 (loom 0.1.0)" || fail "loomctld -V: $("$bin/loomctld" -V 2>&1)"
"$bin/loomd" -V | grep -qx "slurm-wlm 22.05.8 (loom 0.1.0)" || fail "loomd -V: $("$bin/loomd" -V 2>&1)"
echo "ok: SIGHUP reconfigures loomctld (a broken file refused) and loomd; pid files; -V"

# 9. A configuration with an error: loomctld says where and does not start.
printf 'ClusterName=x\nSlurmctldHost=localhost\nNodeName=a CPUs=banana\n' >"$dir/bad.conf"
if "$bin/loomctld" -f "$dir/bad.conf" 2>"$dir/bad.err"; then fail "loomctld started on a bad config"; fi
grep -q "bad.conf:3" "$dir/bad.err" || fail "bad config error: $(cat "$dir/bad.err")"
echo "ok: bad configuration refused ($(head -c 100 "$dir/bad.err"))"
echo "PASS"
