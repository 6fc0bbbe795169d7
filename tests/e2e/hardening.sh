#!/usr/bin/env bash
# The controller's network surface and fault paths, attacked as a hostile peer and a bad day
# would: peers that stall (one byte, a Ping and then silence), frames announcing 64 MiB
# before any credential, more idle connections than the cap, a node daemon that dies under
# a requeue-able job and comes back, and a full disk under StateSaveLocation. Each part
# checks what a user sees (squeue answers, nothing is lost) and what the controller does.
# Every daemon is started here and stopped by its PID.
#
#   tests/e2e/hardening.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: hardening.sh BUILD_BIN_DIR}" && pwd)
dir=${LOOM_E2E_DIR:-$(mktemp -d /tmp/loom-e2e.XXXXXX)}
chmod 755 "$dir"
pids=()
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mounted=""
cleanup() {
  stop_all_keep=${LOOM_KEEP_TEST_DIRS:-0}
  LOOM_KEEP_TEST_DIRS=1 stop_all
  [[ -n "$mounted" ]] && umount "$mounted" 2>/dev/null
  if [[ "$stop_all_keep" != 1 ]]; then rm -rf "$dir"; fi
  return 0
}
trap cleanup EXIT

read -r cport n1port n2port < <(free_ports 3)
mkdir -p "$dir/state" "$dir/spool" "$dir/work"
chmod 777 "$dir/work"
start_munged

# The state on a small filesystem of its own, so that part 5 can fill it (root only).
if [[ $EUID -eq 0 ]] && mount -t tmpfs -o size=8m tmpfs "$dir/state" 2>/dev/null; then
  mounted="$dir/state"
fi

{ conf_header hard "$cport"; cat <<CONF; } >"$dir/slurm.conf"
SlurmdTimeout=4
KillWait=2
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
NodeName=n1 NodeAddr=127.0.0.1 Port=$n1port CPUs=4 RealMemory=4000
NodeName=n2 NodeAddr=127.0.0.1 Port=$n2port CPUs=4 RealMemory=4000
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=01:00:00 DefaultTime=00:10:00
CONF
export SLURM_CONF="$dir/slurm.conf"

start_ctld() {
  "$bin/loomctld" -D >>"$dir/loomctld.log" 2>&1 &
  ctld=$!
  pids+=($ctld)
}
start_node() {
  "$bin/loomd" -D -N "$1" --spool "$dir/spool/$1" >>"$dir/loomd-$1.log" 2>&1 &
  pids+=($!)
  eval "${1}pid=$!"
}
start_ctld
start_node n1
start_node n2
for _ in $(seq 100); do
  out=$("$bin/sinfo" -h -o '%T %D' 2>/dev/null || true)
  [[ "$out" == "idle 2" ]] && break
  sleep 0.1
done
[[ "$out" == "idle 2" ]] || fail "nodes did not come up: '$out'"

# Milliseconds one squeue takes.
squeue_ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$bin/squeue" -h >/dev/null || { echo 99999; return; }
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$ctld/status"; }

# Peers in the background, each stopped by its PID at the end of its part.
peers() {  # peers MODE COUNT SECONDS: hostile connections held open for SECONDS
  python3 - "$cport" "$@" >>"$dir/peers.log" 2>&1 <<'PY' &
import socket, struct, sys, time, resource
port, mode, count, secs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
conns = []
end = time.time() + secs
def open_one():
    s = socket.create_connection(("127.0.0.1", port))
    if mode == "byte":
        s.send(b"\0")
    elif mode == "ping":      # a whole frame with no credential, then silence
        s.send(struct.pack(">I", 6) + b"\n\x04Ping")
    elif mode == "huge":      # announces 64 MiB, sends a little
        s.send(struct.pack(">I", (64 << 20) - 1) + b"\n" * 1024)
    return s
for _ in range(count):
    conns.append(open_one())
while time.time() < end:
    time.sleep(0.2)
    if mode == "idle":        # re-opened as the server closes them
        for i, s in enumerate(conns):
            try:
                s.setblocking(False)
                if s.recv(1) == b"":
                    raise OSError
            except BlockingIOError:
                continue
            except OSError:
                s.close()
                conns[i] = open_one()
PY
  echo $!
}

# 1. Stalled peers: every frame worker used to wait on them; squeue stays quick.
quiet=$(squeue_ms)
p1=$(peers byte 16 8); p2=$(peers ping 16 8); p3=$(peers byte 64 8)
sleep 1
loaded=$(squeue_ms)
kill "$p1" "$p2" "$p3" 2>/dev/null || true
wait "$p1" "$p2" "$p3" 2>/dev/null || true
((loaded < 2000)) || fail "squeue took $loaded ms behind 96 stalled peers (quiet: $quiet ms)"
echo "ok: 96 stalled peers: squeue in $loaded ms (quiet: $quiet ms)"

# 2. Frames that announce 64 MiB before any credential: refused from their first bytes.
before=$(rss_kb)
p1=$(peers huge 16 4)
sleep 1.5
during=$(rss_kb)
kill "$p1" 2>/dev/null || true
wait "$p1" 2>/dev/null || true
((during - before < 20000)) || fail "16 oversized frames took the controller from $before to $during kB"
echo "ok: 16 peers announcing 64 MiB: RSS $before -> $during kB"

# 2b. A large script is read once its credential is known: 256 KiB, four times what a
# frame may carry before its connection authenticates.
{ echo '#!/bin/sh'; for i in $(seq 4000); do echo "# padding line $i of a long generated script ......"; done
  echo 'echo large-script-ran'; } >"$dir/work/large.sh"
