#!/bin/bash
#SBATCH --job-name=array
#SBATCH --array=0-7%2
#SBATCH --output=array-%A_%a.out
#SBATCH --time=00:05:00
# Eight tasks, at most two running at once.
echo "task $SLURM_ARRAY_TASK_ID of array $SLURM_ARRAY_JOB_ID on $SLURMD_NODENAME"
sleep 1
