#!/bin/bash
#SBATCH --job-name=hello
#SBATCH --output=hello-%j.out
#SBATCH --time=00:05:00
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
echo "Hello from job $SLURM_JOB_ID ($SLURM_JOB_NAME) on $SLURMD_NODENAME"
echo "partition=$SLURM_JOB_PARTITION nodes=$SLURM_JOB_NODELIST cpus=$SLURM_CPUS_ON_NODE"
