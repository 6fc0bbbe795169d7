// GPU discovery through NVML, opened with dlopen.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "hw/hardware.h"
#include "hw/nvml_api.h"

namespace loom::hw {
namespace {

using core::StrCat;

// NVML's "00000000:3B:00.0" as the kernel writes it: "0000:3b:00.0".
std::string KernelBusId(const char* nvml_id) {
  std::string id(nvml_id);
  if (const size_t colon = id.find(':'); colon != std::string::npos && colon > 4) {
    id = id.substr(colon - 4);
  }
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return id;
}

class Library {
 public:
  explicit Library(void* handle) : handle_(handle) {}
  ~Library() {
    if (shutdown_) shutdown_();
    if (handle_) ::dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  template <typename Fn>
  StatusOr<Fn> Find(const char* name) {
    void* f = ::dlsym(handle_, name);
    if (!f) return absl::UnavailableError(StrCat("NVML has no ", name));
    return reinterpret_cast<Fn>(f);
  }
  // The message for `r` from `call`.
  Status Error(const char* call, nvml::Return r) {
    auto str = Find<nvml::ErrorStringFn>("nvmlErrorString");
    return absl::InternalError(
        StrCat(call, " failed: ", str.ok() ? (*str)(r) : StrCat("NVML error ", r)));
  }
  nvml::ShutdownFn shutdown_ = nullptr;

 private:
  void* handle_;
};

}  // namespace

StatusOr<std::vector<GpuInfo>> DiscoverGpus(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    return absl::NotFoundError(StrCat("cannot load ", library, ": ", why ? why : "unknown"));
  }
  Library lib(handle);
  ASSIGN_OR_RETURN(auto init, lib.Find<nvml::InitFn>("nvmlInit_v2"));
  ASSIGN_OR_RETURN(lib.shutdown_, lib.Find<nvml::ShutdownFn>("nvmlShutdown"));
  if (nvml::Return r = init(); r != nvml::kSuccess) {
    lib.shutdown_ = nullptr;
    return lib.Error("nvmlInit_v2", r);
  }
  ASSIGN_OR_RETURN(auto count_fn, lib.Find<nvml::GetCountFn>("nvmlDeviceGetCount_v2"));
  ASSIGN_OR_RETURN(auto handle_fn, lib.Find<nvml::GetHandleFn>("nvmlDeviceGetHandleByIndex_v2"));
  ASSIGN_OR_RETURN(auto name_fn, lib.Find<nvml::GetStringFn>("nvmlDeviceGetName"));
  ASSIGN_OR_RETURN(auto uuid_fn, lib.Find<nvml::GetStringFn>("nvmlDeviceGetUUID"));
  ASSIGN_OR_RETURN(auto mem_fn, lib.Find<nvml::GetMemoryFn>("nvmlDeviceGetMemoryInfo"));
  ASSIGN_OR_RETURN(auto pci_fn, lib.Find<nvml::GetPciFn>("nvmlDeviceGetPciInfo_v3"));
  ASSIGN_OR_RETURN(auto minor_fn, lib.Find<nvml::GetMinorFn>("nvmlDeviceGetMinorNumber"));
  // NVLink and PCIe distance are optional: PCIe-only boards and old drivers lack them.
  auto link_state_fn = lib.Find<nvml::GetLinkStateFn>("nvmlDeviceGetNvLinkState");
  auto link_pci_fn = lib.Find<nvml::GetLinkPciFn>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  auto ancestor_fn = lib.Find<nvml::GetAncestorFn>("nvmlDeviceGetTopologyCommonAncestor");

  unsigned int count = 0;
  if (nvml::Return r = count_fn(&count); r != nvml::kSuccess) {
    return lib.Error("nvmlDeviceGetCount_v2", r);
  }
  std::vector<GpuInfo> gpus(count);
  std::vector<nvml::Device> devices(count);
  for (unsigned int i = 0; i < count; ++i) {
    GpuInfo& g = gpus[i];
    g.index = static_cast<int32_t>(i);
    if (nvml::Return r = handle_fn(i, &devices[i]); r != nvml::kSuccess) {
      return lib.Error("nvmlDeviceGetHandleByIndex_v2", r);
    }
    nvml::Device d = devices[i];
    char text[96] = {};
    if (name_fn(d, text, sizeof text) == nvml::kSuccess) g.name = text;
    if (uuid_fn(d, text, sizeof text) == nvml::kSuccess) g.uuid = text;
    nvml::Memory mem{};
    if (mem_fn(d, &mem) == nvml::kSuccess) g.memory_mb = static_cast<int64_t>(mem.total >> 20);
    nvml::PciInfo pci{};
    if (nvml::Return r = pci_fn(d, &pci); r != nvml::kSuccess) {
      return lib.Error("nvmlDeviceGetPciInfo_v3", r);
    }
    g.pci_bus_id = KernelBusId(pci.bus_id);
    g.numa = NumaOfPciDevice(g.pci_bus_id);
    unsigned int minor = 0;
    if (minor_fn(d, &minor) == nvml::kSuccess) g.minor = static_cast<int32_t>(minor);
    if (link_state_fn.ok() && link_pci_fn.ok()) {
      for (unsigned int link = 0; link < nvml::kMaxNvLinks; ++link) {
        nvml::EnableState on = nvml::kDisabled;
        if ((*link_state_fn)(d, link, &on) != nvml::kSuccess || on != nvml::kEnabled) continue;
        nvml::PciInfo far{};
        if ((*link_pci_fn)(d, link, &far) == nvml::kSuccess) {
          g.nvlink_peers.push_back(KernelBusId(far.bus_id));
        }
      }
    }
  }
  if (ancestor_fn.ok()) {
    for (unsigned int i = 0; i < count; ++i) {
      for (unsigned int j = 0; j < count; ++j) {
        int level = 0;
        if (i != j && (*ancestor_fn)(devices[i], devices[j], &level) == nvml::kSuccess &&
            level <= nvml::kTopologyMultiple) {
          gpus[i].pcie_close.push_back(static_cast<int32_t>(j));
        }
      }
    }
  }
  return gpus;
}

}  // namespace loom::hw
