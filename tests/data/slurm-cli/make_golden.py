#!/usr/bin/env python3
"""Records what Slurm's own client commands say about their command lines -> this directory.

Needs Debian 12's slurm-client (22.05.8) and nothing else: the commands read a minimal
slurm.conf whose controller does not exist, and every case below fails (or prints its help)
before any of them would contact it.

    python3 tests/data/slurm-cli/make_golden.py tests/data/slurm-cli
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sbatch"))
from make_golden import CONF  # noqa: E402  (sbatch's minimal slurm.conf)

COMMANDS = ["squeue", "sinfo", "scancel", "scontrol", "sstat", "sdiag"]

# (command, arguments): each one a malformed command line.
CASES = [
    ("squeue", ["--bogus"]),
    ("squeue", ["--bogus=1"]),
    ("squeue", ["-z"]),
    ("squeue", ["-lz"]),
    ("squeue", ["--us=x"]),
    ("squeue", ["--a"]),
    ("squeue", ["--s"]),
    ("squeue", ["--fo"]),
    ("squeue", ["-o"]),
    ("squeue", ["--long=1"]),
    ("squeue", ["--start=x"]),
    ("squeue", ["-h", "--bogus"]),
    ("squeue", ["foo", "--bogus"]),
    ("sinfo", ["--bogus"]),
    ("sinfo", ["-z"]),
    ("sinfo", ["-Nz"]),
    ("sinfo", ["--l=x"]),
    ("sinfo", ["--s"]),
    ("sinfo", ["-o"]),
    ("sinfo", ["--Node=1"]),
    ("sinfo", ["--fo"]),
    ("sinfo", ["foo", "-z"]),
    ("scancel", ["--us=x"]),
    ("scancel", ["--bogus"]),
    ("scancel", ["-z"]),
    ("scancel", ["-s"]),
    ("scancel", ["--sig"]),
    ("scancel", ["--batch=1"]),
    ("scancel", ["--c"]),
    ("scancel", ["--h"]),
    ("scancel", ["12", "--bogus"]),
    ("scontrol", ["--bogus"]),
    ("scontrol", ["-z"]),
    ("scontrol", ["--u=x"]),
    ("scontrol", ["--f"]),
    ("scontrol", ["-M"]),
    ("scontrol", ["--details=1"]),
    ("scontrol", ["show", "hostnames", "--bogus"]),
    ("sstat", ["--bogus"]),
    ("sstat", ["-z"]),
    ("sstat", ["--p=x"]),
    ("sstat", ["-j"]),
    ("sstat", ["--allsteps=1"]),
    ("sstat", ["12", "--bogus"]),
    ("sdiag", ["--bogus"]),
    ("sdiag", ["-z"]),
    ("sdiag", ["--s=x"]),
    ("sdiag", ["-M"]),
    ("sdiag", ["--all=1"]),
]


def run(cmd, args, env):
    p = subprocess.run([cmd] + args, capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL, timeout=20)
    return p.returncode, p.stdout, p.stderr


def main():
    out_dir = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "slurm.conf")
        with open(conf, "w") as f:
            f.write(CONF)
        env = {"PATH": "/usr/bin:/bin", "SLURM_CONF": conf}
        for cmd in COMMANDS:
            for flag in ("help", "usage"):
                code, out, _ = run(cmd, ["--" + flag], env)
                assert code == 0, (cmd, flag)
                with open(os.path.join(out_dir, f"{cmd}-{flag}.txt"), "w") as f:
                    f.write(out)
        with open(os.path.join(out_dir, "slurm-22.05.8-option-errors.tsv"), "w") as f:
            f.write("command\targs\texit\tstderr\n")
            for cmd, args in CASES:
                code, _, err = run(cmd, args, env)
                f.write(f"{cmd}\t{' '.join(args)}\t{code}\t{err.rstrip(chr(10)).replace(chr(10), '|')}\n")


if __name__ == "__main__":
    main()
