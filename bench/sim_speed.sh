#!/usr/bin/env bash
# Simulation speed: a whole `loom sim` process (reading the gzip'd trace included) replaying
# the LANL CM-5 trace (122,060 job lines) through easy and through conservative, timed by
# hyperfine. Prints `metric=value unit` lines.
#
#   bench/sim_speed.sh [TRACE]      (default: ../shared/data/swf/LANL-CM5-1994-4.1-cln.swf.gz)
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-../shared/data/swf/LANL-CM5-1994-4.1-cln.swf.gz}
loom=${LOOM:-build/bin/loom}
[[ -f $trace ]] || { echo "sim_speed: no trace at $trace" >&2; exit 1; }
[[ -x $loom ]] || { echo "sim_speed: build first (scripts/build)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "sim_speed: needs hyperfine (scripts/install-deps)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for policy in easy conservative; do
  hyperfine -N --style none --warmup 2 --runs "${RUNS:-10}" --export-csv "$out/$policy.csv" \
    "$loom sim --trace $trace --policy $policy --json" >/dev/null
  # csv: command,mean,stddev,median,user,system,min,max (seconds)
  awk -F, -v p="$policy" 'NR==2 {printf "sim_%s_median=%.1f ms\nsim_%s_min=%.1f ms\nsim_%s_max=%.1f ms\n", p, $4*1000, p, $(NF-1)*1000, p, $NF*1000}' "$out/$policy.csv"
done
