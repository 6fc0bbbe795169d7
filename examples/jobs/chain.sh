#!/bin/bash
# A dependency chain: prepare -> train (afterok) -> report (afterany); cleanup only if
# train fails (afternotok), so here it never runs (DependencyNeverSatisfied).
set -e
cd "$(dirname "$0")"
prep=$(sbatch --parsable -J prepare -o chain-prepare-%j.out --wrap 'echo prepared')
train=$(sbatch --parsable -J train -o chain-train-%j.out --dependency=afterok:$prep \
  --wrap 'echo trained after '"$prep")
report=$(sbatch --parsable -J report -o chain-report-%j.out --dependency=afterany:$train \
  --wrap 'echo report after '"$train")
cleanup=$(sbatch --parsable -J cleanup --dependency=afternotok:$train --wrap 'echo cleanup')
echo "prepare=$prep train=$train report=$report cleanup=$cleanup"
