#include "conf/include_resolver.h"

#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/strings.h"

namespace loom::conf {
namespace {

using core::StrCat;

StatusOr<IncludedFile> ReadOneFile(const std::string& path) {
  char resolved[PATH_MAX];
  std::string name = path;
  if (realpath(path.c_str(), resolved) != nullptr) {
    name = resolved;
  } else if (errno == ENOENT || errno == ENOTDIR) {
    return absl::NotFoundError(StrCat("no such file: ", path));
  }
  std::ifstream in(name, std::ios::binary);
  if (!in)
    return absl::PermissionDeniedError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::DataLossError(StrCat("error reading ", path));
  return IncludedFile{std::move(name), buf.str()};
}

}  // namespace

bool IsGlobPattern(std::string_view path) {
  return path.find_first_of("*?[") != std::string_view::npos;
}

StatusOr<std::vector<IncludedFile>> FileIncludeResolver::Resolve(std::string_view path) const {
  std::string p(path);
  std::vector<IncludedFile> out;
  if (!IsGlobPattern(p)) {
    StatusOr<IncludedFile> f = ReadOneFile(p);
    if (!f.ok()) return f.status();
    out.push_back(std::move(*f));
    return out;
  }
  glob_t g{};
  int rc = glob(p.c_str(), GLOB_ERR, nullptr, &g);
  if (rc == GLOB_NOMATCH) {
    globfree(&g);
    return out;
  }
  if (rc != 0) {
    globfree(&g);
    return absl::UnavailableError(StrCat("cannot expand pattern ", p));
  }
  for (size_t i = 0; i < g.gl_pathc; ++i) {  // glob(3) returns names sorted
    StatusOr<IncludedFile> f = ReadOneFile(g.gl_pathv[i]);
    if (!f.ok()) {
      globfree(&g);
      return f.status();
    }
    out.push_back(std::move(*f));
  }
  globfree(&g);
  return out;
}

StatusOr<std::vector<IncludedFile>> InMemoryIncludeResolver::Resolve(std::string_view path) const {
  std::string p(path);
  std::vector<IncludedFile> out;
  if (!IsGlobPattern(p)) {
    auto it = files_.find(p);
    if (it == files_.end()) return absl::NotFoundError(StrCat("no such file: ", p));
    out.push_back({it->first, it->second});
    return out;
  }
  for (const auto& [name, text] : files_) {  // std::map iterates sorted by name
    if (fnmatch(p.c_str(), name.c_str(), FNM_PATHNAME) == 0) out.push_back({name, text});
  }
  return out;
}

StatusOr<std::vector<IncludedFile>> NoIncludeResolver::Resolve(std::string_view path) const {
  if (IsGlobPattern(path)) return std::vector<IncludedFile>{};
  return absl::NotFoundError(StrCat("no such file: ", path));
}

}  // namespace loom::conf
