#!/bin/bash
#SBATCH --job-name=llama-training
#SBATCH --nodes=16 # 使用 16 个节点
#SBATCH --gres=gpu:h100:8 # 每节点 8 张 H100
#SBATCH --time=7-00:00:00 # 最多运行 7 天
#SBATCH --partition=train # 提交到 train 队列
#SBATCH --output=train_%j.out
#SBATCH --error=train_%j.err
echo "Job started on $(hostname)"
srun python train.py --config=config_70b.yaml
