#!/bin/bash
#SBATCH --job-name=gpu
#SBATCH --output=gpu-%j.out
#SBATCH --time=00:05:00
#SBATCH --gpus-per-node=2
#SBATCH --cpus-per-task=8
echo "job $SLURM_JOB_ID on $SLURMD_NODENAME: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
echo "SLURM_JOB_GPUS=$SLURM_JOB_GPUS cpus=$SLURM_CPUS_ON_NODE"
