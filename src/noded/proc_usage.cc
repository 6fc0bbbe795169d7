#include "noded/proc_usage.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace loom::noded {

std::map<pid_t, ProcessUsage> SessionsUsage(const std::set<pid_t>& sids,
                                            const std::string& proc) {
  std::map<pid_t, ProcessUsage> out;
  if (sids.empty()) return out;
  static const long ticks = std::max(1L, ::sysconf(_SC_CLK_TCK));
  static const long page = std::max(1L, ::sysconf(_SC_PAGESIZE));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // it ended meanwhile
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses; fields follow the
    // last ')'. Numbered as proc(5) numbers them, STATE is field 3.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 1));
    std::vector<std::string> f(1, "");  // f[3] is field 3
    f.resize(3);
    for (std::string word; fields >> word;) f.push_back(word);
    if (f.size() <= 24) continue;
    const auto session = static_cast<pid_t>(std::strtol(f[6].c_str(), nullptr, 10));
    if (!sids.contains(session)) continue;
    ProcessUsage& u = out[session];
    ++u.processes;
    const int64_t cpu_ticks = std::strtoll(f[14].c_str(), nullptr, 10) +
                              std::strtoll(f[15].c_str(), nullptr, 10) +
                              std::strtoll(f[16].c_str(), nullptr, 10) +
                              std::strtoll(f[17].c_str(), nullptr, 10);
    u.cpu_usec += cpu_ticks * 1000000 / ticks;
    u.major_faults +=
        std::strtoll(f[12].c_str(), nullptr, 10) + std::strtoll(f[13].c_str(), nullptr, 10);
    u.vsize_bytes += std::strtoll(f[23].c_str(), nullptr, 10);
    u.rss_bytes += std::strtoll(f[24].c_str(), nullptr, 10) * page;
  }
  return out;
}

}  // namespace loom::noded
