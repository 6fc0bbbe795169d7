// A step launch for many nodes as it travels (slurm.conf TreeWidth): the sender sends at most
// `width` launches itself; each carries, in request.forward, the launches its node passes on.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "loom/v1/loom.pb.h"

namespace loom::rpc {

// `launches` (one per node, in the step's node order) arranged as core::FanoutTree arranges
// their indices: the returned roots go out from the sender, every other launch sits in the
// request.forward of the node above it. Each launch appears once.
std::vector<v1::ForwardedLaunch> LaunchTree(std::vector<v1::ForwardedLaunch> launches,
                                            int32_t width);

// The names of `launch`'s node and of every node below it: who does not get the launch when
// `launch` cannot be delivered.
std::vector<std::string> NodesUnder(const v1::ForwardedLaunch& launch);

}  // namespace loom::rpc
