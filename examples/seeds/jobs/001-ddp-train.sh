#!/bin/bash
#SBATCH --job-name=ddp-train
#SBATCH --nodes=4 --ntasks-per-node=8 --gpus-per-node=8
#SBATCH --partition=train --time=2-00:00:00

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_NODELIST" | head -n1)
export MASTER_PORT=29500
export WORLD_SIZE=$(( SLURM_NNODES * SLURM_NTASKS_PER_NODE ))

srun --gpu-bind=closest --cpu-bind=cores \
     torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 \
              --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT \
              train.py

