// Loom's topology matrix: the table `nvidia-smi topo -m` prints on a GPU node, read into the
// model::NodeTopology that GPU placement uses. A site saves the command's output once per
// kind of node and names the file from gres.conf (Topology=); examples/gpu-topology/ holds
// matrices of common machines and says how to write one by hand.
//
// What is read:
//   - the header row: GPU0 GPU1 ... (then NIC0 ... or mlx5_0 ...), then the affinity columns
//     "CPU Affinity", "NUMA Affinity" and "GPU NUMA ID" (any of them may be missing);
//   - one row per GPU (all required) and per NIC (optional): X on the diagonal; SYS, NODE,
//     PHB, PXB, PIX or NV<n> elsewhere (SOC, an older name of SYS, is read as SYS); CPU
//     affinity as a CPU list ("0-63,128-191"); the affinity columns may be N/A;
//   - the Legend: and NIC Legend: blocks after the table are ignored, and so are terminal
//     colour codes, tabs versus spaces, and lines whose first character is '#';
//   - two Loom directives in '#' lines: `# sockets: N` and `# nvlink-spans-nodes`.
//
// What is derived, for GPU i:
//   - domain: connected components of the GPU pairs joined by NV<n>;
//   - pcie_switch: GPUs joined by PIX or PXB, and GPUs that reach one NIC by PIX or PXB;
//   - nic: the first NIC column at PIX from the GPU, else the first at PXB, else -1;
//   - numa: the NUMA Affinity column; when it is N/A for every GPU, GPUs with identical CPU
//     affinity form one NUMA node;
//   - numa_cpus: the union of the CPU affinity of the GPUs of each NUMA node;
//   - sockets: the number of NUMA nodes unless `# sockets: N` says otherwise.
// Domain, switch and (grouped) NUMA ids are numbered in the order of their first GPU. Each
// GPU's file is /dev/nvidia<i>; its type is the caller's.
//
// Pure functions (LoadTopoMatrix apart, which reads a file); thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "model/gpu_topology.h"

namespace loom::conf {

// Parses `text`, a topology matrix named `source_name` in messages and in the result's
// `name`. Every GPU gets `gpu_type` (may be empty). On failure returns InvalidArgumentError
// listing each problem as "source_name:line: error: ...", one per line: an unknown entry,
// a row with the wrong number of columns, a GPU listed twice or not at all, an asymmetric
// matrix, a malformed CPU list, a CPU claimed by two NUMA nodes.
StatusOr<model::NodeTopology> ParseTopoMatrix(std::string_view text, std::string_view source_name,
                                              std::string_view gpu_type);

// Reads the matrix file at `path` and parses it under that name.
StatusOr<model::NodeTopology> LoadTopoMatrix(const std::string& path, std::string_view gpu_type);

}  // namespace loom::conf
