// The PMI wire protocols MPICH-family libraries speak to their process manager over the
// descriptor named by PMI_FD (srun --mpi=pmi2): PMI-1, lines of space-separated KEY=VALUE
// words ("cmd=get kvsname=K key=A\n"), and PMI-2, commands of ';'-separated KEY=VALUE pairs
// behind a 6-character decimal length ("    29cmd=kvs-get;key=A;"), ';' inside a value
// written twice. A client starts in PMI-1 ("cmd=init pmi_version=2 ...") and speaks PMI-2
// from the answer on when it asked for version 2. Also the layout value both read,
// PMI_process_mapping. Pure functions and a decoder; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::stepd {

// One command or answer: "cmd" and its other keys.
struct PmiCommand {
  std::string cmd;
  std::map<std::string, std::string> args;
  std::string Arg(const std::string& key) const {
    auto it = args.find(key);
    return it == args.end() ? std::string() : it->second;
  }
  friend bool operator==(const PmiCommand&, const PmiCommand&) = default;
};

// Splits what a client writes into commands as they complete. Starts in PMI-1 mode.
class PmiDecoder {
 public:
  void Append(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole command, nullopt until one has come. InvalidArgument for bytes that
  // are no command (the connection cannot be read past them).
  StatusOr<std::optional<PmiCommand>> Next();
  // From now on the client speaks PMI-2.
  void SwitchToV2() { v2_ = true; }
  bool v2() const { return v2_; }

 private:
  std::string buffer_;
  bool v2_ = false;
};

// A PMI-1 line: "cmd=NAME k=v k=v\n", in the order given.
std::string FormatPmi1(std::string_view cmd,
                       const std::vector<std::pair<std::string, std::string>>& args);
// A PMI-2 command with its length prefix: "    NNcmd=NAME;k=v;".
std::string FormatPmi2(std::string_view cmd,
                       const std::vector<std::pair<std::string, std::string>>& args);

// PMI_process_mapping for ranks laid out as `ranks` (the ranks on each node, in node
// order): "(vector,(NODE,NODES,PER_NODE),...)", each triple NODES consecutive nodes from
// NODE holding PER_NODE consecutive ranks each, in rank order.
std::string ProcessMapping(const std::vector<std::vector<int32_t>>& ranks);

// Key-value pairs as a fence carries them between nodes, and back (pieces from several
// nodes may follow one another). DataLoss for bytes that are not such pairs.
void AppendPairs(const std::map<std::string, std::string>& pairs, std::string* out);
Status ReadPairs(std::string_view bytes, std::map<std::string, std::string>* into);

}  // namespace loom::stepd
