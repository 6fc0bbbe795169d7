#include "conf/local_cluster.h"

#include <optional>
#include <vector>

#include "conf/diagnostic.h"
#include "conf/internal/key_table.h"
#include "conf/internal/lexer.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using core::StrCat;
using internal::KeyValue;
using internal::Scope;
using internal::Statement;

// Global keys that say where the controller runs and how it authenticates and stores.
bool IsPlaceKey(std::string_view canonical) {
  for (std::string_view k :
       {"SlurmctldHost", "ControlMachine", "ControlAddr", "BackupController", "BackupAddr",
        "SlurmctldPort", "AuthType", "AuthInfo", "StateSaveLocation", "SlurmdParameters"}) {
    if (canonical == k) return true;
  }
  return false;
}

// `key=value` as the lexer reads it back: quoted when the value needs it.
std::string Pair(const KeyValue& kv) {
  bool quote = kv.quoted || kv.value.empty();
  for (char c : kv.value) quote = quote || c == ' ' || c == '\t' || c == '#';
  return quote ? StrCat(kv.key, "=\"", kv.value, "\"") : StrCat(kv.key, "=", kv.value);
}

std::string Line(const std::vector<KeyValue>& pairs) {
  std::vector<std::string> out;
  for (const KeyValue& kv : pairs) out.push_back(Pair(kv));
  return core::Join(out, " ");
}

}  // namespace

StatusOr<std::string> LocalizeSlurmConf(std::string_view text, std::string_view file_name,
                                        const IncludeResolver& resolver,
                                        const LocalPlacement& place) {
  std::vector<Diagnostic> errors, warnings;
  std::vector<Statement> statements;
  std::vector<std::string> files;
  internal::StatementReader(resolver, &errors, &warnings)
      .Read(text, file_name, &statements, &files);
  if (!errors.empty()) return absl::InvalidArgumentError(JoinDiagnostics(errors));

  std::string out = StrCat(
      "# Written by `loom cluster up` from ", file_name,
      ",\n# to run on this host: the controller and each node's daemon on 127.0.0.1 at a port\n"
      "# of its own, the controller's state and MUNGE credentials in the cluster's directory.\n",
      "SlurmctldHost=localhost(127.0.0.1)\n", "SlurmctldPort=", place.controller_port, "\n",
      "AuthType=auth/munge\n", "AuthInfo=socket=", place.munge_socket, "\n",
      "StateSaveLocation=", place.state_dir, "\n",
      "# Every node is emulated on this host: take each to have what this file says.\n",
      "SlurmdParameters=config_overrides\n");
  if (place.dbd_port > 0) {
    out += StrCat("AccountingStorageHost=127.0.0.1\nAccountingStoragePort=", place.dbd_port, "\n");
  }
  auto is_dbd_key = [&](std::string_view k) {
    return place.dbd_port > 0 && (k == "AccountingStorageHost" || k == "AccountingStoragePort" ||
                                  k == "AccountingStorageBackupHost");
  };
  for (const Statement& st : statements) {
    const KeyValue& head = st.pairs.front();
    std::optional<std::string_view> kind = internal::CanonicalKey(Scope::kGlobal, head.key);
    if (kind == "NodeName" && !core::EqualsIgnoreCase(head.value, "DEFAULT")) {
      StatusOr<std::vector<std::string>> names = core::ExpandHostlist(head.value);
      if (!names.ok()) {
        return absl::InvalidArgumentError(
            Diagnostic{Diagnostic::Severity::kError, st.location, head.key,
                       StrCat("NodeName=", head.value,
                              " is not a valid hostlist: ", std::string(names.status().message()))}
                .ToString());
      }
      std::vector<KeyValue> pairs;
      for (const KeyValue& kv : st.pairs) {
        std::optional<std::string_view> k = internal::CanonicalKey(Scope::kNode, kv.key);
        if (k != "NodeAddr" && k != "Port") pairs.push_back(kv);
      }
      std::string ports;
      for (size_t i = 0; i < names->size(); ++i) {
        ports += StrCat(i == 0 ? "" : ",", place.node_port());
      }
      pairs.push_back({"NodeAddr", "127.0.0.1", false});
      pairs.push_back({"Port", ports, false});
      out += Line(pairs) + "\n";
      continue;
    }
    if (kind == "NodeName" || kind == "PartitionName" || kind == "DownNodes" || kind == "NodeSet" ||
        kind == "FrontendName") {
      out += Line(st.pairs) + "\n";
      continue;
    }
    std::vector<KeyValue> kept;
    for (const KeyValue& kv : st.pairs) {
      std::optional<std::string_view> k = internal::CanonicalKey(Scope::kGlobal, kv.key);
      if (!k || (!IsPlaceKey(*k) && !is_dbd_key(*k))) kept.push_back(kv);
    }
    if (!kept.empty()) out += Line(kept) + "\n";
  }
  return out;
}

}  // namespace loom::conf
