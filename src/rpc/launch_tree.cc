#include "rpc/launch_tree.h"

#include "core/fanout.h"

namespace loom::rpc {
namespace {

// Moves the launch of `node` out of `launches`, with its children nested in its request.
v1::ForwardedLaunch Build(const core::FanoutNode& node,
                          std::vector<v1::ForwardedLaunch>& launches) {
  v1::ForwardedLaunch out = std::move(launches[static_cast<size_t>(node.index)]);
  for (const core::FanoutNode& child : node.children) {
    *out.mutable_request()->add_forward() = Build(child, launches);
  }
  return out;
}

void Collect(const v1::ForwardedLaunch& launch, std::vector<std::string>* names) {
  names->push_back(launch.node());
  for (const v1::ForwardedLaunch& f : launch.request().forward()) Collect(f, names);
}

}  // namespace

std::vector<v1::ForwardedLaunch> LaunchTree(std::vector<v1::ForwardedLaunch> launches,
                                            int32_t width) {
  std::vector<v1::ForwardedLaunch> roots;
  for (const core::FanoutNode& root :
       core::FanoutTree(static_cast<int32_t>(launches.size()), width)) {
    roots.push_back(Build(root, launches));
  }
  return roots;
}

std::vector<std::string> NodesUnder(const v1::ForwardedLaunch& launch) {
  std::vector<std::string> names;
  Collect(launch, &names);
  return names;
}

}  // namespace loom::rpc
