#!/usr/bin/env bash
# Loom's side of ../shared/bench/slurm-ref/bench.sh: a private `loom cluster up` cluster,
# then submission rate, execution rate, controller CPU per job, query latency and controller
# memory per held job, measured the way the Slurm reference harness measures them. Progress
# goes to stderr; the figures, one `metric=value unit` line each, to stdout at the end.
#
#   bench/cluster_bench.sh                 # from the project root, after scripts/build
#
# Besides the reference harness's figures it prints exec_host_cpu (CPU of every process of
# the host per executed job) and the exec_array_* figures (the same jobs submitted as one
# array), which tell the cluster's own execution cost from the sbatch loop's.
#
# Knobs (environment, defaults shown):
#   BENCH_BIN=build/bin        where loom, loomctld, loomd and the Slurm-named links live
#   BENCH_NODES=16             nodes of the private cluster (loom cluster up --nodes)
#   BENCH_SUBMIT_N=300         held jobs per submission-rate run
#   BENCH_PAR=4                parallel submit loops of the second run
#   BENCH_EXEC_N=1000          trivial jobs of the execution-rate run
#   BENCH_HELD_N=10000         held jobs for the query-latency / memory phase
#   BENCH_QUERY_RUNS=10        hyperfine runs per query command
#   BENCH_PHASES="held submit exec"
#   BENCH_DIR=                 the cluster's directory (default: a new one under /tmp, removed
#                              at the end unless BENCH_KEEP=1)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(cd "${BENCH_BIN:-$ROOT/build/bin}" && pwd)
NODES=${BENCH_NODES:-16}
SUBMIT_N=${BENCH_SUBMIT_N:-300}
PAR=${BENCH_PAR:-4}
EXEC_N=${BENCH_EXEC_N:-1000}
HELD_N=${BENCH_HELD_N:-10000}
QUERY_RUNS=${BENCH_QUERY_RUNS:-10}
PHASES=${BENCH_PHASES:-"held submit exec"}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/loom-bench.XXXXXX)}
ME=$(id -un)

log() { printf '[loom-bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
SUMMARY=$DIR/summary.txt
cleanup() {
  "$BIN/loom" cluster down --dir "$DIR/cluster" >/dev/null 2>&1 || true
  if [[ -z ${BENCH_DIR:-} && ${BENCH_KEEP:-0} != 1 ]]; then rm -rf "$DIR"; fi
}
trap cleanup EXIT

mkdir -p "$DIR"
: >"$SUMMARY"
log "starting a $NODES-node cluster under $DIR/cluster"
up=$("$BIN/loom" cluster up --dir "$DIR/cluster" --nodes "$NODES")
eval "$(grep '^export SLURM_CONF=' <<<"$up")"
export PATH="$BIN:$PATH"
unset SQUEUE_FORMAT SQUEUE_FORMAT2 SQUEUE_SORT SINFO_FORMAT SINFO_SORT SLURM_TIME_FORMAT
CTLD_PID=$(awk '$1 == "loomctld" {print $2}' "$DIR/cluster/run/pids")
[[ -n $CTLD_PID && -d /proc/$CTLD_PID ]] || { log "no loomctld running"; exit 1; }
CLK_TCK=$(getconf CLK_TCK)
mkdir -p "$DIR/work"
cd "$DIR/work"

# ------------------------------------------------------------------ helpers
now() { date +%s.%N; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.6f", a-b}'; }
fdiv() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b>0)?a/b:0}'; }
emit() { printf '%s=%s %s\n' "$1" "$2" "$3" >>"$SUMMARY"; printf '  %s=%s %s\n' "$1" "$2" "$3" >&2; }
ctld_rss_kb() { awk '/^VmRSS:/{print $2}' "/proc/$CTLD_PID/status"; }
# utime + stime of every thread of the controller, in seconds
ctld_cpu_s() { awk -v t="$CLK_TCK" '{printf "%.3f", ($14+$15)/t}' "/proc/$CTLD_PID/stat"; }
# CPU ticks every process of the host spent (user, nice, system, irq, softirq): the whole
# cost of a job across sbatch, the daemons, loom-stepd, munged and the job itself.
host_busy_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8; exit}' /proc/stat; }
host_cpu_per_job() { awk -v a="$2" -v b="$1" -v n="$3" -v t="$CLK_TCK" 'BEGIN{printf "%.2f", (a-b)*1000/t/n}'; }
# wait_gone NAME: until squeue lists no job of that name (10 minutes at most)
wait_gone() {
  local i
  for i in $(seq 1 6000); do
    [[ $(njobs -n "$1") -gt 0 ]] || return 0
    sleep 0.1
  done
}
cpu_per_job() { awk -v a="$2" -v b="$1" -v n="$3" 'BEGIN{printf "%.3f", (a-b)*1000/n}'; }
njobs() { squeue -h -o %i "$@" | wc -l; }  # jobs not yet ended
purge() {  # cancel all of our jobs and wait until none is left
  scancel -u "$ME" >/dev/null 2>&1 || true
  local i
  for i in $(seq 1 600); do [[ $(njobs) -eq 0 ]] && return 0; sleep 0.5; done
  log "WARNING: queue not empty after purge (5 minutes)"
}
# submit_loop COUNT FAILFILE sbatch-args...: one sequential sbatch loop
submit_loop() {
  local count=$1 failf=$2 fails=0 i
  shift 2
  for ((i = 0; i < count; i++)); do
    sbatch "$@" >/dev/null 2>>"$DIR/sbatch-errors.log" || fails=$((fails + 1))
  done
  echo "$fails" >"$failf"
}
# submit_par TOTAL P sbatch-args...: P loops at once; sets EL (seconds) and FAILS
submit_par() {
  local total=$1 p=$2 t0 t1 k per c f
  shift 2
  per=$((total / p))
  FAILS=0
  t0=$(now)
  for ((k = 0; k < p; k++)); do
    c=$per
    ((k == p - 1)) && c=$((total - per * (p - 1)))
    submit_loop "$c" "$DIR/fail.$k" "$@" &
  done
  wait
  t1=$(now)
  for ((k = 0; k < p; k++)); do
    f=$(cat "$DIR/fail.$k")
    FAILS=$((FAILS + f))
    rm -f "$DIR/fail.$k"
  done
  EL=$(fsub "$t1" "$t0")
}

