#!/usr/bin/env python3
"""Records what Slurm's own sbatch says for the cases below -> slurm-22.05.8-sbatch-golden.json.

Needs Debian 12's slurm-client (sbatch 22.05.8) and nothing else: sbatch reads a minimal
slurm.conf whose controller does not exist, so every submission it accepts ends with
"Unable to contact slurm controller", and every one it rejects stops before that with its
own error. Each case is run twice: as given (stderr and exit status), and with -v added
(sbatch's list of the options it resolved, for the accepted cases).

    python3 tests/data/sbatch/make_golden.py > tests/data/sbatch/slurm-22.05.8-sbatch-golden.json
"""
import json
import os
import subprocess
import sys
import tempfile
import time

CONF = """ClusterName=ref
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16999
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
NodeName=n[001-004] CPUs=8 RealMemory=16000 Gres=gpu:8 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES
MessageTimeout=1
"""

OK = "#!/bin/sh\ntrue\n"


def script(*directives, body="true"):
    return "#!/bin/sh\n" + "".join(f"#SBATCH {d}\n" for d in directives) + body + "\n"


# (name, args, script text or None for --wrap cases, env, read the script from stdin)
CASES = [
    # Options and values sbatch checks itself.
    ("plain", ["job.sh"], OK, {}, False),
    ("time forms", ["-t", "1-2:3:4", "--time-min=90", "job.sh"], OK, {}, False),
    ("time zero", ["--time=0", "job.sh"], OK, {}, False),
    ("time unlimited", ["--time=UNLIMITED", "job.sh"], OK, {}, False),
    ("time mm:ss", ["--time=10:30", "job.sh"], OK, {}, False),
    ("bad time", ["--time=abc", "job.sh"], OK, {}, False),
    ("bad time 4 fields", ["-t", "1:2:3:4", "job.sh"], OK, {}, False),
    ("bad time unit", ["--time=5m", "job.sh"], OK, {}, False),
    ("bad time empty", ["--time=", "job.sh"], OK, {}, False),
    ("bad time-min", ["--time-min=x", "job.sh"], OK, {}, False),
    ("nodes range", ["-N", "2-4", "job.sh"], OK, {}, False),
    ("nodes attached", ["-N2", "job.sh"], OK, {}, False),
    ("nodes k suffix", ["--nodes=2k", "job.sh"], OK, {}, False),
    ("nodes reversed", ["-N", "4-2", "job.sh"], OK, {}, False),
    ("nodes open range", ["-N", "2-", "job.sh"], OK, {}, False),
    ("nodes word", ["-N", "abc", "job.sh"], OK, {}, False),
    ("nodes list", ["-N", "2,3", "job.sh"], OK, {}, False),
    ("nodes bad max", ["-N", "2-x", "job.sh"], OK, {}, False),
    ("ntasks zero", ["-n", "0", "job.sh"], OK, {}, False),
    ("ntasks suffix", ["-n", "2k", "job.sh"], OK, {}, False),
    ("ntasks plus", ["-n", "+3", "job.sh"], OK, {}, False),
    ("cpus word", ["-c", "x", "job.sh"], OK, {}, False),
    ("cpus fraction", ["--cpus-per-task=1.5", "job.sh"], OK, {}, False),
    ("ntasks-per-node zero", ["--ntasks-per-node=0", "job.sh"], OK, {}, False),
    ("tasks-per-node alias", ["--tasks-per-node=x", "job.sh"], OK, {}, False),
    ("mincpus zero", ["--mincpus=0", "job.sh"], OK, {}, False),
    ("fewer tasks than nodes", ["-N", "2", "-n", "1", "job.sh"], OK, {}, False),
    ("mem forms", ["--mem=2GB", "job.sh"], OK, {}, False),
    ("mem zero", ["--mem=0", "job.sh"], OK, {}, False),
    ("mem kilobytes", ["--mem-per-cpu=1024K", "job.sh"], OK, {}, False),
    ("bad mem", ["--mem=2.5G", "job.sh"], OK, {}, False),
    ("bad mem unit", ["--mem=1P", "job.sh"], OK, {}, False),
    ("bad mem-per-cpu", ["--mem-per-cpu=x", "job.sh"], OK, {}, False),
    ("bad mem-per-gpu", ["--mem-per-gpu=-1", "job.sh"], OK, {}, False),
    ("mem conflict", ["--mem=2G", "--mem-per-cpu=1G", "job.sh"], OK, {}, False),
    ("mem conflict gpu", ["--mem-per-gpu=1G", "--mem=1G", "job.sh"], OK, {}, False),
    ("exclusive", ["--exclusive", "job.sh"], OK, {}, False),
    ("exclusive user", ["--exclusive=user", "job.sh"], OK, {}, False),
    ("exclusive mcs", ["--exclusive=MCS", "job.sh"], OK, {}, False),
    ("bad exclusive", ["--exclusive=foo", "job.sh"], OK, {}, False),
    ("exclusive then oversubscribe", ["--exclusive", "-s", "job.sh"], OK, {}, False),
    ("nice default", ["--nice", "job.sh"], OK, {}, False),
    ("nice negative", ["--nice=-5", "job.sh"], OK, {}, False),
    ("nice out of range", ["--nice=2147483646", "job.sh"], OK, {}, False),
    ("hold", ["-H", "job.sh"], OK, {}, False),
    ("bundled flags", ["-HvQ", "job.sh"], OK, {}, False),
    ("switches", ["--switches=2@10", "job.sh"], OK, {}, False),
    ("switches zero", ["--switches=0", "job.sh"], OK, {}, False),
    ("signal", ["--signal=B:USR1@30", "job.sh"], OK, {}, False),
    ("bad signal", ["--signal=B:10@70000", "job.sh"], OK, {}, False),
    ("mail", ["--mail-type=BEGIN,end", "--mail-user=a@b", "job.sh"], OK, {}, False),
    ("bad mail-type", ["--mail-type=x", "job.sh"], OK, {}, False),
    ("open-mode", ["--open-mode=a", "job.sh"], OK, {}, False),
    ("bad open-mode", ["--open-mode=x", "job.sh"], OK, {}, False),
    ("kill-on-invalid-dep", ["--kill-on-invalid-dep=YES", "job.sh"], OK, {}, False),
    ("bad kill-on-invalid-dep", ["--kill-on-invalid-dep=x", "job.sh"], OK, {}, False),
    ("no-kill off", ["--no-kill=off", "job.sh"], OK, {}, False),
    ("bad no-kill", ["-kfoo", "job.sh"], OK, {}, False),
    ("get-user-env", ["--get-user-env=10L", "job.sh"], OK, {}, False),
    ("bad get-user-env", ["--get-user-env=10X", "job.sh"], OK, {}, False),
    ("bad wait-all-nodes", ["--wait-all-nodes=2", "job.sh"], OK, {}, False),
    ("bad tmp", ["--tmp=x", "job.sh"], OK, {}, False),
    ("cpus-per-gpu and cpus-per-task", ["-c", "2", "--cpus-per-gpu=4", "job.sh"], OK, {},
     False),
    ("gpus-per-task alone", ["--gpus-per-task=2", "job.sh"], OK, {}, False),
    ("gpus-per-task with nodes", ["-N", "2", "--gpus-per-task=2", "job.sh"], OK, {}, False),
    ("gpus-per-task with ntasks", ["-n", "4", "--gpus-per-task=1", "job.sh"], OK, {}, False),
    ("gres gpu", ["--gres=gpu:2", "job.sh"], OK, {}, False),
    ("gres typed", ["--gres=gpu:a100:2,gpu:v100:1", "job.sh"], OK, {}, False),
    ("gres count only name", ["--gres=gpu", "job.sh"], OK, {}, False),
    ("gres unknown", ["--gres=foo:2", "job.sh"], OK, {}, False),
    ("gres malformed", ["--gres=gpu:x:y", "job.sh"], OK, {}, False),
    ("gpus typed", ["--gpus=a100:3", "job.sh"], OK, {}, False),
    ("gpus per node list", ["--gpus-per-node=a100:2,v100:1", "job.sh"], OK, {}, False),
    ("ntasks-per-gpu with gpus-per-task",
     ["-n", "4", "--ntasks-per-gpu=2", "--gpus-per-task=1", "job.sh"], OK, {}, False),
    ("ntasks-per-gpu with ntasks-per-node",
     ["-n", "4", "--ntasks-per-gpu=2", "--ntasks-per-node=2", "job.sh"], OK, {}, False),
    ("core-spec and thread-spec", ["-S", "1", "--thread-spec=1", "job.sh"], OK, {}, False),
    ("begin relative", ["--begin=now+1hour", "job.sh"], OK, {}, False),
    ("begin bad", ["--begin=now+10min", "job.sh"], OK, {}, False),
    ("begin empty", ["--begin=", "job.sh"], OK, {}, False),
    ("deadline bad", ["--deadline=x", "job.sh"], OK, {}, False),
    ("output none", ["-o", "none", "-e", "/abs/err", "job.sh"], OK, {}, False),
    ("chdir and relative output", ["-D", "/var", "-o", "o%j.txt", "-i", "../in", "job.sh"],
     OK, {}, False),
    ("array and dependency", ["--array=1-10%2", "--dependency=afterok:3", "job.sh"], OK, {},
     False),
    ("job name twice", ["-J", "a", "-J", "b", "job.sh"], OK, {}, False),
    ("requeue then no-requeue", ["--requeue", "--no-requeue", "job.sh"], OK, {}, False),
    ("parsable test-only wait", ["--parsable", "--test-only", "-W", "job.sh"], OK, {}, False),
    # --begin and --deadline: every form, and where Slurm says the text went wrong.
    *[(f"begin {b}", [f"--begin={b}", "job.sh"], OK, {}, False) for b in [
        "now", "now+60", "now+1hour", "now + 1hour", "now-5", "now+2weeks", "now+3days",
        "now+10minutes", "now+1minute", "now+1second", "now+1day", "now+1week", "NOW+1HOUR",
        "now+10hours", "today", "tomorrow", "midnight", "noon", "fika", "teatime", "16:00",
        "23:59:59", "4:00PM", "10:20:30am", "12:00am", "12:30pm", "0415", "041525", "04/15",
        "04/15/25", "04.15.25", "2025-04-15", "2025-04-15T10:20", "2025-04-15T10:20:30",
        "04/15-10:20", "2025-02-30", "2030-01-01T00:00:00", "tomorrow 16:00", "16:00 tomorrow",
        "today 23:59", "12/31", "1231", "now+1x", "12:99", "2024-13-01", "tomorrow+", "now+",
        "elevenses", "4pm", "2025-04-15T10", "now+10m", "now+10s", "now+10sec", "now+10h",
        "25:00", "1234567890", "uts1234", "2025-04-32", "13/01", "04/15-", "10:2", "10:20:3",
        "now+5 minutes", "now 5", "x", "today+1", "2025-4-5", "1:2:3", "13:00pm"]],
    # getopt's own errors.
    ("unknown long", ["--no-such-option", "job.sh"], OK, {}, False),
    ("unknown long with value", ["--foo=bar", "job.sh"], OK, {}, False),
    ("unknown short", ["-f", "job.sh"], OK, {}, False),
    ("ambiguous", ["--a=5", "job.sh"], OK, {}, False),
    ("ambiguous cluster", ["--clus=x", "job.sh"], OK, {}, False),
    ("ambiguous mem-per", ["--mem-per=1", "job.sh"], OK, {}, False),
    ("abbreviation", ["--job=abbrev", "--ntasks-per-n=2", "job.sh"], OK, {}, False),
    ("missing argument long", ["job.sh", "--job-name"], OK, {}, False),
    ("missing argument at end", ["--job-name"], OK, {}, False),
    ("missing argument short", ["-HJ"], OK, {}, False),
    ("flag with argument", ["--hold=1", "job.sh"], OK, {}, False),
    ("value error before unknown option", ["--time=x", "--foo", "job.sh"], OK, {}, False),
    ("unknown option before value error", ["--foo", "--time=x", "job.sh"], OK, {}, False),
    # Scripts.
    ("empty stdin", [], "", {}, True),
    ("whitespace stdin", [], "  \n\n", {}, True),
    ("no shebang", ["job.sh"], "echo hi\n", {}, False),
    ("dos line breaks", ["job.sh"], "#!/bin/sh\r\necho\r\n", {}, False),
    ("option error before script error", ["--time=x", "job.sh"], "echo hi\n", {}, False),
    ("wrap with script", ["--wrap=true", "job.sh"], OK, {}, False),
    ("wrap", ["--wrap=hostname"], None, {}, False),
    ("script arguments", ["job.sh", "a", "-b", "--c"], OK, {}, False),
    # Directives.
    ("directives", ["job.sh"], script("-J name -t 5", "--partition=p1", "--comment=\"a b\""),
     {}, False),
    ("directive no space", ["job.sh"], script("-J x").replace("#SBATCH -J", "#SBATCH-J"), {},
     False),
    ("directive single quotes", ["job.sh"], script("-J 'my job'"), {}, False),
    ("directive trailing comment", ["job.sh"], script("-J x # -t 5"), {}, False),
    ("directive hash in word", ["job.sh"], script("-J a#b"), {}, False),
    ("directive quoted hash", ["job.sh"], script("-J \"a#b\" -t 5"), {}, False),
    ("directive escaped quote", ["job.sh"], script("-J a\\\"b -t 5"), {}, False),
    ("directive escaped space", ["job.sh"], script("-J a\\ b"), {}, False),
    ("directive stray word", ["job.sh"], script("foo -J bar"), {}, False),
    ("directive trailing word", ["job.sh"], script("-J x foo"), {}, False),
    ("directive unknown option", ["job.sh"], script("--bogus"), {}, False),
    ("directive bad value", ["job.sh"], script("--time=abc"), {}, False),
    ("directive missing argument", ["job.sh"], script("-J"), {}, False),
    ("directive unmatched quote", ["job.sh"], script("\"abc"), {}, False),
    ("directive unmatched quote stdin", [], script("-J x  --comment=\"abc"), {}, True),
    ("directive unmatched single quote", ["job.sh"], script("-J 'a\\'b -t 5"), {}, False),
    ("directive after command", ["job.sh"], "#!/bin/sh\ntrue\n#SBATCH -J late\n", {}, False),
    ("directive after comments", ["job.sh"],
     "#!/bin/sh\n\n   \n# comment\n  # indented\n#SBATCH -J afterblank\ntrue\n", {}, False),
    ("indented directive", ["job.sh"], "#!/bin/sh\n  #SBATCH -J x\ntrue\n", {}, False),
    ("lowercase directive", ["job.sh"], "#!/bin/sh\n#sbatch -J x\ntrue\n", {}, False),
    ("directive wrap", ["job.sh"], script("--wrap=hostname"), {}, False),
    ("directive help", ["job.sh"], script("--help"), {}, False),
    ("directive double dash", ["job.sh"], script("-J x-y --"), {}, False),
    ("command line over directive", ["-t", "30", "job.sh"], script("-t 10 --mem=3G -J s"), {},
     False),
    ("bad directive despite command line", ["-t", "5", "job.sh"], script("-t abc"), {}, False),
    ("directive mem against command line", ["--mem=2G", "job.sh"], script("--mem-per-cpu=1G"),
     {}, False),
    # Environment.
    ("env over directive", ["job.sh"], script("-t 10 -J s", "--partition=p1"),
     {"SBATCH_TIMELIMIT": "20", "SBATCH_JOB_NAME": "envname"}, False),
    ("command line over env", ["-t", "30", "job.sh"], script("-t 10"),
     {"SBATCH_TIMELIMIT": "20"}, False),
    ("bad env despite command line", ["-t", "5", "job.sh"], OK, {"SBATCH_TIMELIMIT": "abc"},
     False),
    ("env mem yields to directive", ["job.sh"], script("--mem=3G"),
     {"SBATCH_MEM_PER_CPU": "1G"}, False),
    ("env mem overrides same directive", ["job.sh"], script("--mem=3G"),
     {"SBATCH_MEM_PER_NODE": "5G"}, False),
    ("env mem yields to command line", ["--mem=2G", "job.sh"], OK,
     {"SBATCH_MEM_PER_CPU": "1G"}, False),
    ("env mem conflict", ["job.sh"], OK,
     {"SBATCH_MEM_PER_GPU": "3G", "SBATCH_MEM_PER_CPU": "1G"}, False),
    ("env flags", ["job.sh"], OK,
     {"SBATCH_REQUEUE": "no", "SBATCH_NO_REQUEUE": "1", "SBATCH_WAIT": "yes"}, False),
    ("env exclusive empty", ["job.sh"], OK, {"SBATCH_EXCLUSIVE": ""}, False),
    ("env switches", ["job.sh"], OK, {"SBATCH_REQ_SWITCH": "2", "SBATCH_WAIT4SWITCH": "10"},
     False),
    ("env not an option", ["job.sh"], OK, {"SBATCH_NODES": "2", "SBATCH_NTASKS": "3"}, False),
    ("exit error variable", ["--gpus-per-task=1", "job.sh"], OK, {"SLURM_EXIT_ERROR": "9"},
     False),
    ("exit error variable zero", ["job.sh"], OK, {"SLURM_EXIT_ERROR": "0"}, False),
    ("exit error and numeric", ["-n", "0", "job.sh"], OK, {"SLURM_EXIT_ERROR": "9"}, False),
    ("exit error and script", [], "", {"SLURM_EXIT_ERROR": "7"}, True),
]


