#!/usr/bin/env bash
# GPUs found by NVML on nodes whose gres.conf says AutoDetect=nvml, on loopback, with the
# test stand-in for the driver's library (loaded with dlopen from LD_LIBRARY_PATH, as the
# real libnvidia-ml.so.1 is): a node whose NVML finds what slurm.conf says comes up and runs
# GPU jobs; one whose NVML finds fewer GPUs is drained with Slurm's reason; one without the
# library falls back to gres.conf and says so; a supervisor gets what NVML found. Every
# process is started here and stopped by its PID.
#
#   tests/e2e/nvml.sh BUILD_BIN_DIR FAKE_NVML_LIBRARY
set -euo pipefail
bin=$(cd "${1:?usage: nvml.sh BUILD_BIN_DIR FAKE_NVML_LIBRARY}" && pwd)
fake=${2:?usage: nvml.sh BUILD_BIN_DIR FAKE_NVML_LIBRARY}
dir=${LOOM_E2E_DIR:-$(mktemp -d /tmp/loom-nvml.XXXXXX)}
chmod 755 "$dir"
pids=()
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap stop_all EXIT

read -r cport p1 p2 p3 < <(free_ports 4)

mkdir -p "$dir/state" "$dir/spool" "$dir/work" "$dir/lib"
chmod 777 "$dir/work"
ln -s "$fake" "$dir/lib/libnvidia-ml.so.1"
start_munged

# The hardware is compared with the configuration (no config_overrides): CPUs as this host
# has them. The stand-in "pairs4" is four GPUs with NVLink between 0-1 and 2-3.
cpus=$(nproc)
{ conf_header nvml "$cport"; cat <<CONF; } >"$dir/slurm.conf"
SlurmdTimeout=10
KillWait=2
GresTypes=gpu
NodeName=g1 NodeAddr=127.0.0.1 Port=$p1 CPUs=$cpus RealMemory=1000 Gres=gpu:a100:4
NodeName=g2 NodeAddr=127.0.0.1 Port=$p2 CPUs=$cpus RealMemory=1000 Gres=gpu:a100:8
NodeName=g3 NodeAddr=127.0.0.1 Port=$p3 CPUs=$cpus RealMemory=1000 Gres=gpu:a100:4
PartitionName=debug Nodes=g[1-3] Default=YES MaxTime=01:00:00
CONF
cat >"$dir/gres.conf" <<CONF
AutoDetect=nvml
NodeName=g[1,3] Name=gpu Type=a100 Count=4
NodeName=g2 Name=gpu Type=a100 Count=8
CONF
export SLURM_CONF="$dir/slurm.conf"

"$bin/loomctld" -D >"$dir/loomctld.log" 2>&1 &
pids+=($!)
for n in g1 g2; do
  LD_LIBRARY_PATH="$dir/lib" LOOM_FAKE_NVML=pairs4 \
    "$bin/loomd" -D -N "$n" --spool "$dir/spool/$n" >"$dir/loomd-$n.log" 2>&1 &
  pids+=($!)
done
# g3 has no driver library: gres.conf's GPUs stand.
"$bin/loomd" -D -N g3 --spool "$dir/spool/g3" >"$dir/loomd-g3.log" 2>&1 &
pids+=($!)

node_state() { "$bin/sinfo" -h -N -n "$1" -o '%T' 2>/dev/null || true; }
for _ in $(seq 100); do
  [[ $(node_state g1) == idle && $(node_state g2) == drained && $(node_state g3) == idle ]] && break
  sleep 0.1
done
[[ $(node_state g1) == idle ]] || fail "g1 is $(node_state g1)"
[[ $(node_state g3) == idle ]] || fail "g3 is $(node_state g3)"
[[ $(node_state g2) == drained ]] || fail "g2 is $(node_state g2), not drained"
"$bin/scontrol" show node g2 | grep -q "Reason=gres/gpu count reported lower than configured (4 < 8)" ||
  fail "g2's reason: $("$bin/scontrol" show node g2)"
grep -q "AutoDetect=nvml: 4 GPUs (NVIDIA A100-PCIE-40GB), 2 NVLink domains" "$dir/loomd-g1.log" ||
  fail "g1 did not say what NVML found"
grep -q "AutoDetect=nvml: NVML (libnvidia-ml.so.1) cannot be loaded; gres.conf's GPUs are used" \
  "$dir/loomd-g3.log" || fail "g3 did not say it fell back"
[[ -s "$dir/spool/g1/stepd/g1.hardware" ]] || fail "g1 left no hardware for its supervisors"
echo "ok: NVML's GPUs are checked against slurm.conf; fewer drain the node; no library falls back"

cd "$dir/work"
out=$("$bin/srun" -w g1 --gpus=2 sh -c 'echo $CUDA_VISIBLE_DEVICES') || fail "srun on g1: $out"
[[ "$out" == "0,1" ]] || fail "srun --gpus=2 on g1 saw '$out'"
job=$("$bin/sbatch" --parsable -w g1 --gpus-per-node=4 -o batch.out --wrap 'echo gpus=$CUDA_VISIBLE_DEVICES')
for _ in $(seq 100); do
  st=$("$bin/squeue" -h -j "$job" -t all -o %T)
  [[ "$st" == COMPLETED || "$st" == FAILED ]] && break
  sleep 0.1
done
[[ "$st" == COMPLETED ]] || fail "batch job on g1: $st $(cat batch.out 2>&1) $("$bin/squeue" -t all -o "%i %T %r %N")"
grep -qx "gpus=0,1,2,3" batch.out || fail "batch job saw $(cat batch.out)"
echo "ok: jobs run on a node whose GPUs NVML found"
echo "PASS"
