#!/bin/bash
#SBATCH --job-name=llm-train
#SBATCH --nodes=16 --ntasks-per-node=8     # 16 机 × 8 卡
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=8
#SBATCH --time=72:00:00
srun torchrun --nnodes=$SLURM_JOB_NUM_NODES \
    --nproc-per-node=8 train.py
