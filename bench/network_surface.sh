#!/usr/bin/env bash
# The controller's network surface under attack, against a quiet run: 4 clients submit held
# jobs (sbatch -H) and squeue is timed, first alone, then while 1,000 idle connections
# (re-opened as the controller closes them), 100 slow-loris peers (a byte of a frame every
# 500 ms, re-opened when closed) and 16 peers announcing 64 MiB frames (re-opened when
# refused) all hit the same port. A private munged and loomctld on loopback, no nodes; every
# process is stopped by its PID. The figures, one `metric=value unit` line each, go to
# stdout; the goal is a submission rate and squeue latency (one job's line, `squeue -j 1`)
# within 2x of the quiet run, and the controller's RSS within 2x.
#
#   bench/network_surface.sh               # from the project root, after scripts/build
#
# Knobs (environment, defaults shown):
#   BENCH_BIN=build/bin   BENCH_SECONDS=10 (per phase)   BENCH_CLIENTS=4
#   BENCH_IDLE=1000   BENCH_LORIS=100   BENCH_HUGE=16
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(cd "${BENCH_BIN:-$ROOT/build/bin}" && pwd)
SECONDS_PER_PHASE=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-4}
IDLE=${BENCH_IDLE:-1000}
LORIS=${BENCH_LORIS:-100}
HUGE=${BENCH_HUGE:-16}
dir=$(mktemp -d /tmp/loom-netbench.XXXXXX)
chmod 755 "$dir"
pids=()
source "$ROOT/tests/e2e/lib.sh"
trap stop_all EXIT
log() { printf '[network-surface %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

read -r cport _ < <(free_ports 2)
mkdir -p "$dir/state"
start_munged
{ conf_header netbench "$cport"; cat <<CONF; } >"$dir/slurm.conf"
MaxJobCount=1000000
NodeName=n1 NodeAddr=127.0.0.1 Port=1 CPUs=4 RealMemory=4000
PartitionName=debug Nodes=n1 Default=YES
CONF
export SLURM_CONF="$dir/slurm.conf"
"$BIN/loomctld" -D >"$dir/loomctld.log" 2>&1 &
ctld=$!
pids+=($ctld)
for _ in $(seq 100); do "$BIN/squeue" -h >/dev/null 2>&1 && break; sleep 0.1; done

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$ctld/status"; }
# The controller's CPU so far (user + system), in clock ticks.
ctld_ticks() { awk '{print $14 + $15}' "/proc/$ctld/stat"; }

# One phase: CLIENTS submit loops and a squeue timer for SECONDS_PER_PHASE; prints
# "jobs_per_s squeue_median_ms squeue_p95_ms max_rss_kb".
phase() {
  local end=$(($(date +%s) + SECONDS_PER_PHASE)) i ticks0
  ticks0=$(ctld_ticks)
  rm -f "$dir"/count.* "$dir/squeue.ms"
  for i in $(seq "$CLIENTS"); do
    ( n=0; while (($(date +%s) < end)); do "$BIN/sbatch" -H --wrap true >/dev/null && n=$((n + 1)); done
      echo "$n" >"$dir/count.$i" ) &
  done
  local max_rss=0 r t0 t1
  while (($(date +%s) < end)); do
    # One job's line: the answer stays the same size while the queue grows, so the figure
    # is the controller's responsiveness, not the listing's length.
    t0=$(date +%s%N); "$BIN/squeue" -h -j 1 -t all >/dev/null; t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000)) >>"$dir/squeue.ms"
    r=$(rss_kb); ((r > max_rss)) && max_rss=$r
    sleep 0.2
  done
  wait  # the submit loops (the hostile peers belong to the calling shell)
  local total=0
  for i in $(seq "$CLIENTS"); do total=$((total + $(cat "$dir/count.$i"))); done
  local cpu_ms=$((($(ctld_ticks) - ticks0) * 1000 / $(getconf CLK_TCK)))
  sort -n "$dir/squeue.ms" | awk -v jobs="$total" -v secs="$SECONDS_PER_PHASE" -v rss="$max_rss" \
      -v cpu="$cpu_ms" '
    { v[NR] = $1 } END {
      printf "%.1f %.2f %.2f %d %.3f\n", jobs / secs, v[int((NR + 1) / 2)] / 1000,
             v[int(NR * 0.95 + 0.999)] / 1000, rss, cpu / (jobs > 0 ? jobs : 1) }'
}

