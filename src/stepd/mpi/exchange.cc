#include "stepd/mpi/exchange.h"

#include <algorithm>
#include <utility>

#include "core/fanout.h"
#include "core/log.h"

namespace loom::stepd {
namespace {

// Records each node's parent. FanoutTree counts the nodes below the root from 0; in the step
// they are nodes 1 and up.
void Walk(const std::vector<core::FanoutNode>& nodes, int32_t parent,
          std::vector<int32_t>* parents) {
  for (const core::FanoutNode& n : nodes) {
    (*parents)[static_cast<size_t>(n.index + 1)] = parent;
    Walk(n.children, n.index + 1, parents);
  }
}

}  // namespace

TreeLinks StepTreeLinks(int32_t count, int32_t width, int32_t me) {
  TreeLinks links;
  if (count <= 1 || me < 0 || me >= count) return links;
  std::vector<int32_t> parents(static_cast<size_t>(count), -1);
  Walk(core::FanoutTree(count - 1, width), 0, &parents);
  links.parent = parents[static_cast<size_t>(me)];
  for (int32_t n = 0; n < count; ++n) {
    if (parents[static_cast<size_t>(n)] == me) links.children.push_back(n);
  }
  return links;
}

StepExchange::StepExchange(int32_t count, int32_t width, int32_t me, Send send)
    : count_(count), me_(me), links_(StepTreeLinks(count, width, me)), send_(std::move(send)) {}

void StepExchange::SetModexServe(ModexServe serve) {
  core::MutexLock lock(&mu_);
  serve_ = std::move(serve);
}

void StepExchange::SetOnAbort(OnAbort on_abort) {
  core::MutexLock lock(&mu_);
  on_abort_ = std::move(on_abort);
}

void StepExchange::Fence(std::string local, FenceDone done) {
  std::function<void()> then;
  {
    core::MutexLock lock(&mu_);
    const uint64_t seq = next_fence_++;
    PendingFence& f = fences_[seq];
    f.local_in = true;
    f.data.append(local);
    f.done = std::move(done);
    then = Advance(seq);
  }
  if (then) then();
}

std::function<void()> StepExchange::Advance(uint64_t seq) {
  PendingFence& f = fences_[seq];
  if (!f.local_in || f.children_in < links_.children.size()) return {};
  if (links_.parent < 0) return Release(seq, std::move(f.data));
  v1::StepMessage up;
  up.mutable_contribution()->set_seq(seq);
  up.mutable_contribution()->set_data(std::move(f.data));
  f.data.clear();
  return [this, up = std::move(up)] { send_({links_.parent}, up); };
}

std::function<void()> StepExchange::Release(uint64_t seq, std::string all) {
  auto it = fences_.find(seq);
  FenceDone done;
  if (it != fences_.end()) {
    done = std::move(it->second.done);
    fences_.erase(it);
  }
  if (!done) {
    // A release for a fence this node has not made: the nodes disagree about the step.
    core::LogError("MPI wire-up: a release for fence {} that this node did not make", seq);
    return {};
  }
  v1::StepMessage down;
  down.mutable_release()->set_seq(seq);
  down.mutable_release()->set_data(all);
  return [this, down = std::move(down), done = std::move(done), all = std::move(all)]() mutable {
    if (!links_.children.empty()) send_(links_.children, down);
    done(std::move(all));
  };
}

void StepExchange::Modex(int32_t node, uint32_t rank, ModexDone done) {
  v1::StepMessage ask;
  {
    core::MutexLock lock(&mu_);
    const uint64_t id = next_modex_++;
    modex_[id] = std::move(done);
    ask.mutable_modex_request()->set_id(id);
    ask.mutable_modex_request()->set_rank(rank);
  }
  send_({node}, ask);
}

void StepExchange::Abort(const v1::StepMessage::Abort& abort) {
  std::vector<int32_t> others;
  for (int32_t n = 0; n < count_; ++n) {
    if (n != me_) others.push_back(n);
  }
  v1::StepMessage m;
  *m.mutable_abort() = abort;
  if (!others.empty()) send_(others, m);
}

void StepExchange::Receive(int32_t from, const v1::StepMessage& message) {
  std::function<void()> then;
  switch (message.body_case()) {
    case v1::StepMessage::kContribution: {
      core::MutexLock lock(&mu_);
      if (std::find(links_.children.begin(), links_.children.end(), from) ==
          links_.children.end()) {
        core::LogError("MPI wire-up: a fence contribution from node {}, not a child of node {}",
                       from, me_);
        return;
      }
      const uint64_t seq = message.contribution().seq();
      PendingFence& f = fences_[seq];
      f.children_in++;
      f.data.append(message.contribution().data());
      then = Advance(seq);
      break;
    }
    case v1::StepMessage::kRelease: {
      core::MutexLock lock(&mu_);
      then = Release(message.release().seq(), message.release().data());
      break;
    }
    case v1::StepMessage::kModexRequest: {
      ModexServe serve;
      {
        core::MutexLock lock(&mu_);
        serve = serve_;
      }
      const uint64_t id = message.modex_request().id();
      auto reply = [this, from, id](int32_t status, std::string data) {
        v1::StepMessage m;
        m.mutable_modex_reply()->set_id(id);
        m.mutable_modex_reply()->set_status(status);
        m.mutable_modex_reply()->set_data(std::move(data));
        send_({from}, m);
      };
      if (!serve) {
        reply(-1, "");
        return;
      }
      serve(message.modex_request().rank(), std::move(reply));
      return;
    }
    case v1::StepMessage::kModexReply: {
      ModexDone done;
      {
        core::MutexLock lock(&mu_);
        auto it = modex_.find(message.modex_reply().id());
        if (it == modex_.end()) return;
        done = std::move(it->second);
        modex_.erase(it);
      }
      done(message.modex_reply().status(), message.modex_reply().data());
      return;
    }
    case v1::StepMessage::kAbort: {
      OnAbort on_abort;
      {
        core::MutexLock lock(&mu_);
        on_abort = on_abort_;
      }
      if (on_abort) on_abort(message.abort());
      return;
    }
    case v1::StepMessage::BODY_NOT_SET:
      return;
  }
  if (then) then();
}

}  // namespace loom::stepd
