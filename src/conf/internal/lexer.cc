#include "conf/internal/lexer.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace loom::conf::internal {
namespace {

using core::StrCat;

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

// Removes the comment of one physical line; `\#` becomes a literal `#`.
std::string StripComment(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '"') quoted = !quoted;
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      out.push_back('#');
      ++i;
      continue;
    }
    if (c == '#' && !quoted) break;
    out.push_back(c);
  }
  return out;
}

std::string Unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"')
    return std::string(s.substr(1, s.size() - 2));
  return std::string(s);
}

}  // namespace

std::vector<LogicalLine> SplitLogicalLines(std::string_view text) {
  std::vector<LogicalLine> out;
  std::string pending;
  int pending_line = 0;
  bool continuing = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view physical = text.substr(pos, end - pos);
    if (!physical.empty() && physical.back() == '\r') physical.remove_suffix(1);
    ++line_no;
    std::string stripped = StripComment(physical);
    while (!stripped.empty() && IsSpace(stripped.back())) stripped.pop_back();
    bool continues = !stripped.empty() && stripped.back() == '\\';
    if (continues) stripped.pop_back();
    if (!continuing) {
      pending_line = line_no;
      pending = std::move(stripped);
    } else {
      pending.push_back(' ');
      pending += stripped;
    }
    continuing = continues;
    if (!continuing) {
      if (!core::Trim(pending).empty()) out.push_back({pending_line, std::move(pending)});
      pending.clear();
    }
    if (end == text.size()) break;
    pos = end + 1;
  }
  if (continuing && !core::Trim(pending).empty()) out.push_back({pending_line, std::move(pending)});
  return out;
}

StatusOr<std::vector<KeyValue>> TokenizeLine(std::string_view line) {
  // A NUL would cut the value short wherever it is later read as a C string.
  if (const size_t nul = line.find('\0'); nul != std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat(
        "a NUL byte at character ", nul + 1,
        " of this line; the file is not plain text (was it saved in UTF-16, or damaged?): "
        "remove the byte"));
  }
  std::vector<KeyValue> pairs;
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && IsSpace(line[i])) ++i;
    if (i >= n) break;
    size_t key_start = i;
    while (i < n && IsKeyChar(line[i])) ++i;
    std::string_view key = line.substr(key_start, i - key_start);
    size_t after_key = i;
    while (i < n && IsSpace(line[i])) ++i;
    if (key.empty() || i >= n || line[i] != '=') {
      size_t tok_end = after_key;
      while (tok_end < n && !IsSpace(line[tok_end])) ++tok_end;
      std::string_view token = line.substr(key_start, std::max(tok_end, after_key) - key_start);
      if (token.empty()) token = line.substr(key_start, 1);
      return absl::InvalidArgumentError(StrCat("expected Key=Value but found '", token, "'"));
    }
    ++i;  // '='
    while (i < n && IsSpace(line[i])) ++i;
    KeyValue kv;
    kv.key = std::string(key);
    if (i < n && line[i] == '"') {
      size_t close = line.find('"', i + 1);
      if (close == std::string_view::npos) {
        return absl::InvalidArgumentError(
            StrCat("unterminated quoted value for ", key, " (a closing \" is missing)"));
      }
      kv.value = std::string(line.substr(i + 1, close - i - 1));
      kv.quoted = true;
      i = close + 1;
      if (i < n && !IsSpace(line[i])) {
        return absl::InvalidArgumentError(StrCat("unexpected text after the quoted value of ", key,
                                                 ": '", line.substr(i, std::min<size_t>(20, n - i)),
                                                 "'"));
      }
    } else {
      size_t v_start = i;
      while (i < n && !IsSpace(line[i])) ++i;
      kv.value = std::string(line.substr(v_start, i - v_start));
    }
    pairs.push_back(std::move(kv));
  }
  return pairs;
}

bool ParseIncludeLine(std::string_view line, std::string* path) {
  std::string_view s = core::Trim(line);
  constexpr std::string_view kWord = "include";
  if (s.size() < kWord.size() || !core::EqualsIgnoreCase(s.substr(0, kWord.size()), kWord)) {
    return false;
  }
  if (s.size() > kWord.size() && !IsSpace(s[kWord.size()])) return false;
  *path = Unquote(core::Trim(s.substr(kWord.size())));
  return true;
}

