#include "model/association.h"

#include <algorithm>

namespace loom::model {

const UserAssociation* AssociationTable::Find(std::string_view user, std::string_view account,
                                              std::string_view partition) const {
  const UserAssociation* any_partition = nullptr;
  for (const UserAssociation& a : associations) {
    if (a.user != user || a.account != account) continue;
    if (!a.partition.empty() && a.partition == partition) return &a;
    if (a.partition.empty() && any_partition == nullptr) any_partition = &a;
  }
  return any_partition;
}

std::string AssociationTable::DefaultQos(const UserAssociation& a) {
  if (!a.default_qos.empty()) return a.default_qos;
  if (std::find(a.qos.begin(), a.qos.end(), "normal") != a.qos.end()) return "normal";
  return a.qos.size() == 1 ? a.qos.front() : "";
}

}  // namespace loom::model
