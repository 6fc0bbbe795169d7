#!/usr/bin/env bash
# Advance reservations on a running cluster (three emulated nodes):
#   - the seed article's maintenance window, as written (scontrol create reservation
#     StartTime=now+2days Duration=12:00:00 Nodes=... Flags=maint,ignore_jobs): listed by
#     scontrol show reservation and sinfo -T; a job whose time limit runs into it waits
#     "ReqNodeNotAvail, Reserved for maintenance", a short one runs at once;
#   - an active MAINT reservation: its node shows "maint" in sinfo and takes no new job;
#   - a user reservation: --reservation jobs run on its nodes only, others stay off them
#     while it is active; a job naming an unknown reservation is refused as Slurm refuses it;
#   - reservations survive a controller restart; update moves one, delete frees its node
#     and the job that waited there starts; one that is in use is not deleted.
#
#   tests/e2e/reservation.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: reservation.sh BUILD_BIN_DIR}" && pwd)
dir=$(mktemp -d /tmp/loom-resv.XXXXXX)
cluster="$dir/cluster"
cleanup() {
  "$bin/loom" cluster down --dir "$cluster" >/dev/null 2>&1 || true
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL: $*" >&2; show_logs "$cluster"/log/*.log; exit 1; }

mkdir -p "$dir/site" "$dir/work"
cat >"$dir/site/slurm.conf" <<CONF
ClusterName=resv
SlurmctldHost=localhost
SlurmdParameters=config_overrides
NodeName=rv[1-3] CPUs=2 RealMemory=2000
PartitionName=all Nodes=rv[1-3] Default=YES MaxTime=UNLIMITED
CONF
out=$("$bin/loom" cluster up --dir "$cluster" --config "$dir/site/slurm.conf" 2>&1) || fail "up: $out"
eval "$(grep '^export SLURM_CONF=' <<<"$out")"
export PATH="$bin:$PATH"
cd "$dir/work"

state() { squeue -h -j "$1" -t all -o '%T'; }
reason() { squeue -h -j "$1" -o '%r'; }
wait_state() { wait_until "[[ \$(state $1) == $2 ]]" 300 || fail "job $1 is $(state "$1") ($(reason "$1")), not $2"; }

# The seed article's command, as written.
out=$(scontrol create reservation StartTime=now+2days Duration=12:00:00 Nodes=rv[1-2] \
  Flags=maint,ignore_jobs 2>&1) || fail "create: $out"
[[ $out == "Reservation created: root_1" ]] || fail "create said: $out"
show=$(scontrol show reservation root_1)
grep -q "^   Nodes=rv\[1-2\] NodeCnt=2 CoreCnt=4 Features=(null) PartitionName=(null) Flags=MAINT,IGNORE_JOBS,SPEC_NODES$" <<<"$show" ||
  fail "show reservation: $show"
grep -q "Duration=12:00:00$" <<<"$show" || fail "show reservation: $show"
grep -q "State=INACTIVE" <<<"$show" || fail "show reservation: $show"
sinfo -T | grep -qE "^root_1 +INACTIVE  [0-9T:-]+  [0-9T:-]+     12:00:00  rv\[1-2\]$" || fail "sinfo -T: $(sinfo -T)"
long=$(sbatch --parsable -N2 -t 3-0 --wrap 'sleep 600')
short=$(sbatch --parsable -N2 -t 10 --wrap 'true')
wait_state "$short" COMPLETED
wait_until "[[ \$(reason $long) == 'ReqNodeNotAvail, Reserved for maintenance' ]]" ||
  fail "the long job waits for: $(reason "$long")"
scancel "$long"
echo "ok: the maintenance window as written: listed, long jobs kept off, short ones run"

# Active now: the node shows maint and takes no new job.
out=$(scontrol create reservation ReservationName=fix StartTime=now Duration=30 Nodes=rv3 Flags=maint 2>&1) ||
  fail "create fix: $out"
wait_until "[[ \$(sinfo -h -n rv3 -o '%t') == maint ]]" || fail "rv3 shows $(sinfo -h -n rv3 -o '%t')"
waiting=$(sbatch --parsable -w rv3 -t 10 --wrap 'true')
wait_until "[[ \$(reason $waiting) == 'ReqNodeNotAvail, Reserved for maintenance' ]]" ||
  fail "the job on rv3 waits for: $(reason "$waiting")"
echo "ok: an active MAINT reservation: its node shows maint and runs nothing new"

# A user reservation: its jobs run there only; others stay off it.
out=$(scontrol create reservation ReservationName=team StartTime=now Duration=60 Nodes=rv2 Users=root 2>&1) ||
  fail "create team: $out"
wait_until "[[ \$(sinfo -h -n rv2 -o '%t') == resv ]]" || fail "rv2 shows $(sinfo -h -n rv2 -o '%t')"
mine=$(sbatch --parsable --reservation=team -t 5 --wrap 'hostname')
wait_state "$mine" COMPLETED
[[ $(squeue -h -j "$mine" -t all -o '%N %v') == "rv2 team" ]] || fail "the reservation's job: $(squeue -h -j "$mine" -t all -o '%N %v')"
[[ $(squeue -h -t all -R team -o '%i') == "$mine" ]] || fail "squeue -R team: $(squeue -h -t all -R team -o '%i')"
other=$(sbatch --parsable -w rv2 -t 5 --wrap 'true')
sleep 2
[[ $(state "$other") == PENDING ]] || fail "a job outside the reservation ran on rv2"
scancel "$other"
if sbatch --reservation=nosuch --wrap true >nosuch.out 2>&1; then fail "an unknown reservation was accepted"; fi
[[ $(cat nosuch.out) == "sbatch: error: Batch job submission failed: Requested reservation is invalid" ]] ||
  fail "sbatch said: $(cat nosuch.out)"
echo "ok: a user reservation: its jobs run on its node, other jobs stay off it"

# A restart keeps them; update and delete.
"$bin/loom" cluster restart --dir "$cluster" loomctld >/dev/null || fail "restart loomctld"
wait_until "scontrol show reservation >/dev/null 2>&1" || fail "the controller did not come back"
# It hears from each node at the node's next heartbeat (SlurmdTimeout/3: 20 s).
wait_until "[[ \$(sinfo -h -N -o '%t' | grep -cE '[*]|unk|down') == 0 ]]" 450 ||
  fail "nodes after restart: $(sinfo -h -N -o '%N %t')"
[[ $(scontrol show reservation | grep -c '^ReservationName=') == 3 ]] || fail "after restart: $(scontrol show reservation)"
[[ $(scontrol update ReservationName=team Duration=120 2>&1) == "Reservation updated." ]] || fail "update"
scontrol show reservation team | grep -q "Duration=02:00:00$" || fail "update: $(scontrol show reservation team)"
held=$(sbatch --parsable --reservation=team --hold --wrap true)
if scontrol delete ReservationName=team 2>del.err; then fail "a reservation in use was deleted"; fi
[[ $(cat del.err) == "delete_reservation ReservationName: Requested reservation is in use" ]] || fail "delete said: $(cat del.err)"
scancel "$held"
wait_until "[[ -z \$(squeue -h -j $held -o %i 2>/dev/null) ]]" 100 || true
scontrol delete ReservationName=fix || fail "delete fix"
wait_state "$waiting" COMPLETED
[[ $(scontrol show reservation | grep -c '^ReservationName=') == 2 ]] || fail "after delete: $(scontrol show reservation)"
echo "ok: reservations survive a restart; update moves one; delete frees its node, not while in use"
