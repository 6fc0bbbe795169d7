#!/usr/bin/env bash
# The accounting side by side: the same jobs through real Slurm 22.05 (slurmctld, slurmdbd and
# a private MariaDB, started by the reference harness ../shared/bench/slurm-ref) and through
# Loom (`loom cluster up`, loomdbd on its embedded SQLite store), then the same questions:
# `sacct -a -X -S START` over all of them, and `sreport cluster utilization` for the day.
# Progress goes to stderr; the figures, one `metric=value unit` line each, to stdout.
#
#   bench/acct_side_by_side.sh            # from the project root, after scripts/build
#
# Knobs (environment, defaults shown):
#   BENCH_BIN=build/bin          where loom and the Slurm-named links live
#   BENCH_JOBS=20000             jobs, submitted as arrays of 1,000 tasks of `true`
#   BENCH_QUERY_RUNS=5           runs per query (the median is printed)
#   BENCH_SIDES="slurm loom"     which systems to run
#   SLURM_REF_HARNESS=../shared/bench/slurm-ref
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(cd "${BENCH_BIN:-$ROOT/build/bin}" && pwd)
JOBS=${BENCH_JOBS:-20000}
RUNS=${BENCH_QUERY_RUNS:-5}
SIDES=${BENCH_SIDES:-"slurm loom"}
HARNESS=${SLURM_REF_HARNESS:-$ROOT/../shared/bench/slurm-ref}
DIR=$(mktemp -d /tmp/loom-acct-bench.XXXXXX)
log() { printf '[acct-bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
cleanup() {
  "$BIN/loom" cluster down --dir "$DIR/cluster" >/dev/null 2>&1 || true
  if [[ -n ${slurm_up:-} ]]; then "$HARNESS/stop.sh" >/dev/null 2>&1 || true; fi
  rm -rf "$DIR"
}
trap cleanup EXIT

# The median wall time in ms of RUNS runs of a command (its output discarded).
median_ms() {
  local t=()
  for ((i = 0; i < RUNS; i++)); do
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null
    e=$(date +%s%N)
    t+=($(((e - s) / 1000)))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'
}

# Submits JOBS trivial jobs as arrays, waits for them to end and for the accounting to hold
# all of them, then measures the queries. $1 names the system in the metric lines.
run_side() {
  local name=$1 start arrays t0 t1 n
  start=$(date +%Y-%m-%dT%H:%M:%S)
  arrays=$(((JOBS + 999) / 1000))
  log "$name: submitting $JOBS jobs as $arrays arrays"
  t0=$(date +%s%N)
  for ((a = 0; a < arrays; a++)); do
    local last=$((JOBS - a * 1000 > 1000 ? 999 : JOBS - a * 1000 - 1))
    sbatch --array=0-$last -o /dev/null --wrap true >/dev/null
  done
  while [[ -n $(squeue -h -o %i | head -1) ]]; do sleep 2; done
  t1=$(date +%s%N)
  echo "${name}_exec_s=$(((t1 - t0) / 1000000000)) s"
  log "$name: all jobs ended; waiting for the accounting to hold them"
  for _ in $(seq 600); do
    n=$(sacct -a -X -n -S "$start" -o JobID | wc -l)
    ((n >= JOBS)) && break
    sleep 2
  done
  echo "${name}_sacct_rows=$n jobs"
  echo "${name}_sacct_all_ms=$(median_ms sacct -a -X -S "$start") ms"
  echo "${name}_sacct_parsable_ms=$(median_ms sacct -a -X -P -S "$start" -o JobID,State,Elapsed,AllocTRES) ms"
  echo "${name}_sreport_day_ms=$(median_ms sreport cluster utilization start=today end=now) ms"
  echo "${name}_sreport_topusage_ms=$(median_ms sreport user topusage start=today end=now) ms"
}

for side in $SIDES; do
  case $side in
    slurm)
      if [[ ! -x $HARNESS/setup.sh ]]; then
        log "no Slurm reference harness at $HARNESS; skipping Slurm"
        continue
      fi
      log "starting Slurm 22.05 with slurmdbd + MariaDB"
      SLURM_REF_ACCT=1 "$HARNESS/setup.sh" >&2
      slurm_up=1
      (
        # shellcheck source=/dev/null
        . "$HARNESS/env.sh"
        run_side slurm
      )
      "$HARNESS/stop.sh" >&2
      slurm_up=
      ;;
    loom)
      log "starting Loom (loom cluster up, 16 nodes)"
      out=$("$BIN/loom" cluster up --dir "$DIR/cluster" --nodes 16)
      (
        eval "$(grep '^export SLURM_CONF=' <<<"$out")"
        export PATH="$BIN:$PATH"
        run_side loom
      )
      "$BIN/loom" cluster down --dir "$DIR/cluster" >/dev/null
      ;;
    *) log "unknown side '$side' (use slurm, loom)"; exit 2 ;;
  esac
done
