// A stand-in for the NVIDIA driver's libnvidia-ml.so, for testing GPU discovery on machines
// without GPUs: the same C entry points, answering for a machine chosen by the environment
// variable LOOM_FAKE_NVML:
//   nvswitch8  eight GPUs, every NVLink to one of the NVSwitches; PCIe switches in pairs
//   pairs4     four GPUs, NVLink between 0-1 and 2-3 only; each GPU alone under its switch
//   broken     nvmlInit_v2 fails as with a driver/library version mismatch
// It is loaded with dlopen, exactly as the real library is.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hw/nvml_api.h"

// The opaque device of NVML's API. The entry points below take exactly the types loom's
// declarations give them (nvml_api.h): a call through a pointer of another function type is
// undefined behaviour, which UBSan reports.
struct loom::hw::nvml::DeviceSt {
  int index;
};

namespace {

namespace nvml = loom::hw::nvml;
using nvml::Device;
using nvml::PciInfo;

nvml::DeviceSt g_gpus[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};

std::string Mode() {
  const char* m = std::getenv("LOOM_FAKE_NVML");
  return m ? m : "nvswitch8";
}
unsigned Count() { return Mode() == "pairs4" ? 4 : 8; }

void FillPci(PciInfo* p, unsigned bus) {
  std::memset(p, 0, sizeof *p);
  p->bus = bus;
  std::snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", bus);
  std::snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "0000:%02X:00.0", bus);
}
unsigned GpuBus(int i) { return 0x1B + 0x10 * static_cast<unsigned>(i); }

}  // namespace

extern "C" {

nvml::Return nvmlInit_v2() { return Mode() == "broken" ? 18 : 0; }  // 18: NVML_ERROR_LIB_RM_VERSION_MISMATCH
nvml::Return nvmlShutdown() { return 0; }
const char* nvmlErrorString(nvml::Return r) {
  return r == 18 ? "RM has detected an NVML/RM version mismatch." : "Unknown Error";
}
nvml::Return nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = Count();
  return 0;
}
nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned int i, Device* d) {
  if (i >= Count()) return 2;
  *d = &g_gpus[i];
  return 0;
}
nvml::Return nvmlDeviceGetName(Device, char* out, unsigned int len) {
  std::snprintf(out, len, "%s", Mode() == "pairs4" ? "NVIDIA A100-PCIE-40GB" : "NVIDIA H100 80GB HBM3");
  return 0;
}
nvml::Return nvmlDeviceGetUUID(Device d, char* out, unsigned int len) {
  std::snprintf(out, len, "GPU-00000000-0000-0000-0000-00000000000%d", d->index);
  return 0;
}
nvml::Return nvmlDeviceGetMemoryInfo(Device, nvml::Memory* mem) {
  mem->total = 80ull << 30;
  mem->free = mem->total;
  mem->used = 0;
  return 0;
}
nvml::Return nvmlDeviceGetPciInfo_v3(Device d, PciInfo* p) {
  FillPci(p, GpuBus(d->index));
  return 0;
}
nvml::Return nvmlDeviceGetMinorNumber(Device d, unsigned int* minor) {
  *minor = static_cast<unsigned>(d->index);
  return 0;
}
nvml::Return nvmlDeviceGetNvLinkState(Device d, unsigned int link, nvml::EnableState* on) {
  // pairs4: two links to the partner; nvswitch8: every link.
  const bool up = Mode() == "pairs4" ? link < 2 : link < nvml::kMaxNvLinks;
  *on = up ? nvml::kEnabled : nvml::kDisabled;
  (void)d;
  return 0;
}
nvml::Return nvmlDeviceGetNvLinkRemotePciInfo_v2(Device d, unsigned int link, PciInfo* p) {
  if (Mode() == "pairs4") {
    FillPci(p, GpuBus(d->index ^ 1));
  } else {
    FillPci(p, 0xC0 + link % 4);  // the four NVSwitches
  }
  return 0;
}
nvml::Return nvmlDeviceGetTopologyCommonAncestor(Device a, Device b, int* level) {
  const bool pair = Mode() != "pairs4" && a->index / 2 == b->index / 2;
  *level = pair ? 10 : 40;  // SINGLE (one PCIe switch) or NODE
  return 0;
}

}  // extern "C"
