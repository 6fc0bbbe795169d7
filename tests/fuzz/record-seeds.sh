#!/usr/bin/env bash
# Records the seeds of the network fuzzers from real traffic: a private cluster on loopback
# (munged, loomctld, one loomd), the CLI's frames caught by a proxy between the commands and
# the controller, and the launch requests loomd hands its supervisors (launch.pb). Writes
#   tests/fuzz/corpus/frame/         what the controller reads off its port, as it arrived
#   tests/fuzz/corpus/request/       each request body, as request_fuzzer's records
#   tests/fuzz/corpus/node_message/  LaunchBatchRequests and control lines
# Every daemon is started here and stopped by its PID.
#
#   tests/fuzz/record-seeds.sh BUILD_BIN_DIR
set -euo pipefail
# sbatch sends its environment: record with a bare one, so seeds carry nothing of the host.
if [[ -z ${LOOM_SEEDS_BARE_ENV:-} ]]; then
  exec env -i LOOM_SEEDS_BARE_ENV=1 PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    bash "$0" "$@"
fi
bin=$(cd "${1:?usage: record-seeds.sh BUILD_BIN_DIR}" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(mktemp -d /tmp/loom-seeds.XXXXXX)
chmod 755 "$dir"
pids=()
source "$root/tests/e2e/lib.sh"
trap stop_all EXIT
read -r cport pport nport < <(free_ports 3)
mkdir -p "$dir/state" "$dir/spool" "$dir/frames"
# The commands run from the test directory by a path inside it: their environment ($_, no
# OLDPWD) names nothing outside it.
ln -s "$bin" "$dir/bin"
bin=$dir/bin
cd "$dir"
unset OLDPWD
start_munged
{ conf_header seeds "$cport"; cat <<CONF; } >"$dir/slurm.conf"
SlurmdParameters=config_overrides
NodeName=n1 NodeAddr=127.0.0.1 Port=$nport CPUs=4 RealMemory=4000
PartitionName=debug Nodes=n1 Default=YES MaxTime=01:00:00
CONF
# The commands reach the controller through the proxy's port.
sed "s/^SlurmctldPort=.*/SlurmctldPort=$pport/" "$dir/slurm.conf" >"$dir/client.conf"
"$bin/loomctld" -D -f "$dir/slurm.conf" >"$dir/loomctld.log" 2>&1 &
pids+=($!)
"$bin/loomd" -D -f "$dir/slurm.conf" -N n1 --spool "$dir/spool/n1" >"$dir/loomd.log" 2>&1 &
pids+=($!)
python3 - "$pport" "$cport" "$dir/frames" >"$dir/proxy.log" 2>&1 <<'PY' &
import os, socket, sys, threading
listen, target, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
count = [0]
lock = threading.Lock()
def pipe(src, dst, record):
    data = b""
    while True:
        chunk = src.recv(65536)
        if not chunk:
            break
        dst.sendall(chunk)
        if record:
            data += chunk
    if record and data:
        with lock:
            count[0] += 1
            with open(os.path.join(out, "stream-%03d" % count[0]), "wb") as f:
                f.write(data)
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", listen))
s.listen(64)
while True:
    c, _ = s.accept()
    u = socket.create_connection(("127.0.0.1", target))
    threading.Thread(target=pipe, args=(c, u, True), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c, False), daemon=True).start()
PY
pids+=($!)
export SLURM_CONF="$dir/client.conf"
for _ in $(seq 100); do [[ $("$bin/sinfo" -h -o '%T' 2>/dev/null) == idle ]] && break; sleep 0.1; done

