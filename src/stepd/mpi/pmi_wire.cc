#include "stepd/mpi/pmi_wire.h"

#include <algorithm>
#include <cstdio>

#include "core/strings.h"

namespace loom::stepd {
namespace {

using core::StrCat;

// Commands are short; a bound keeps a broken client from making the server buffer forever.
constexpr size_t kMaxCommand = 1u << 20;

StatusOr<PmiCommand> ParseV1(std::string_view line) {
  PmiCommand c;
  for (std::string_view word : core::Split(line, ' ')) {
    if (word.empty()) continue;
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;  // mcmd continuation words and the like
    std::string key(word.substr(0, eq));
    std::string value(word.substr(eq + 1));
    if (key == "cmd" && c.cmd.empty()) {
      c.cmd = std::move(value);
    } else {
      c.args[std::move(key)] = std::move(value);
    }
  }
  if (c.cmd.empty()) {
    return absl::InvalidArgumentError(StrCat("not a PMI-1 command: ", line.substr(0, 80)));
  }
  return c;
}

StatusOr<PmiCommand> ParseV2(std::string_view body) {
  PmiCommand c;
  std::string key, value;
  bool in_value = false;
  auto finish = [&] {
    if (!key.empty()) {
      if (key == "cmd" && c.cmd.empty()) {
        c.cmd = value;
      } else {
        c.args[key] = value;
      }
    }
    key.clear();
    value.clear();
    in_value = false;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    const char ch = body[i];
    if (ch == ';') {
      if (in_value && i + 1 < body.size() && body[i + 1] == ';') {
        value.push_back(';');
        ++i;
        continue;
      }
      finish();
    } else if (ch == '=' && !in_value) {
      in_value = true;
    } else {
      (in_value ? value : key).push_back(ch);
    }
  }
  finish();
  if (c.cmd.empty()) {
    return absl::InvalidArgumentError(StrCat("not a PMI-2 command: ", body.substr(0, 80)));
  }
  return c;
}

std::string EscapeV2(std::string_view value) {
  std::string out;
  for (char ch : value) {
    out.push_back(ch);
    if (ch == ';') out.push_back(';');
  }
  return out;
}

void PutLength(uint32_t n, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(n >> (8 * i) & 0xff));
}

}  // namespace

StatusOr<std::optional<PmiCommand>> PmiDecoder::Next() {
  if (!v2_) {
    const size_t nl = buffer_.find('\n');
    if (nl == std::string::npos) {
      if (buffer_.size() > kMaxCommand) return absl::InvalidArgumentError("PMI-1 line too long");
      return std::optional<PmiCommand>();
    }
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    ASSIGN_OR_RETURN(PmiCommand c, ParseV1(line));
    return std::optional<PmiCommand>(std::move(c));
  }
  if (buffer_.size() < 6) return std::optional<PmiCommand>();
  size_t length = 0;
  bool digits = false;
  for (size_t i = 0; i < 6; ++i) {
    const char ch = buffer_[i];
    if (ch == ' ' && !digits) continue;
    if (ch < '0' || ch > '9') {
      return absl::InvalidArgumentError(StrCat("not a PMI-2 length: '", buffer_.substr(0, 6), "'"));
    }
    digits = true;
    length = length * 10 + static_cast<size_t>(ch - '0');
  }
  if (length > kMaxCommand) return absl::InvalidArgumentError("PMI-2 command too long");
  if (buffer_.size() < 6 + length) return std::optional<PmiCommand>();
  std::string body = buffer_.substr(6, length);
  buffer_.erase(0, 6 + length);
  ASSIGN_OR_RETURN(PmiCommand c, ParseV2(body));
  return std::optional<PmiCommand>(std::move(c));
}

std::string FormatPmi1(std::string_view cmd,
                       const std::vector<std::pair<std::string, std::string>>& args) {
  std::string out = StrCat("cmd=", cmd);
  for (const auto& [k, v] : args) out += StrCat(" ", k, "=", v);
  out.push_back('\n');
  return out;
}

std::string FormatPmi2(std::string_view cmd,
                       const std::vector<std::pair<std::string, std::string>>& args) {
  std::string body = StrCat("cmd=", cmd, ";");
  for (const auto& [k, v] : args) body += StrCat(k, "=", EscapeV2(v), ";");
  char length[8];
  std::snprintf(length, sizeof length, "%6zu", body.size());
  return std::string(length, 6) + body;
}

std::string ProcessMapping(const std::vector<std::vector<int32_t>>& ranks) {
  // Which node holds each rank, then runs of consecutive ranks on one node.
  int32_t size = 0;
  for (const auto& r : ranks) size += static_cast<int32_t>(r.size());
  std::vector<int32_t> node_of(static_cast<size_t>(size), -1);
  for (size_t n = 0; n < ranks.size(); ++n) {
    for (int32_t r : ranks[n]) {
      if (r >= 0 && r < size) node_of[static_cast<size_t>(r)] = static_cast<int32_t>(n);
    }
  }
  struct Run {
    int32_t node, nodes, per_node;
  };
  std::vector<Run> runs;
  for (int32_t r = 0; r < size;) {
    int32_t end = r;
    while (end < size && node_of[static_cast<size_t>(end)] == node_of[static_cast<size_t>(r)]) {
      ++end;
    }
    const int32_t node = node_of[static_cast<size_t>(r)];
    const int32_t count = end - r;
    if (!runs.empty() && runs.back().per_node == count &&
        runs.back().node + runs.back().nodes == node) {
      runs.back().nodes++;
    } else {
      runs.push_back({node, 1, count});
    }
    r = end;
  }
  std::string out = "(vector";
  for (const Run& run : runs) out += StrCat(",(", run.node, ",", run.nodes, ",", run.per_node, ")");
  return out + ")";
}

void AppendPairs(const std::map<std::string, std::string>& pairs, std::string* out) {
  for (const auto& [k, v] : pairs) {
    PutLength(static_cast<uint32_t>(k.size()), out);
    out->append(k);
    PutLength(static_cast<uint32_t>(v.size()), out);
    out->append(v);
  }
}

Status ReadPairs(std::string_view bytes, std::map<std::string, std::string>* into) {
  auto take = [&bytes](std::string* s) -> bool {
    if (bytes.size() < 4) return false;
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
      n |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
    bytes.remove_prefix(4);
    if (bytes.size() < n) return false;
    s->assign(bytes.substr(0, n));
    bytes.remove_prefix(n);
    return true;
  };
  while (!bytes.empty()) {
    std::string k, v;
    if (!take(&k) || !take(&v))
      return absl::DataLossError("a fence's key-value pairs are cut short");
    (*into)[std::move(k)] = std::move(v);
  }
  return absl::OkStatus();
}

}  // namespace loom::stepd
