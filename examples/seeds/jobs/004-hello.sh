#!/bin/bash
#SBATCH --job-name=hello
#SBATCH --partition=debug
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --time=00:05:00
echo "Hello from $SLURMD_NODENAME"
sleep 30
