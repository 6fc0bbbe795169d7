#include "conf/log_settings.h"

#include <unistd.h>

namespace loom::conf {

core::LogSettings SlurmctldLogSettings(const ClusterConfig& c, bool foreground) {
  core::LogSettings s;
  s.level = c.slurmctld_debug;
  s.file = c.slurmctld_log_file;
  s.syslog_level = c.slurmctld_syslog_debug;
  s.foreground = foreground;
  s.debug_flags = c.debug_flags;
  return s;
}

core::LogSettings SlurmdLogSettings(const ClusterConfig& c, std::string_view node,
                                    bool foreground) {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  core::LogSettings s;
  s.level = c.slurmd_debug;
  s.file = core::ExpandLogFileName(c.slurmd_log_file, node, host);
  s.syslog_level = c.slurmd_syslog_debug;
  s.foreground = foreground;
  s.debug_flags = c.debug_flags;
  return s;
}

}  // namespace loom::conf
