#!/bin/bash
#SBATCH --job-name=llama70b
#SBATCH --nodes=8
#SBATCH --gres=gpu:h100:8
#SBATCH --time=7-00:00:00
#SBATCH --partition=train

echo "Started at $(date)"
srun python /workspace/train.py \
--model_size=70B \
--num_gpus=$SLURM_NTASKS
echo "Finished at $(date)"