def run(args, script, env, stdin, workdir):
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "SLURM_CONF": os.path.join(workdir, "slurm.conf"), "TZ": "UTC"}
    full_env.update(env)
    now = int(time.time())
    proc = subprocess.run(["sbatch", *args], cwd=workdir, env=full_env,
                          input=(script or "") if stdin else "", capture_output=True,
                          text=True, timeout=30)
    return now, proc.returncode, proc.stdout, proc.stderr


def resolved_options(stderr):
    out, inside = {}, False
    for line in stderr.splitlines():
        body = line[len("sbatch: "):] if line.startswith("sbatch: ") else line
        if body == "defined options":
            inside = True
        elif body == "end of defined options":
            inside = False
        elif inside and " : " in body and not body.startswith("---"):
            key, value = body.split(" : ", 1)
            out[key.strip()] = value.strip()
    return out


def main():
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        with open(os.path.join(workdir, "slurm.conf"), "w") as f:
            f.write(CONF)
        for name, args, script_text, env, stdin in CASES:
            if script_text is not None and not stdin:
                with open(os.path.join(workdir, "job.sh"), "w") as f:
                    f.write(script_text)
            now, code, stdout, stderr = run(args, script_text, env, stdin, workdir)
            stderr = stderr.replace(workdir, "/golden")
            lines = [l for l in stderr.splitlines()
                     if "Unable to contact slurm controller" not in l]
            accepted = "Unable to contact slurm controller" in stderr
            case = {"name": name, "args": args, "script": script_text, "stdin": stdin,
                    "env": env, "now": now, "exit": code, "accepted": accepted,
                    "stderr": "\n".join(lines)}
            if accepted:
                _, _, _, verbose = run(["-v", *args], script_text, env, stdin, workdir)
                case["resolved"] = resolved_options(verbose.replace(workdir, "/golden"))
            results.append(case)
        json.dump({"sbatch": subprocess.run(["sbatch", "--version"], capture_output=True,
                                            text=True).stdout.strip(),
                   "workdir": "/golden", "cases": results}, sys.stdout, indent=1,
                  ensure_ascii=False)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
