#!/usr/bin/env bash
# What job_submit.lua costs a submission: one `sbatch -H` (held, so nothing runs) timed by
# hyperfine on a private `loom cluster up --config` cluster, without JobSubmitPlugins and
# then with examples/policy/job_submit.lua, on the same machine one after the other.
#
#   bench/job_submit_cost.sh            # from the project root, after scripts/build
#
# Knobs: BENCH_BIN=build/bin, BENCH_RUNS=300 (hyperfine runs per case).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(cd "${BENCH_BIN:-$ROOT/build/bin}" && pwd)
RUNS=${BENCH_RUNS:-300}
DIR=$(mktemp -d /tmp/loom-jsbench.XXXXXX)
cleanup() {
  for c in "$DIR"/none "$DIR"/lua; do "$BIN/loom" cluster down --dir "$c/cluster" >/dev/null 2>&1 || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT

for mode in none lua; do
  site="$DIR/$mode/site"
  mkdir -p "$site"
  cat >"$site/slurm.conf" <<CONF
ClusterName=jsbench
SlurmctldHost=localhost
SlurmdParameters=config_overrides
MaxJobCount=100000
NodeName=jsb$$ CPUs=4 RealMemory=4000
PartitionName=normal Nodes=jsb$$ Default=YES MaxTime=2-00:00:00
PartitionName=debug Nodes=jsb$$ MaxTime=01:00:00
PartitionName=long Nodes=jsb$$ MaxTime=14-00:00:00
CONF
  if [[ $mode == lua ]]; then
    echo "JobSubmitPlugins=lua" >>"$site/slurm.conf"
    cp "$ROOT/examples/policy/job_submit.lua" "$site/"
  fi
  out=$("$BIN/loom" cluster up --dir "$DIR/$mode/cluster" --config "$site/slurm.conf" 2>&1)
  conf=$(sed -n 's/^export SLURM_CONF=//p' <<<"$out")
  SLURM_CONF=$conf hyperfine -N --warmup 20 --runs "$RUNS" --style none \
    --export-json "$DIR/$mode.json" "$BIN/sbatch -H -t 30 --wrap true" >/dev/null
  python3 - "$DIR/$mode.json" "$mode" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
t = sorted(r["times"])
print(f"sbatch_{sys.argv[2]}_median_ms={r['median']*1000:.2f} p90_ms={t[int(len(t)*0.9)]*1000:.2f} "
      f"min_ms={r['min']*1000:.2f} runs={len(t)}")
PY
  "$BIN/loom" cluster down --dir "$DIR/$mode/cluster" >/dev/null 2>&1 || true
done