# What users and admins send.
"$bin/sbatch" -J seed -o /dev/null --wrap 'sleep 30' >/dev/null
"$bin/sbatch" -H -J held --array=1-3%2 -t 5 --mem=100 -o /dev/null --wrap true >/dev/null
"$bin/sbatch" -H -d afterok:1 -N1 -n2 -c1 --gpus-per-node=0 -o /dev/null --wrap true >/dev/null || true
"$bin/sbatch" --test-only --wrap true >/dev/null 2>&1 || true
"$bin/squeue" >/dev/null; "$bin/squeue" -u root -t PD -o '%i %T' >/dev/null; "$bin/squeue" --json >/dev/null || true
"$bin/sinfo" >/dev/null; "$bin/sinfo" -R >/dev/null
"$bin/scontrol" show job 2 >/dev/null; "$bin/scontrol" show node n1 >/dev/null
"$bin/scontrol" show config >/dev/null; "$bin/scontrol" update jobid=2 TimeLimit=2 >/dev/null || true
"$bin/scontrol" hold 3 >/dev/null || true; "$bin/scontrol" release 3 >/dev/null || true
"$bin/scontrol" update nodename=n1 state=drain reason=seeds >/dev/null
"$bin/scontrol" update nodename=n1 state=resume >/dev/null
"$bin/scontrol" show step >/dev/null 2>&1 || true
"$bin/sdiag" >/dev/null; "$bin/scancel" 2 >/dev/null || true; "$bin/scancel" -u root -t PD >/dev/null || true
for _ in $(seq 50); do compgen -G "$dir/spool/n1/stepd/*/launch.pb" >/dev/null && break; sleep 0.1; done
"$bin/scancel" 1 >/dev/null || true
sleep 0.5

corpus=$root/tests/fuzz/corpus
mkdir -p "$corpus/frame" "$corpus/request" "$corpus/node_message"
# frame_fuzzer: a byte choosing the pieces, then the stream as the controller read it.
n=0
for f in "$dir"/frames/stream-*; do
  n=$((n + 1))
  { printf '\x5a'; cat "$f"; } >"$corpus/frame/recorded-$n"
done
# request_fuzzer: each frame's body as a record of its kind (see request_fuzzer.cc).
python3 - "$dir/frames" "$corpus/request" <<'PY'
import os, struct, sys
src, out = sys.argv[1], sys.argv[2]
kinds = {"Submit": 0, "UpdateJob": 1, "SignalJob": 2, "Heartbeat": 3, "JobComplete": 4,
         "RegisterNode": 5}
def fields(b):  # (number, bytes) of a message's length-delimited fields
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        if tag & 7 != 2:
            return
        n, i = varint(b, i)
        yield tag >> 3, b[i:i + n]
        i += n
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
records = []
for name in sorted(os.listdir(src)):
    data = open(os.path.join(src, name), "rb").read()
    while len(data) >= 4:
        n = struct.unpack(">I", data[:4])[0]
        frame, data = data[4:4 + n], data[4 + n:]
        f = dict(fields(frame))
        method = f.get(1, b"").decode(errors="replace")
        if method in kinds:
            body = f.get(3, b"")[:65535]
            records.append(bytes([kinds[method]]) + struct.pack(">H", len(body)) + body)
        records.append(bytes([7]) + struct.pack(">H", len(frame[:65535])) + frame[:65535])
for i, r in enumerate(records):
    open(os.path.join(out, "recorded-%d" % i), "wb").write(r)
# One input that replays them all in order, with time passing between.
open(os.path.join(out, "recorded-all"), "wb").write(b"".join(r + b"\x0f\x00\x00" for r in records))
PY
# node_message_fuzzer: the launches loomd handed its supervisor, and control lines.
n=0
for f in "$dir"/spool/n1/stepd/*/launch.pb; do
  [[ -f "$f" ]] || continue
  n=$((n + 1))
  { printf '\x00'; cat "$f"; } >"$corpus/node_message/launch-batch-$n"
done
printf '\x02ping' >"$corpus/node_message/control-ping"
printf '\x02signal 15' >"$corpus/node_message/control-signal"
printf '\x02terminate 30' >"$corpus/node_message/control-terminate"
printf '\x03ok' >"$corpus/node_message/reply-ok"
printf '\x03error: no such process' >"$corpus/node_message/reply-error"
echo "record-seeds: $(ls "$corpus/frame" | wc -l) frame, $(ls "$corpus/request" | wc -l) request," \
     "$(ls "$corpus/node_message" | wc -l) node_message seeds"
