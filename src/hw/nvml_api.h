// The part of NVML's C API that GPU discovery calls, declared here so that nothing links
// against (or needs the headers of) the NVIDIA driver: the library is opened with dlopen
// and these functions are looked up by name. Types and values follow NVML's ABI.
#pragma once

namespace loom::hw::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kNotSupported = 3;
inline constexpr Return kInvalidArgument = 2;

struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t

struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct PciInfo {  // nvmlPciInfo_t (v3)
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];  // "00000000:3B:00.0"
};

enum EnableState { kDisabled = 0, kEnabled = 1 };  // nvmlEnableState_t

// nvmlGpuTopologyLevel_t: how far apart two GPUs sit on PCIe.
inline constexpr int kTopologyInternal = 0;
inline constexpr int kTopologySingle = 10;    // one PCIe switch
inline constexpr int kTopologyMultiple = 20;  // several switches, no host bridge
inline constexpr int kTopologyHostbridge = 30;

inline constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using GetCountFn = Return (*)(unsigned int*);
using GetHandleFn = Return (*)(unsigned int, Device*);
using GetStringFn = Return (*)(Device, char*, unsigned int);
using GetMemoryFn = Return (*)(Device, Memory*);
using GetPciFn = Return (*)(Device, PciInfo*);
using GetMinorFn = Return (*)(Device, unsigned int*);
using GetLinkStateFn = Return (*)(Device, unsigned int, EnableState*);
using GetLinkPciFn = Return (*)(Device, unsigned int, PciInfo*);
using GetAncestorFn = Return (*)(Device, Device, int*);
using ErrorStringFn = const char* (*)(Return);

}  // namespace loom::hw::nvml
