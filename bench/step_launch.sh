#!/usr/bin/env bash
# Step launch at scale, side by side: `srun -N N /bin/true` from srun's start to its exit,
# and from srun's start until every task runs (each task prints the time it started), on N
# emulated nodes of `loom cluster up` with TreeWidth=50 and TreeWidth=1, and on real Slurm
# 22.05 (the reference harness, ../shared/bench/slurm-ref, one slurmd per node) at the node
# counts it can run here. Also what one loomd costs in memory.
# Progress goes to stderr; the figures, one `metric=value unit` line each, to stdout.
#
#   bench/step_launch.sh                 # from the project root, after scripts/build
#
# Knobs (environment, defaults shown):
#   BENCH_BIN=build/bin         where loom and the Slurm-named links live
#   BENCH_NODES="16 64 256"     node counts
#   BENCH_WIDTHS="50 1"         TreeWidth values for Loom
#   BENCH_SLURM_NODES="16 64 256"  node counts for real Slurm (empty: none)
#   BENCH_RUNS=5                runs per figure (the median is printed)
#   SLURM_REF_HARNESS=../shared/bench/slurm-ref
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(cd "${BENCH_BIN:-$ROOT/build/bin}" && pwd)
NODES=${BENCH_NODES:-"16 64 256"}
WIDTHS=${BENCH_WIDTHS:-"50 1"}
SLURM_NODES=${BENCH_SLURM_NODES-"16 64 256"}
RUNS=${BENCH_RUNS:-5}
HARNESS=${SLURM_REF_HARNESS:-$ROOT/../shared/bench/slurm-ref}
DIR=$(mktemp -d /tmp/loom-launch-bench.XXXXXX)
log() { printf '[launch-bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
cleanup() {
  "$BIN/loom" cluster down --dir "$DIR/cluster" >/dev/null 2>&1 || true
  if [[ -n ${slurm_up:-} ]]; then "$HARNESS/stop.sh" >/dev/null 2>&1 || true; fi
  rm -rf "$DIR"
}
trap cleanup EXIT

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# RUNS launches of N tasks, one per node: prints "TOTAL_MS ALL_RUNNING_MS" medians. Every
# task prints the time it started; the last of them, less srun's start, is when all ran.
measure() {  # srun-command-prefix... (srun and its options)
  local totals=() starts=() s e last
  for ((i = 0; i < RUNS + 1; i++)); do
    s=$(date +%s%N)
    "$@" sh -c 'date +%s%N' >"$DIR/starts"
    e=$(date +%s%N)
    ((i == 0)) && continue  # the first run warms the page cache and the connections
    last=$(sort -n "$DIR/starts" | tail -n1)
    totals+=($(((e - s) / 1000000)))
    starts+=($(((last - s) / 1000000)))
  done
  echo "$(printf '%s\n' "${totals[@]}" | median) $(printf '%s\n' "${starts[@]}" | median)"
}

# A cluster of N nodes with TreeWidth W: one line per node range, ports chosen by `up`.
loom_config() {  # nodes width
  cat <<EOF
ClusterName=launch
SlurmctldHost=localhost(127.0.0.1)
TreeWidth=$2
SelectType=select/cons_tres
NodeName=n[001-$(printf %03d "$1")] NodeAddr=127.0.0.1 Port=17001-$((17000 + $1)) CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

for n in $NODES; do
  for w in $WIDTHS; do
    log "loom: $n nodes, TreeWidth=$w"
    mkdir -p "$DIR/conf"
    loom_config "$n" "$w" >"$DIR/conf/slurm.conf"
    out=$("$BIN/loom" cluster up --dir "$DIR/cluster" --config "$DIR/conf/slurm.conf")
    eval "$(grep '^export SLURM_CONF=' <<<"$out")"
    for _ in $(seq 600); do
      [[ $("$BIN/sinfo" -h -o '%t %D' 2>/dev/null) == "idle $n" ]] && break
      sleep 0.1
    done
    [[ $("$BIN/sinfo" -h -o '%t %D') == "idle $n" ]] || { log "not all $n nodes came up"; exit 1; }
    if [[ $w == "${WIDTHS%% *}" ]]; then
      # What a loomd costs, idle: its resident memory, and its proportional share (shared
      # libraries and pages counted once across the daemons), medians of the node daemons.
      pids=$(pgrep -f "loomd .*--spool $DIR/cluster" || true)
      rss=$(for p in $pids; do awk '/^Rss:/ {print $2}' "/proc/$p/smaps_rollup"; done | median)
      pss=$(for p in $pids; do awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup"; done | median)
      echo "loom_loomd_rss_n${n}=${rss:-0} KiB"
      echo "loom_loomd_pss_n${n}=${pss:-0} KiB"
    fi
    read -r total running < <(measure "$BIN/srun" -N "$n" --ntasks-per-node=1)
    echo "loom_srun_true_n${n}_w${w}=$total ms"
    echo "loom_all_running_n${n}_w${w}=$running ms"
    "$BIN/loom" cluster down --dir "$DIR/cluster" >/dev/null
  done
done

for n in $SLURM_NODES; do
  log "slurm: $n nodes"
  SLURM_REF_NODES=$n "$HARNESS/setup.sh" >"$DIR/slurm-setup.log" 2>&1 || {
    log "real Slurm did not come up with $n nodes: $(tail -n3 "$DIR/slurm-setup.log")"
    continue
  }
  slurm_up=1
  (
    . "$HARNESS/env.sh"
    cd "$SR_DIR/work"
    read -r total running < <(measure srun -N "$n" --ntasks-per-node=1)
    echo "slurm_srun_true_n${n}_w50=$total ms"
    echo "slurm_all_running_n${n}_w50=$running ms"
  )
  "$HARNESS/stop.sh" >/dev/null 2>&1 || true
  slurm_up=
done
