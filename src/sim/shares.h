// The account tree whose shares fair share reads in `loom sim`: a file in the form `sacctmgr
// dump` writes (Cluster, Parent, Account and User lines), or a list of accounts with their
// shares; then completed with the accounts and users the workload's jobs name. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/association.h"
#include "sim/simulator.h"

namespace loom::sim {

// One line of a dump file: `Kind - 'NAME':Key=Value:...` (quotes around values are
// dropped; a colon inside quotes is part of the value).
struct DumpLine {
  int64_t number = 0;  // in the file
  std::string kind;    // Cluster, Parent, Account, User (as written)
  std::string name;
  std::vector<std::pair<std::string, std::string>> settings;
};

// Every line of a dump file but blanks and comments, split. Errors name `where`:line and
// what to write instead.
StatusOr<std::vector<DumpLine>> ParseDumpLines(std::string_view text, std::string_view where);

// A dump file's text: `Parent - 'ACCOUNT'` names where the Account and User lines after it
// go; `Fairshare=N|parent` is read from each line, the other settings are reported in
// `notes` as not simulated. Errors name `where`:line and what to write instead.
StatusOr<model::AssociationTable> ParseShareDump(std::string_view text, std::string_view where,
                                                 std::vector<std::string>* notes);

// "physics=40,chem=60": accounts under root with their shares.
StatusOr<model::AssociationTable> ParseShareList(std::string_view list);

// `spec` names a dump file when a file of that name exists, else it is a list.
StatusOr<model::AssociationTable> ReadShares(const std::string& spec,
                                             std::vector<std::string>* notes);

// Adds what `jobs` name that `table` lacks, with Fairshare=1: accounts under root, users
// under their account; a note says how many of each were added, and how many jobs name no
// account (they have no association, and a fair-share factor of 0).
void AddWorkloadAssociations(std::span<const SimJob> jobs, model::AssociationTable* table,
                             std::vector<std::string>* notes);

}  // namespace loom::sim
