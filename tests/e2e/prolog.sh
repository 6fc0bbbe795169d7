#!/usr/bin/env bash
# The site's Prolog and Epilog on a running cluster (three emulated nodes, slurm.conf
# Prolog=, Epilog=, PrologEpilogTimeout=):
#   - a two-node batch job: the prolog runs on its first node before the script and on its
#     second before the step there, the epilogs on both after the job, each once, with the
#     job's variables (id, user, uid, node list, the node's GPUs);
#   - a job whose epilog runs is COMPLETING, and its node with it, until the epilog ends;
#   - a failed prolog drains its node ("Prolog error") and requeues the batch job held
#     ("launch failed requeued held"); an administrator's release runs it once the node is
#     back;
#   - a failed epilog drains its node ("Epilog error");
#   - srun's own job whose prolog fails: srun says so and ends non-zero;
#   - TaskProlog and srun --task-prolog (the site's first: its exports reach the user's and
#     the task, its print lines the task's output), TaskEpilog and --task-epilog after each
#     task, srun --prolog and --epilog around the step with its command as arguments; a
#     failing task prolog fails the launch, saying why;
#   - PrologSlurmctld before a job's launch (a failure requeues it), EpilogSlurmctld after;
#   - PrologFlags=Alloc (after a reconfigure): the prolog on every node at allocation;
#   - MpiParams=ports: each step's tasks see the ports reserved for it (SLURM_STEP_RESV_PORTS),
#     none shared with a step running beside it.
#
#   tests/e2e/prolog.sh BUILD_BIN_DIR
set -euo pipefail
bin=$(cd "${1:?usage: prolog.sh BUILD_BIN_DIR}" && pwd)
dir=$(mktemp -d /tmp/loom-prolog.XXXXXX)
cluster="$dir/cluster"
cleanup() {
  "$bin/loom" cluster down --dir "$cluster" >/dev/null 2>&1 || true
  if [[ "${LOOM_KEEP_TEST_DIRS:-0}" != 1 ]]; then rm -rf "$dir"; fi
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL: $*" >&2; show_logs "$cluster"/log/*.log; exit 1; }

site="$dir/site"
mkdir -p "$site" "$dir/work"
cat >"$site/slurm.conf" <<CONF
ClusterName=scripts
SlurmctldHost=localhost
SlurmdParameters=config_overrides
GresTypes=gpu
Prolog=$site/prolog.d/*
Epilog=$site/epilog.sh
PrologEpilogTimeout=20
MpiParams=ports=12000-12999
PrologSlurmctld=$site/pctld.sh
EpilogSlurmctld=$site/ectld.sh
TaskProlog=$site/task_prolog.sh
TaskEpilog=$site/task_epilog.sh
NodeName=pe[1-3] CPUs=4 RealMemory=4000 Gres=gpu:a100:2
PartitionName=all Nodes=pe[1-3] Default=YES MaxTime=01:00:00
CONF
cat >"$site/gres.conf" <<CONF
AutoDetect=off
NodeName=pe[1-3] Name=gpu Type=a100 File=/dev/nvidia[0-1]
CONF
# The prolog is a pattern: both programs run, in name order.
mkdir -p "$site/prolog.d"
cat >"$site/prolog.d/10-record" <<EOF2
#!/bin/sh
echo "prolog \$SLURMD_NODENAME \$SLURM_JOB_ID \$SLURM_JOB_USER \$SLURM_JOB_UID \$SLURM_JOB_NODELIST gpus=\$CUDA_VISIBLE_DEVICES ctx=\$SLURM_SCRIPT_CONTEXT" >>$dir/record
EOF2
cat >"$site/prolog.d/20-check" <<EOF2
#!/bin/sh
[ ! -e $dir/fail-prolog-\$SLURMD_NODENAME ]
EOF2
cat >"$site/epilog.sh" <<EOF2
#!/bin/sh
while [ -e $dir/hold-epilog ]; do sleep 0.1; done
echo "epilog \$SLURMD_NODENAME \$SLURM_JOB_ID ctx=\$SLURM_SCRIPT_CONTEXT" >>$dir/record
[ ! -e $dir/fail-epilog-\$SLURMD_NODENAME ]
EOF2
cat >"$site/task_prolog.sh" <<'EOF2'
#!/bin/sh
echo "export SITE_FROM_PROLOG=yes"
echo "print site prolog for task $SLURM_PROCID"
EOF2
cat >"$site/task_epilog.sh" <<EOF2
#!/bin/sh
echo "task-epilog \$SLURM_JOB_ID \$SLURM_PROCID \$SLURMD_NODENAME" >>$dir/record
EOF2
cat >"$site/pctld.sh" <<EOF2
#!/bin/sh
echo "pctld \$SLURM_JOB_ID \$SLURM_JOB_NODELIST ctx=\$SLURM_SCRIPT_CONTEXT" >>$dir/record
[ ! -e $dir/fail-pctld ]
EOF2
cat >"$site/ectld.sh" <<EOF2
#!/bin/sh
echo "ectld \$SLURM_JOB_ID code=\$SLURM_JOB_EXIT_CODE2 ctx=\$SLURM_SCRIPT_CONTEXT" >>$dir/record
EOF2
chmod +x "$site/prolog.d/"* "$site/epilog.sh" "$site/task_prolog.sh" "$site/task_epilog.sh" \
  "$site/pctld.sh" "$site/ectld.sh"
out=$("$bin/loom" cluster up --dir "$cluster" --config "$site/slurm.conf" 2>&1) || fail "up: $out"
eval "$(grep '^export SLURM_CONF=' <<<"$out")"
export PATH="$bin:$PATH"
cd "$dir/work"

state() { squeue -h -j "$1" -t all -o '%T'; }
wait_state() { wait_until "[[ \$(state $1) == $2 ]]" 300 || fail "job $1 is $(state "$1"), not $2"; }
records() { grep -c "$1" "$dir/record" 2>/dev/null || true; }

# A two-node job: the prolog once on each node, before anything of the job runs there; the
# epilogs once each, after.
job=$(sbatch --parsable -N2 --gres=gpu:1 -o job.out --wrap 'srun -l true; echo script done $SITE_FROM_PROLOG')
wait_state "$job" COMPLETED
wait_until "(( \$(records 'epilog pe[12] $job ') == 2 ))" || fail "epilogs: $(cat "$dir/record")"
(( $(records "prolog pe1 $job root 0 pe\[1-2\] gpus=0 ctx=prolog_slurmd") == 1 )) ||
  fail "pe1's prolog: $(cat "$dir/record")"
(( $(records "prolog pe2 $job root 0 pe\[1-2\] gpus=0 ctx=prolog_slurmd") == 1 )) ||
  fail "pe2's prolog (at its step): $(cat "$dir/record")"
(( $(records "epilog pe1 $job ctx=epilog_slurmd") == 1 )) || fail "pe1's epilog: $(cat "$dir/record")"
# The site's TaskProlog ran before the script too (its export reached it), TaskEpilog after.
grep -q "script done yes" job.out || fail "the script: $(cat job.out)"
wait_until "(( \$(records '^task-epilog $job ') == 3 ))" || fail "task epilogs: $(cat "$dir/record")"
echo "ok: a two-node job: each node's prolog before its part, each node's epilog after, once"

# The controller's own: PrologSlurmctld before anything of the job runs, EpilogSlurmctld
# after it ended, with its exit code.
[[ $(grep -m1 " $job " "$dir/record") == "pctld $job pe[1-2] ctx=prolog_slurmctld" ]] ||
  fail "PrologSlurmctld did not run first: $(cat "$dir/record")"
wait_until "grep -q '^ectld $job code=0:0 ctx=epilog_slurmctld\$' $dir/record" ||
  fail "EpilogSlurmctld: $(cat "$dir/record")"
job=$(sbatch --parsable -w pe3 --wrap 'exit 3')
wait_state "$job" FAILED
wait_until "grep -q '^ectld $job code=3:0 ' $dir/record" || fail "EpilogSlurmctld: $(cat "$dir/record")"
# A failing PrologSlurmctld: the job goes back to the queue (not held) and runs once it passes.
touch "$dir/fail-pctld"
job=$(sbatch --parsable -w pe3 -o pctld.out --wrap 'echo ran')
wait_until "scontrol show job $job | grep -q 'Restarts=[1-9]'" || fail "$(scontrol show job "$job")"
[[ ! -e pctld.out ]] || fail "the script ran though PrologSlurmctld failed"
rm "$dir/fail-pctld"
wait_state "$job" COMPLETED
grep -q ran pctld.out || fail "the job did not run once PrologSlurmctld passed"
echo "ok: PrologSlurmctld before the launch (a failure requeues), EpilogSlurmctld after the end"

# COMPLETING while the epilog runs, the node too; over once it ends.
touch "$dir/hold-epilog"
job=$(sbatch --parsable -w pe3 --wrap true)
wait_until "[[ \$(squeue -h -j $job -o '%T') == COMPLETING ]]" ||
  fail "job $job is $(state "$job") while its epilog runs"
[[ $(sinfo -h -n pe3 -o '%T') == completing ]] || fail "pe3 is $(sinfo -h -n pe3 -o '%T')"
sleep 1
[[ $(squeue -h -j "$job" -o '%T') == COMPLETING ]] || fail "job $job left COMPLETING early"
rm "$dir/hold-epilog"
wait_state "$job" COMPLETED
wait_until "[[ \$(squeue -h -j $job -o '%T') == '' ]]" || fail "job $job still listed as running"
wait_until "[[ \$(sinfo -h -n pe3 -o '%T') == idle ]]" || fail "pe3 is $(sinfo -h -n pe3 -o '%T')"
echo "ok: COMPLETING, job and node, until the epilog ends"

# A failed prolog: the node drains, the job goes back to the queue held.
touch "$dir/fail-prolog-pe1"
job=$(sbatch --parsable -w pe1 --wrap 'echo ran >ran.txt')
wait_until "[[ \$(squeue -h -j $job -o '%T %r') == 'PENDING launch failed requeued held' ]]" ||
  fail "job $job: $(squeue -h -j "$job" -o '%T %r')"
scontrol show job "$job" | grep -q "Reason=launch_failed_requeued_held" ||
  fail "scontrol: $(scontrol show job "$job")"
scontrol show job "$job" | grep -q "Restarts=1" || fail "scontrol: $(scontrol show job "$job")"
[[ $(sinfo -R -h -n pe1 -o '%E|%U') == "Prolog error|root(0)" ]] ||
  fail "sinfo -R: $(sinfo -R -h -n pe1 -o '%E|%U')"
[[ ! -e ran.txt ]] || fail "the script ran after its prolog failed"
rm "$dir/fail-prolog-pe1"
scontrol update nodename=pe1 state=resume
scontrol release "$job"
wait_state "$job" COMPLETED
[[ -e ran.txt ]] || fail "the released job did not run its script"
echo "ok: a failed prolog drains the node (Prolog error) and requeues the job held; released, it runs"

# A failed epilog drains its node.
touch "$dir/fail-epilog-pe2"
job=$(sbatch --parsable -w pe2 --wrap true)
wait_until "[[ \$(sinfo -R -h -n pe2 -o '%E') == 'Epilog error' ]]" ||
  fail "sinfo -R: $(sinfo -R -h -o '%E %N')"
wait_state "$job" COMPLETED
rm "$dir/fail-epilog-pe2"
scontrol update nodename=pe2 state=resume
echo "ok: a failed epilog drains the node (Epilog error); the job stays COMPLETED"

# srun's own job: the prolog fails on its node, srun says so.
touch "$dir/fail-prolog-pe3"
if srun -w pe3 true >srun.out 2>srun.err; then fail "srun ended 0 though its prolog failed"; fi
grep -q "^srun: error: Task launch for StepId=[0-9]*.0 failed on node pe3: prolog of job [0-9]* failed on node pe3: .*20-check: exit status 1$" srun.err ||
  fail "srun said: $(cat srun.err)"
wait_until "[[ \$(sinfo -R -h -n pe3 -o '%E') == 'Prolog error' ]]" ||
  fail "sinfo -R: $(sinfo -R -h -o '%E %N')"
rm "$dir/fail-prolog-pe3"
echo "ok: srun's job whose prolog fails: srun fails, saying why; the node drains"

# Task prologs and epilogs, srun's prolog and epilog.
rm -f "$dir/fail-prolog-pe3"
scontrol update nodename=pe1,pe3 state=resume 2>/dev/null || true
cat >utp.sh <<'EOF2'
#!/bin/sh
echo "export USER_VAR=$SITE_FROM_PROLOG-user"
EOF2
cat >ute.sh <<EOF2
#!/bin/sh
echo "user-task-epilog \$SLURM_JOB_ID \$SLURM_PROCID" >>$dir/record
EOF2
cat >sp.sh <<EOF2
#!/bin/sh
echo "srun-prolog \$*" >>$dir/srun-scripts
EOF2
cat >se.sh <<EOF2
#!/bin/sh
echo "srun-epilog \$SLURM_JOB_ID \$*" >>$dir/srun-scripts
EOF2
printf '#!/bin/sh\nexit 3\n' >bad.sh
chmod +x utp.sh ute.sh sp.sh se.sh bad.sh
srun -N2 -n2 -w pe[1,3] --task-prolog=utp.sh --task-epilog=./ute.sh --prolog=./sp.sh \
  --epilog="$PWD/se.sh" sh -c 'echo "task $SLURM_PROCID $SITE_FROM_PROLOG $USER_VAR"' \
  >tasks.out 2>tasks.err || fail "srun with task prologs: $(cat tasks.out tasks.err)"
job=$(squeue -h -t all -o '%i' | sort -n | tail -n1)
[[ $(sort tasks.out) == "site prolog for task 0
site prolog for task 1
task 0 yes yes-user
task 1 yes yes-user" ]] || fail "the tasks said: $(cat tasks.out tasks.err)"
(( $(records "^task-epilog $job [01] pe[13]\$") == 2 )) || fail "task epilogs: $(cat "$dir/record")"
(( $(records "^user-task-epilog $job [01]\$") == 2 )) || fail "user task epilogs: $(cat "$dir/record")"
[[ $(cat "$dir/srun-scripts") == "srun-prolog sh -c echo \"task \$SLURM_PROCID \$SITE_FROM_PROLOG \$USER_VAR\"
srun-epilog $job sh -c echo \"task \$SLURM_PROCID \$SITE_FROM_PROLOG \$USER_VAR\"" ]] ||
  fail "srun --prolog/--epilog: $(cat "$dir/srun-scripts")"
if srun -w pe1 --task-prolog=./bad.sh true >bad.out 2>bad.err; then
  fail "a failing task prolog left srun at 0"
fi
grep -q "task prolog $PWD/bad.sh failed: exit status 3" bad.err || fail "srun said: $(cat bad.err)"
echo "ok: TaskProlog then --task-prolog (exports, print), task epilogs, srun --prolog/--epilog"

# PrologFlags=Alloc: every node's prolog at allocation, a node no step uses included.
echo "PrologFlags=Alloc" >>"$SLURM_CONF"
scontrol reconfigure >/dev/null || fail "reconfigure"
job=$(sbatch --parsable -N2 -w pe[1-2] --wrap 'true')
wait_state "$job" COMPLETED
wait_until "(( \$(records 'epilog pe[12] $job ') == 2 ))" || fail "epilogs: $(cat "$dir/record")"
(( $(records "^prolog pe2 $job ") == 1 )) || fail "PrologFlags=Alloc: $(cat "$dir/record")"
echo "ok: PrologFlags=Alloc: the prolog runs on every node of the allocation"

# MpiParams=ports: srun's own job and a step beside a running one.
srun -N2 -n4 -w pe[1-2] printenv SLURM_STEP_RESV_PORTS >ports.out 2>&1 || fail "$(cat ports.out)"
[[ $(grep -v "^site prolog" ports.out | sort -u) == "12000-12001" ]] || fail "srun's job's ports: $(cat ports.out)"
job=$(sbatch --parsable -N1 -w pe1 -n2 -o steps.out \
  --wrap 'srun -n1 sleep 3 & sleep 1; srun -n2 printenv SLURM_STEP_RESV_PORTS; wait')
wait_state "$job" COMPLETED
[[ $(grep -v "^site prolog" steps.out | sort -u) == "12001-12002" ]] || fail "the second step's ports: $(cat steps.out)"
echo "ok: MpiParams=ports: SLURM_STEP_RESV_PORTS, none shared by running steps"
