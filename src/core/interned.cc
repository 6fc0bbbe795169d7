#include "core/interned.h"

#include "absl/container/node_hash_set.h"
#include "core/mutex.h"

namespace loom::core {
namespace {

// Nodes never move, so a pointer to an element stays valid as the set grows.
struct Pool {
  Mutex mu;
  absl::node_hash_set<std::string> strings ABSL_GUARDED_BY(mu);
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // never destroyed: interned strings outlive every record
  return *pool;
}

const std::string* Intern(std::string_view s) {
  Pool& pool = ThePool();
  MutexLock lock(&pool.mu);
  return &*pool.strings.emplace(s).first;
}

}  // namespace

Interned::Interned() {
  static const std::string* const empty = Intern("");
  s_ = empty;
}

Interned::Interned(std::string_view s) : s_(Intern(s)) {}

}  // namespace loom::core
