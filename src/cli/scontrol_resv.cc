// scontrol create|update|delete reservation and show reservation, and sinfo -T: advance
// reservations through loomctld, with Slurm's words and messages.
#include <string>
#include <vector>

#include "cli/format/resv_format.h"
#include "cli/scontrol.h"
#include "cli/submit/begin_time.h"
#include "cli/wire_views.h"
#include "core/clock.h"
#include "core/strings.h"

namespace loom::cli::scontrol {
namespace {

using core::EqualsIgnoreCase;
using core::StrCat;

bool IsNameKey(std::string_view key) {
  return EqualsIgnoreCase(key, "ReservationName") || EqualsIgnoreCase(key, "Reservation") ||
         EqualsIgnoreCase(key, "ResvName");
}

// KEY=VALUE words into the request; times into Unix seconds here, in the user's zone, as
// scontrol reads them. False after printing why not.
bool ReadWords(const Options& opts, const std::vector<std::string>& words, size_t first,
               v1::ReservationRequest* req) {
  for (size_t i = first; i < words.size(); ++i) {
    const std::string& w = words[i];
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      PrintError(opts, StrCat("Invalid input: ", w, "; use Key=Value"));
      return false;
    }
    const std::string key = w.substr(0, eq);
    std::string value = w.substr(eq + 1);
    if (EqualsIgnoreCase(key, "StartTime") || EqualsIgnoreCase(key, "EndTime")) {
      StatusOr<int64_t> t =
          submit::ParseSlurmDateTime(value, core::RealClock().UnixSeconds(), absl::LocalTimeZone());
      if (!t.ok()) {
        PrintError(opts, std::string(t.status().message()));
        return false;
      }
      value = std::to_string(*t);
    }
    (*req->mutable_fields())[key] = value;
  }
  return true;
}

bool Has(const v1::ReservationRequest& req, std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : req.fields()) {
    for (std::string_view k : keys) {
      if (EqualsIgnoreCase(key, k)) return true;
    }
  }
  return false;
}

int Create(const Options& opts, Client& client, const std::vector<std::string>& words,
           size_t first) {
  v1::ReservationRequest req;
  req.set_action(v1::ReservationRequest::CREATE);
  if (!ReadWords(opts, words, first, &req)) return 1;
  // What scontrol itself checks before it asks.
  if (!Has(req, {"StartTime"})) {
    PrintError(opts, "A start time must be given.  No reservation created.");
    return 1;
  }
  if (!Has(req, {"EndTime", "Duration"})) {
    PrintError(opts, "An end time or duration must be given.  No reservation created.");
    return 1;
  }
  if (!Has(req, {"Nodes", "NodeList", "NodeCnt", "NodeCount", "CoreCnt", "BurstBuffer", "Licenses",
                 "Watts"})) {
    PrintError(opts,
               "CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified.  No "
               "reservation created.");
    return 1;
  }
  v1::ReservationReply reply;
  Status s = client.Call("Reservation", req, &reply);
  if (!s.ok()) {
    Print(stderr, StrCat("Error creating the reservation: ", std::string(s.message()), "\n"));
    return 1;
  }
  Print(stdout, StrCat("Reservation created: ", reply.name(), "\n"));
  return 0;
}

}  // namespace

bool NamesReservation(const std::vector<std::string>& words) {
  for (size_t i = 1; i < words.size(); ++i) {
    if (IsNameKey(words[i].substr(0, words[i].find('=')))) return true;
  }
  return false;
}

int ReservationAction(const Options& opts, std::string_view keyword,
                      const std::vector<std::string>& words) {
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  if (keyword == "create") {
    // create reservation KEY=VALUE... (the entity word may be shortened to "res").
    return Create(opts, *client, words, 2);
  }
  if (keyword == "update") {
    v1::ReservationRequest req;
    req.set_action(v1::ReservationRequest::UPDATE);
    // "update reservation ReservationName=..." or "update ReservationName=...".
    const size_t first = words.size() > 1 && words[1].find('=') == std::string::npos ? 2 : 1;
    if (!ReadWords(opts, words, first, &req)) return 1;
    v1::ReservationReply reply;
    Status s = client->Call("Reservation", req, &reply);
    if (!s.ok()) {
      const std::string why(s.message());
      Print(stderr,
            StrCat("Error updating the reservation: ", why, "\nslurm_update error: ", why, "\n"));
      return 1;
    }
    Print(stdout, "Reservation updated.\n");
    return 0;
  }
  // delete ReservationName=NAME, or delete reservation NAME.
  std::string tag, name;
  if (words.size() == 2 && words[1].find('=') != std::string::npos) {
    tag = words[1].substr(0, words[1].find('='));
    name = words[1].substr(words[1].find('=') + 1);
  } else if (words.size() == 3) {
    tag = words[1];
    name = words[2];
  }
  constexpr std::string_view kEntity = "reservation";
  const bool entity = tag.size() >= 3 && tag.size() <= kEntity.size() &&
                      EqualsIgnoreCase(kEntity.substr(0, tag.size()), tag);
  if (name.empty() || !(IsNameKey(tag) || entity)) {
    PrintError(opts, "delete takes ReservationName=NAME (reservations are what Loom deletes)");
    return 1;
  }
  v1::ReservationRequest req;
  req.set_action(v1::ReservationRequest::DELETE);
  (*req.mutable_fields())["ReservationName"] = name;
  v1::ReservationReply reply;
  Status s = client->Call("Reservation", req, &reply);
  if (!s.ok()) {
    Print(stderr, StrCat("delete_reservation ", tag, ": ", std::string(s.message()), "\n"));
    return 1;
  }
  return 0;
}

int ShowReservations(const Options& opts, const char* value) {
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  format::RenderContext ctx;
  StatusOr<std::vector<format::ReservationView>> resvs =
      FetchReservations(*client, value ? value : "", &ctx);
  if (!resvs.ok()) {
    Print(stderr, StrCat(std::string(resvs.status().message()), "\n"));
    return 1;
  }
  Print(stdout, format::RenderReservations(*resvs, opts.oneliner, ctx));
  return 0;
}

}  // namespace loom::cli::scontrol
