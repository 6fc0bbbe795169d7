#!/bin/bash
#SBATCH --partition=training
#SBATCH --gres=gpu:8 # 整节点 8 卡（TP=8 打底）
#SBATCH --nodes=4 # 4 节点 = 32 卡
#SBATCH --ntasks-per-node=8
#SBATCH --exclusive # 独占节点，避免干扰
#SBATCH --time=48:00:00
srun --mpi=pmix bash -c "torchrun --nnodes=4 --nproc-per-node=8 train.py"
