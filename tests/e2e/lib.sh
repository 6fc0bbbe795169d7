# What the end-to-end scripts that start their own daemons share; sourced, not run.
# Needs `dir` (the test's directory) and `pids` (an array) set by the script.

# Prints the end of each log named, or, where a sanitizer reported in it, its report.
show_logs() {
  local f found='ERROR: (Address|Leak|Thread)Sanitizer|runtime error:'
  for f in "$@"; do
    [[ -f "$f" ]] || continue
    echo "== $f" >&2
    if grep -qE "$found" "$f"; then
      grep -m1 -A40 -E "$found" "$f" >&2
    else
      tail -n 20 "$f" >&2
    fi
  done
  return 0
}

# Ends the test as failed: the reason, then the end of every log under $dir.
fail() { echo "FAIL: $*" >&2; show_logs "$dir"/*.log; exit 1; }

# The pids of every script and task the nodes' supervisors recorded under $dir/spool: the
# supervisor, its batch script's session, its step's tasks' sessions (negative: a group).
recorded_processes() {
  local f sp jp tp
  for f in "$dir"/spool/*/stepd/*/pid; do
    [[ -f "$f" ]] || continue
    read -r sp _ jp _ <"$f" || continue
    (( jp > 0 )) && echo "-$jp"
    (( sp > 0 )) && echo "$sp"
    if [[ -f "${f%/pid}/tasks" ]]; then
      while read -r _ tp _; do (( tp > 0 )) && echo "-$tp"; done <"${f%/pid}/tasks"
    fi
  done
  return 0
}

# Stops what the script started (by pid), then what the supervisors, which outlive loomd,
# still run (by the pids they recorded), and removes $dir unless LOOM_KEEP_TEST_DIRS=1.
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for p in $(recorded_processes); do kill -KILL -- "$p" 2>/dev/null || true; done
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
  return 0
}

# Prints N free loopback ports.
free_ports() {
  python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])' "$1"
}

# A private munged with a new key, its socket at $dir/munge/munge.socket; waits for it.
start_munged() {
  mkdir -p "$dir/munge"
  chmod 755 "$dir/munge"
  /usr/sbin/mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 ||
    /usr/sbin/mungekey -c -k "$dir/munge/munge.key"
  /usr/sbin/munged --foreground --force --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge.log" --seed-file="$dir/munge/seed" &
  pids+=($!)
  local _
  for _ in $(seq 50); do [[ -S "$dir/munge/munge.socket" ]] && return 0; sleep 0.1; done
  return 0
}

# The lines every private cluster's slurm.conf starts with: cluster NAME, the controller on
# loopback at port CPORT, MUNGE through the private munged, state under $dir/state.
conf_header() {
  cat <<CONF
ClusterName=$1
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$2
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
CONF
}

# Waits until `$1` (a shell condition) holds, at most $2 tenths of a second (default 300).
wait_until() {
  local _
  for _ in $(seq "${2:-300}"); do eval "$1" && return 0; sleep 0.1; done
  return 1
}

# Whether process $1 still runs: it exists and is not a zombie. A job killed on a node whose
# supervisor was orphaned may be left as a zombie that an init which does not reap keeps
# listed; it has ended all the same.
running() {
  [[ -d /proc/$1 ]] && ! grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"
}