big=$("$bin/sbatch" --parsable -o "$dir/work/large.out" "$dir/work/large.sh") || fail "large script refused"
for _ in $(seq 100); do [[ -s "$dir/work/large.out" ]] && break; sleep 0.1; done
grep -q large-script-ran "$dir/work/large.out" || fail "job $big (a $(stat -c %s "$dir/work/large.sh")-byte script) did not run"
echo "ok: a $(stat -c %s "$dir/work/large.sh")-byte script is accepted and runs"

# 3. More idle connections than the cap of unauthenticated ones: the oldest make room.
p1=$(peers idle 1100 6)
sleep 2
loaded=$(squeue_ms)
"$bin/sbatch" -H --wrap true >/dev/null || fail "sbatch behind 1,100 idle connections"
kill "$p1" 2>/dev/null || true
wait "$p1" 2>/dev/null || true
((loaded < 2000)) || fail "squeue took $loaded ms behind 1,100 idle connections"
echo "ok: 1,100 idle connections: squeue in $loaded ms, sbatch accepted"
kill -0 "$ctld" || fail "the controller died"

# 4. A requeue-able job whose node daemon dies: requeued after SlurmdTimeout (Restarts=1);
# when the daemon returns with the earlier run still under its supervisor, that run is
# killed and the job runs there again, not FAILED.
rq=$("$bin/sbatch" --parsable --requeue -w n1 -o /dev/null --wrap 'sleep 300')
for _ in $(seq 50); do compgen -G "$dir/spool/n1/stepd/n1_job$rq/pid" >/dev/null && break; sleep 0.1; done
read -r _ _ first_pid _ <"$dir/spool/n1/stepd/n1_job$rq/pid"
kill -9 "$n1pid"
for _ in $(seq 150); do
  [[ $("$bin/squeue" -h -j "$rq" -t all -o '%T') == PENDING ]] && break
  sleep 0.1
done
[[ $("$bin/squeue" -h -j "$rq" -t all -o '%T') == PENDING ]] || fail "job $rq on dead n1: $("$bin/squeue" -h -j "$rq" -t all -o '%T %r')"
"$bin/scontrol" show job "$rq" | grep -q 'Restarts=1 ' || fail "requeue for the node: $("$bin/scontrol" show job "$rq" | grep -o 'Restarts=[0-9]*')"
start_node n1
for _ in $(seq 150); do
  st=$("$bin/squeue" -h -j "$rq" -t all -o '%T')
  [[ "$st" == RUNNING ]] && ! running "$first_pid" && break
  sleep 0.1
done
running "$first_pid" && fail "the earlier run of job $rq (pid $first_pid) still runs"
[[ "$st" == RUNNING ]] || fail "job $rq after n1 returned: $("$bin/squeue" -h -j "$rq" -t all -o '%T %r'); $(grep "JobId=$rq" "$dir/loomctld.log" | tail -3)"
sleep 2  # the earlier run's end has been reported by now: it must not end this one
[[ $("$bin/squeue" -h -j "$rq" -t all -o '%T %N') == "RUNNING n1" ]] || fail "job $rq: $("$bin/squeue" -h -j "$rq" -t all -o '%T %N')"
"$bin/scancel" "$rq"
echo "ok: node back under a requeued job: its earlier run killed, the job RUNNING on n1 again"

# 5. A full disk under StateSaveLocation: refused with a clear message, queries answered,
# taken again once there is room; nothing acknowledged is lost across a kill -9.
if [[ -n "$mounted" ]]; then
  acked=()
  for i in $(seq 20); do acked+=("$("$bin/sbatch" --parsable -H --wrap true)"); done
  dd if=/dev/zero of="$mounted/filler" bs=64k 2>/dev/null || true
  refused=0
  for i in $(seq 200); do
    if id=$("$bin/sbatch" --parsable -H --wrap "echo $i $(head -c 3000 /dev/zero | tr '\0' x)" 2>"$dir/full.err"); then
      acked+=("$id")
    else
      refused=1
      break
    fi
  done
  ((refused)) || fail "200 submissions on a full disk were all accepted"
  grep -q "disk is full" "$dir/full.err" || fail "refusal: $(cat "$dir/full.err")"
  kill -0 "$ctld" || fail "the controller died on a full disk: $(tail -3 "$dir/loomctld.log")"
  "$bin/squeue" -h >/dev/null || fail "squeue on a full disk"
  "$bin/sinfo" -h >/dev/null || fail "sinfo on a full disk"
  if "$bin/sbatch" -H --wrap true 2>/dev/null; then fail "accepted on a full disk"; fi
  rm -f "$mounted/filler"
  ok=""
  for _ in $(seq 100); do
    if id=$("$bin/sbatch" --parsable -H --wrap true 2>/dev/null); then ok=$id; break; fi
    sleep 0.1
  done
  [[ -n "$ok" ]] || fail "submissions still refused after the disk has room again"
  acked+=("$ok")
  kill -9 "$ctld"
  wait "$ctld" 2>/dev/null || true
  start_ctld
  for _ in $(seq 100); do "$bin/squeue" -h >/dev/null 2>&1 && break; sleep 0.1; done
  for id in "${acked[@]}"; do
    [[ -n $("$bin/squeue" -h -j "$id" -t all -o '%i' 2>/dev/null) ]] || fail "acknowledged job $id lost"
  done
  echo "ok: full disk: refused ($(head -c 90 "$dir/full.err")...), served, recovered; ${#acked[@]} acknowledged jobs kept"
else
  echo "skip: full disk (needs root to mount a tmpfs)"
fi
echo "PASS"
