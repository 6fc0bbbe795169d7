// What scontrol's files share: the parsed command line, the output helpers, and the
// commands that change the controller's state (scontrol_actions.cc).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client.h"

namespace loom::cli::scontrol {

struct Options {
  std::string program = "scontrol";
  bool quiet = false;
  bool oneliner = false;  // -o
  bool details = false;   // -d
  std::optional<std::string> clusters;
  std::vector<std::string> words;  // the command and its arguments
};

void Print(FILE* out, std::string_view text);
// "scontrol: error: MESSAGE"
void PrintError(const Options& opts, std::string_view message);

// The controller's client, or nullopt after printing why there is none.
std::optional<Client> ConnectOrSay(const Options& opts);

// hold, release, update JobId=..., update NodeName=..., ping, requeue, requeue_hold.
int JobAction(const Options& opts, std::string_view keyword, const std::vector<std::string>& words);
// reconfigure
int Reconfigure(const Options& opts);
// setdebug LEVEL, setdebugflags +FLAG,-FLAG: the controller's log, changed live.
int SetDebug(const Options& opts, std::string_view keyword, const std::vector<std::string>& words);
// show config
int ShowConfig(const Options& opts);
// show assoc_mgr [users=U,...] [accounts=A,...] [qos=Q,...] [flags=users|assoc|qos,...]:
// `args` are the words after assoc_mgr.
int ShowAssocMgr(const Options& opts, const std::vector<std::string>& args);
// show step [JOBID[.STEPID]] (scontrol_actions.cc)
int ShowSteps(const Options& opts, const char* value);

// create reservation, update ReservationName=..., delete ReservationName=... (scontrol_resv.cc).
int ReservationAction(const Options& opts, std::string_view keyword,
                      const std::vector<std::string>& words);
// Whether an update's words name a reservation.
bool NamesReservation(const std::vector<std::string>& words);
// show reservation [NAME].
int ShowReservations(const Options& opts, const char* value);

}  // namespace loom::cli::scontrol