log "loomctld pid $CTLD_PID; nodes: $(sinfo -h -o '%D %c %G' | tr '\n' ' ')"

# ================================================================== phase: held
# First, as the reference harness does: the memory per held job is measured on a nearly
# fresh controller, not on one whose heap earlier phases grew.
if [[ " $PHASES " == *" held "* ]]; then
  log "phase held: $HELD_N held jobs from 4 submitters"
  rss0=$(ctld_rss_kb)
  c0=$(ctld_cpu_s)
  submit_par "$HELD_N" 4 -H -J held -o /dev/null --wrap=true
  c1=$(ctld_cpu_s)
  n=$(njobs -t PD)
  rss1=$(ctld_rss_kb)
  log "  submitted in ${EL}s, failures=$FAILS, pending=$n"
  emit held_submit_par4_rate "$(fdiv "$HELD_N" "$EL")" jobs/s
  emit held_submit_ctld_cpu "$(cpu_per_job "$c0" "$c1" "$HELD_N")" ms/job
  emit held_jobs_pending "$n" jobs
  emit ctld_rss_baseline "$rss0" KB
  emit ctld_rss_with_held "$rss1" KB
  emit ctld_rss_per_held_job "$(awk -v a="$rss1" -v b="$rss0" -v n="$n" 'BEGIN{printf "%.2f", (n>0)?(a-b)/n:0}')" KB/job
  # What the controller spends per second doing nothing new with the queue full.
  c0=$(ctld_cpu_s)
  sleep 5
  c1=$(ctld_cpu_s)
  emit "ctld_idle_cpu_${HELD_N}held" "$(awk -v a="$c1" -v b="$c0" 'BEGIN{printf "%.1f", (a-b)*1000/5}')" ms/s
  declare -A Q=(
    [squeue]="squeue"
    [squeue_fmt]="squeue -o '%i %j %T %R'"
    [squeue_json]="squeue --json"
    [sinfo]="sinfo"
  )
  for k in squeue squeue_fmt squeue_json sinfo; do
    if command -v hyperfine >/dev/null; then
      hyperfine -N --style none --warmup 1 --runs "$QUERY_RUNS" --export-csv "$DIR/q-$k.csv" \
        "${Q[$k]}" >/dev/null 2>>"$DIR/hyperfine.log" || { log "hyperfine $k failed"; continue; }
      # command,mean,stddev,median,user,system,min,max (seconds)
      read -r mn md mx < <(awk -F, 'NR==2{printf "%.2f %.2f %.2f\n", $(NF-1)*1000, $(NF-4)*1000, $NF*1000}' "$DIR/q-$k.csv")
    else
      times=()
      for ((r = 0; r < QUERY_RUNS; r++)); do
        t0=$(now)
        eval "${Q[$k]}" >/dev/null
        times+=("$(awk -v a="$(now)" -v b="$t0" 'BEGIN{printf "%.2f", (a-b)*1000}')")
      done
      read -r mn md mx < <(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END{print a[1], a[int((NR+1)/2)], a[NR]}')
    fi
    emit "query_${k}_${HELD_N}held_min" "$mn" ms
    emit "query_${k}_${HELD_N}held_median" "$md" ms
    emit "query_${k}_${HELD_N}held_max" "$mx" ms
  done
  emit query_squeue_json_bytes "$(squeue --json | wc -c)" bytes
  t0=$(now)
  purge
  emit held_cancel_all_time "$(printf '%.2f' "$(fsub "$(now)" "$t0")")" s
fi

# ================================================================ phase: submit
if [[ " $PHASES " == *" submit "* ]]; then
  for p in 1 $PAR; do
    c0=$(ctld_cpu_s)
    submit_par "$SUBMIT_N" "$p" -H -J sub -o /dev/null --wrap=true
    c1=$(ctld_cpu_s)
    name=submit_seq
    ((p > 1)) && name=submit_par$p
    log "submit P=$p: $SUBMIT_N jobs in ${EL}s, failures=$FAILS"
    emit "${name}_rate" "$(fdiv "$SUBMIT_N" "$EL")" jobs/s
    emit "${name}_ctld_cpu" "$(cpu_per_job "$c0" "$c1" "$SUBMIT_N")" ms/job
    purge
  done
fi

# ================================================================== phase: exec
if [[ " $PHASES " == *" exec "* ]]; then
  c0=$(ctld_cpu_s)
  h0=$(host_busy_ticks)
  t0=$(now)
  submit_loop "$EXEC_N" "$DIR/fail.exec" -J exec1 -n1 -o /dev/null --wrap=true
  t1=$(now)
  wait_gone exec1
  t2=$(now)
  c1=$(ctld_cpu_s)
  h1=$(host_busy_ticks)
  states=$(squeue -h -t all -n exec1 -o %T | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')
  log "exec: $EXEC_N jobs done in $(fsub "$t2" "$t0")s; states: $states; failures=$(cat "$DIR/fail.exec")"
  emit exec_rate "$(fdiv "$EXEC_N" "$(fsub "$t2" "$t0")")" jobs/s
  emit exec_submit_rate "$(fdiv "$EXEC_N" "$(fsub "$t1" "$t0")")" jobs/s
  emit exec_ctld_cpu "$(cpu_per_job "$c0" "$c1" "$EXEC_N")" ms/job
  emit exec_completed "$(squeue -h -t CD -n exec1 -o %i | wc -l)" jobs
  emit exec_host_cpu "$(host_cpu_per_job "$h0" "$h1" "$EXEC_N")" ms/job
  purge

  # The same jobs as one array: what the cluster executes once the sbatch loop is out of the
  # way (one submission, then the controller, loomd, loom-stepd and the jobs themselves).
  c0=$(ctld_cpu_s)
  h0=$(host_busy_ticks)
  t0=$(now)
  sbatch -J exec2 --array=0-$((EXEC_N - 1)) -o /dev/null --wrap=true >/dev/null
  wait_gone exec2
  t2=$(now)
  c1=$(ctld_cpu_s)
  h1=$(host_busy_ticks)
  emit exec_array_rate "$(fdiv "$EXEC_N" "$(fsub "$t2" "$t0")")" jobs/s
  emit exec_array_ctld_cpu "$(cpu_per_job "$c0" "$c1" "$EXEC_N")" ms/job
  emit exec_array_host_cpu "$(host_cpu_per_job "$h0" "$h1" "$EXEC_N")" ms/job
  emit exec_array_completed "$(squeue -h -t CD -n exec2 -o %i | wc -l)" jobs
  purge
fi

log "done"
cat "$SUMMARY"
