// A string kept once for the whole process, for values that repeat across many records: the
// user and partition names of the controller's jobs. A record holds a pointer (8 bytes)
// instead of a std::string (32). Interned strings are never freed, so intern only values drawn
// from a small set (names of users, partitions), never free text.
//
// Thread-safety: thread-safe; the pool is guarded by a mutex, and an Interned is an immutable
// value that any number of threads may read.
#pragma once

#include <string>
#include <string_view>

namespace loom::core {

class Interned {
 public:
  Interned();  // the empty string
  explicit Interned(std::string_view s);
  // Assigned from text as the std::string it stands for would be.
  Interned& operator=(std::string_view s) { return *this = Interned(s); }
  Interned& operator=(const std::string& s) { return *this = Interned(s); }
  Interned& operator=(const char* s) { return *this = Interned(s); }

  const std::string& str() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT
  bool empty() const { return s_->empty(); }

  // Equal strings are one interned string: comparing pointers compares contents.
  friend bool operator==(const Interned& a, const Interned& b) { return a.s_ == b.s_; }
  friend bool operator==(const Interned& a, std::string_view b) { return *a.s_ == b; }

 private:
  const std::string* s_;
};

}  // namespace loom::core
