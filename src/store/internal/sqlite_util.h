// SQLite helpers the store's files share: owned statements, reset on scope exit, binding
// in order, reading columns. Not part of loom_store's interface. Thread-compatible.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace loom::store::internal {

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

// Resets a cached statement on scope exit so it is ready for its next use and holds nothing.
class ResetOnExit {
 public:
  explicit ResetOnExit(sqlite3_stmt* s) : s_(s) {}
  ~ResetOnExit() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  sqlite3_stmt* s_;
};

// Binds parameters 1, 2, ... in order and remembers the first failure. Text and blobs are
// bound without a copy; the caller keeps them alive until the statement is reset.
class Binder {
 public:
  explicit Binder(sqlite3_stmt* s) : s_(s) {}
  Binder& Int(int64_t v) { return Check(sqlite3_bind_int64(s_, ++index_, v)); }
  Binder& Null() { return Check(sqlite3_bind_null(s_, ++index_)); }
  Binder& Text(std::string_view v) {
    return Check(sqlite3_bind_text64(s_, ++index_, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8));
  }
  Binder& Blob(std::string_view v) {
    return Check(sqlite3_bind_blob64(s_, ++index_, v.data(), v.size(), SQLITE_STATIC));
  }
  int rc() const { return rc_; }

 private:
  Binder& Check(int rc) {
    if (rc_ == SQLITE_OK) rc_ = rc;
    return *this;
  }
  sqlite3_stmt* s_;
  int index_ = 0;
  int rc_ = SQLITE_OK;
};

inline std::string ColumnText(sqlite3_stmt* s, int i) {
  const unsigned char* p = sqlite3_column_text(s, i);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(s, i));
}

inline std::string ColumnBlob(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  if (p == nullptr) return {};
  return std::string(static_cast<const char*>(p), sqlite3_column_bytes(s, i));
}

}  // namespace loom::store::internal