std::string DirName(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string JoinPath(std::string_view dir, std::string_view path) {
  if (dir.empty() || (!path.empty() && path.front() == '/')) return std::string(path);
  if (dir.back() == '/') return StrCat(dir, path);
  return StrCat(dir, "/", path);
}

void StatementReader::Read(std::string_view text, std::string_view file_name,
                           std::vector<Statement>* out, std::vector<std::string>* files) {
  std::string name(file_name);
  main_dir_ = DirName(name);
  files->push_back(name);
  ReadFile(text, name, out, files);
}

void StatementReader::Error(const SourceLocation& at, std::string message) {
  errors_->push_back({Diagnostic::Severity::kError, at, "Include", std::move(message)});
}

void StatementReader::ReadFile(std::string_view text, const std::string& name,
                               std::vector<Statement>* out, std::vector<std::string>* files) {
  stack_.push_back(name);
  for (LogicalLine& ll : SplitLogicalLines(text)) {
    SourceLocation at{name, ll.line};
    std::string include_path;
    if (ParseIncludeLine(ll.text, &include_path)) {
      Include(at, include_path, name, out, files);
      continue;
    }
    StatusOr<std::vector<KeyValue>> pairs = TokenizeLine(ll.text);
    if (!pairs.ok()) {
      errors_->push_back(
          {Diagnostic::Severity::kError, at, "", std::string(pairs.status().message())});
      continue;
    }
    for (const KeyValue& kv : *pairs) {
      if (core::EqualsIgnoreCase(kv.key, "ClusterName")) cluster_name_ = kv.value;
    }
    out->push_back({std::move(at), std::move(*pairs)});
  }
  stack_.pop_back();
}

void StatementReader::Include(const SourceLocation& at, std::string_view arg,
                              const std::string& including, std::vector<Statement>* out,
                              std::vector<std::string>* files) {
  if (arg.empty()) {
    Error(at, "Include needs a file name: Include <path>");
    return;
  }
  std::string path;
  for (size_t i = 0; i < arg.size(); ++i) {
    if (arg[i] == '%' && i + 1 < arg.size() && arg[i + 1] == 'c') {
      if (cluster_name_.empty()) {
        Error(at, StrCat("Include path '", arg,
                         "' uses %c but no ClusterName is set before this line"));
        return;
      }
      path += cluster_name_;
      ++i;
    } else {
      path.push_back(arg[i]);
    }
  }
  if (static_cast<int>(stack_.size()) >= kMaxIncludeDepth) {
    Error(at, StrCat("Include of '", path, "' nests deeper than ", kMaxIncludeDepth,
                     " files; is there an include cycle?"));
    return;
  }
  std::vector<std::string> candidates{JoinPath(DirName(including), path)};
  if (path.front() != '/' && DirName(including) != main_dir_) {
    candidates.push_back(JoinPath(main_dir_, path));
  }
  std::vector<IncludedFile> found;
  bool any_ok = false;
  for (const std::string& candidate : candidates) {
    StatusOr<std::vector<IncludedFile>> r = resolver_.Resolve(candidate);
    if (r.ok()) {
      any_ok = true;
      if (!r->empty()) {
        found = std::move(*r);
        break;
      }
    } else if (!absl::IsNotFound(r.status())) {
      Error(at, StrCat("cannot read Include file '", candidate,
                       "': ", std::string(r.status().message())));
      return;
    }
  }
  if (found.empty()) {
    if (any_ok) {  // a pattern that matched nothing
      warnings_->push_back({Diagnostic::Severity::kWarning, at, "Include",
                            StrCat("Include pattern '", path, "' matches no files")});
    } else {
      std::string looked;
      for (const std::string& c : candidates) looked += StrCat(looked.empty() ? "" : ", ", c);
      Error(at, StrCat("Include file '", path, "' not found (looked for ", looked, ")"));
    }
    return;
  }
  for (IncludedFile& file : found) {
    if (std::find(stack_.begin(), stack_.end(), file.name) != stack_.end()) {
      std::string chain;
      for (const std::string& s : stack_) chain += StrCat(s, " -> ");
      Error(at, StrCat("include cycle: ", chain, file.name));
      continue;
    }
    files->push_back(file.name);
    ReadFile(file.text, file.name, out, files);
  }
}

}  // namespace loom::conf::internal
