// The built-in slurm.conf used when a site has none: a small mixed cluster.
#include "conf/slurm_conf.h"

namespace loom::conf {

std::string_view DefaultSlurmConf() {
  static constexpr std::string_view kText =
      R"(# Loom built-in cluster: two 8-GPU A100 nodes and two CPU nodes on this host.
ClusterName=loom
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818

SchedulerType=sched/backfill
SchedulerParameters=bf_interval=30,bf_window=1440,bf_resolution=60,bf_continue
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=4000
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightPartition=1000
PriorityWeightQOS=1000
GresTypes=gpu
ReturnToService=2

NodeName=DEFAULT CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=1
NodeName=gpu-[01-02] NodeAddr=127.0.0.1 Port=17001-17002 RealMemory=512000 Gres=gpu:a100:8 \
    Features=gpu,a100
NodeName=cpu-[01-02] NodeAddr=127.0.0.1 Port=17003-17004 RealMemory=256000 Features=cpu

PartitionName=cpu Nodes=cpu-[01-02] Default=YES MaxTime=1-00:00:00 State=UP
PartitionName=gpu Nodes=gpu-[01-02] MaxTime=7-00:00:00 State=UP \
    TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=16.0"
)";
  return kText;
}

}  // namespace loom::conf