hostile=()
log "quiet phase: $CLIENTS submit loops, squeue every 200 ms, ${SECONDS_PER_PHASE}s"
read -r q_rate q_med q_p95 q_rss q_cpu < <(phase)
log "quiet: $q_rate jobs/s, squeue median $q_med ms p95 $q_p95 ms, RSS $q_rss kB"

python3 - "$cport" "$IDLE" "$LORIS" "$HUGE" $((SECONDS_PER_PHASE + 5)) >"$dir/peers.log" 2>&1 <<'PY' &
import resource, selectors, socket, struct, sys, time
port, idle, loris, huge, secs = (int(a) for a in sys.argv[1:])
resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
sel = selectors.DefaultSelector()
kinds = {}
opened = {"idle": 0, "loris": 0, "huge": 0}
def open_one(kind):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    kinds[s] = [kind, 0]
    sel.register(s, selectors.EVENT_READ)
    opened[kind] += 1
    return s
for _ in range(idle): open_one("idle")
for _ in range(loris): open_one("loris")
for _ in range(huge): open_one("huge")
end = time.time() + secs
last_drip = 0
while time.time() < end:
    for key, _ in sel.select(timeout=0.1):
        s = key.fileobj
        try:
            data = s.recv(65536)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            data = b""
        if not data:  # closed by the controller: come back
            kind = kinds.pop(s)[0]
            sel.unregister(s)
            s.close()
            open_one(kind)
    now = time.time()
    if now - last_drip >= 0.5:
        last_drip = now
        for s, st in list(kinds.items()):
            kind, sent = st
            try:
                if kind == "loris":
                    s.send(b"\0" if sent < 3 else b"x")
                    st[1] += 1
                elif kind == "huge" and sent == 0:
                    s.send(struct.pack(">I", (64 << 20) - 1) + b"\n" * 1024)
                    st[1] = 1
            except OSError:
                pass
print("opened", opened)
PY
hostile=($!)
pids+=($!)
sleep 2
log "hostile phase: $IDLE idle, $LORIS slow-loris, $HUGE oversized-frame peers"
read -r h_rate h_med h_p95 h_rss h_cpu < <(phase)
log "hostile: $h_rate jobs/s, squeue median $h_med ms p95 $h_p95 ms, RSS $h_rss kB"
wait "${hostile[0]}" 2>/dev/null || true
log "peers: $(tail -1 "$dir/peers.log")"

echo "quiet_submit_rate=$q_rate jobs/s"
echo "hostile_submit_rate=$h_rate jobs/s"
echo "quiet_squeue_median=$q_med ms"
echo "hostile_squeue_median=$h_med ms"
echo "quiet_squeue_p95=$q_p95 ms"
echo "hostile_squeue_p95=$h_p95 ms"
echo "quiet_ctld_cpu_per_job=$q_cpu ms"
echo "hostile_ctld_cpu_per_job=$h_cpu ms"
echo "quiet_max_rss=$q_rss kB"
echo "hostile_max_rss=$h_rss kB"
awk -v qr="$q_rate" -v hr="$h_rate" -v qm="$q_med" -v hm="$h_med" -v qs="$q_rss" -v hs="$h_rss" 'BEGIN {
  printf "submit_rate_ratio=%.2f (quiet/hostile; goal <= 2)\n", qr / hr
  printf "squeue_latency_ratio=%.2f (hostile/quiet; goal <= 2)\n", hm / qm
  printf "rss_ratio=%.2f (hostile/quiet; goal <= 2)\n", hs / qs }'
