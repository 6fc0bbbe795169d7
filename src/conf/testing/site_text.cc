#include "conf/testing/site_text.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/strings.h"

namespace loom::conf::testing {

StatusOr<SiteConfig> SiteFromText(const std::string& name, const std::string& slurm_conf,
                                  const std::map<std::string, std::string>& beside) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    core::StrCat("loom_site_", name, "_", ::getpid());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!std::filesystem::create_directories(dir, ec) && ec) {
    return absl::InternalError(core::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  }
  std::ofstream(dir / "slurm.conf") << slurm_conf;
  for (const auto& [file, text] : beside) std::ofstream(dir / file) << text;
  std::vector<Diagnostic> warnings;
  StatusOr<SiteConfig> site = LoadSiteConfig((dir / "slurm.conf").string(), &warnings);
  std::filesystem::remove_all(dir, ec);  // everything is read by now
  return site;
}

}  // namespace loom::conf::testing
