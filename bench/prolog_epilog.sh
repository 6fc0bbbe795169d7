#!/usr/bin/env bash
# What the site's Prolog and Epilog cost a job's turnaround: BENCH_JOBS one-node jobs
# (`sbatch --wrap true`) submitted back to back to BENCH_NODES emulated nodes of
# `loom cluster up`, timed from the first submission until every job is COMPLETED and every
# node idle again, without Prolog/Epilog, then with Prolog=/bin/true and Epilog=/bin/true
# (each job's end then waits for a TerminateJob to its node and the EpilogComplete back).
# Progress goes to stderr; the figures, one `metric=value unit` line each, to stdout.
#
#   bench/prolog_epilog.sh              # from the project root, after scripts/build
#
# Knobs (environment, defaults shown): BENCH_BIN=build/bin BENCH_JOBS=200 BENCH_NODES=4
# BENCH_RUNS=3 (the median is printed)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(cd "${BENCH_BIN:-$ROOT/build/bin}" && pwd)
JOBS=${BENCH_JOBS:-200}
NODES=${BENCH_NODES:-4}
RUNS=${BENCH_RUNS:-3}
DIR=$(mktemp -d /tmp/loom-prolog-bench.XXXXXX)
log() { printf '[prolog-bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
cleanup() {
  "$BIN/loom" cluster down --dir "$DIR/cluster" >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# One configuration: prints the median milliseconds for the batch of jobs.
measure() {  # extra slurm.conf lines
  mkdir -p "$DIR/site"
  cat >"$DIR/site/slurm.conf" <<CONF
ClusterName=bench
SlurmctldHost=localhost
SlurmdParameters=config_overrides
NodeName=b[1-$NODES] CPUs=4 RealMemory=4000
PartitionName=all Nodes=b[1-$NODES] Default=YES MaxTime=01:00:00
$1
CONF
  local out times=() start
  out=$("$BIN/loom" cluster up --dir "$DIR/cluster" --config "$DIR/site/slurm.conf" 2>&1) ||
    { echo "$out" >&2; exit 1; }
  eval "$(grep '^export SLURM_CONF=' <<<"$out")"
  cd "$DIR"
  for run in $(seq 0 "$RUNS"); do  # run 0 warms up
    start=$(now_ms)
    for _ in $(seq "$JOBS"); do "$BIN/sbatch" -o /dev/null --wrap true >/dev/null; done
    until [[ -z $("$BIN/squeue" -h -o %i) ]] &&
      [[ $("$BIN/sinfo" -h -o '%t %D') == "idle $NODES" ]]; do sleep 0.05; done
    (( run == 0 )) || times+=($(($(now_ms) - start)))
  done
  "$BIN/loom" cluster down --dir "$DIR/cluster" >/dev/null 2>&1
  cd "$ROOT"
  printf '%s\n' "${times[@]}" | median
}

log "$JOBS jobs on $NODES nodes, no prolog or epilog"
plain=$(measure "")
log "the same with Prolog=/bin/true and Epilog=/bin/true"
scripts=$(measure "Prolog=/bin/true
Epilog=/bin/true")
echo "jobs_without_scripts_ms=$plain ms"
echo "jobs_with_prolog_epilog_ms=$scripts ms"
echo "per_job_cost_ms=$(awk -v a="$plain" -v b="$scripts" -v n="$JOBS" 'BEGIN {printf "%.2f", (b - a) / n}') ms"
