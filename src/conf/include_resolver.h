// IncludeResolver: how the slurm.conf parser reads the files named by `Include` lines.
// The parser does the path arithmetic (relative paths, %c); a resolver only turns an
// absolute path or glob pattern into file contents. Implementations: the real filesystem,
// an in-memory map for tests, and one that has no files at all.
// Resolvers are const after construction and thread-safe for concurrent Resolve calls.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::conf {

struct IncludedFile {
  std::string name;  // canonical name, used in messages and for include-cycle detection
  std::string text;
};

class IncludeResolver {
 public:
  virtual ~IncludeResolver() = default;

  // Returns the files `path` names. A path with glob characters (*, ?, [) may match any
  // number of files, returned sorted by name; no match gives an empty vector. A plain path
  // that does not exist gives NotFoundError; an unreadable one another error.
  virtual StatusOr<std::vector<IncludedFile>> Resolve(std::string_view path) const = 0;
};

// Reads the real filesystem (glob(3) for patterns). Names are the paths as resolved by
// realpath(3), so that symlinks cannot hide an include cycle.
class FileIncludeResolver final : public IncludeResolver {
 public:
  StatusOr<std::vector<IncludedFile>> Resolve(std::string_view path) const override;
};

// Serves files from a map of path -> contents; patterns match with fnmatch(3) semantics.
class InMemoryIncludeResolver final : public IncludeResolver {
 public:
  InMemoryIncludeResolver() = default;
  explicit InMemoryIncludeResolver(std::map<std::string, std::string> files)
      : files_(std::move(files)) {}

  void Add(std::string path, std::string text) { files_[std::move(path)] = std::move(text); }
  StatusOr<std::vector<IncludedFile>> Resolve(std::string_view path) const override;

 private:
  std::map<std::string, std::string> files_;
};

// Has no files: every plain path is NotFound, every pattern matches nothing.
class NoIncludeResolver final : public IncludeResolver {
 public:
  StatusOr<std::vector<IncludedFile>> Resolve(std::string_view path) const override;
};

// True when `path` contains glob metacharacters (*, ? or [).
bool IsGlobPattern(std::string_view path);

}  // namespace loom::conf
