// SPDX-License-Identifier: Apache-2.0
// Driver and device objects, device names, object references
// (softndk_wdk/io.h, kernel/device.h).
#include "kernel/device.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "irql/checker.h"
#include "irql/irql.h"

namespace softndk::wdk {
namespace {

struct Devices {
  std::mutex mutex;
  std::map<std::wstring, PDEVICE_OBJECT> by_name;
  std::unordered_map<PDEVICE_OBJECT, const void*> live;  // -> creation site
  std::unordered_map<PDEVICE_OBJECT, std::pair<PDRIVER_DISPATCH, void*>> kit;
  std::unordered_set<PFILE_OBJECT> files;
};

Devices& D() {
  static auto* d = new Devices;
  return *d;
}

std::wstring NameOf(PCUNICODE_STRING s) {
  if (s == nullptr || s->Buffer == nullptr) return {};
  return std::wstring(s->Buffer, s->Length / sizeof(WCHAR));
}

NTSTATUS InvalidRequest(PDEVICE_OBJECT device, PIRP irp) {
  (void)device;
  irp->IoStatus.Status = STATUS_INVALID_DEVICE_REQUEST;
  irp->IoStatus.Information = 0;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
  return STATUS_INVALID_DEVICE_REQUEST;
}

NTSTATUS KitDispatch(PDEVICE_OBJECT device, PIRP irp) {
  PDRIVER_DISPATCH dispatch = nullptr;
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    auto it = D().kit.find(device);
    if (it != D().kit.end()) dispatch = it->second.first;
  }
  if (dispatch == nullptr) return InvalidRequest(device, irp);
  return dispatch(device, irp);
}

// A UNICODE_STRING owning a copy of `name`.
void CopyName(UNICODE_STRING* out, const std::wstring& name) {
  size_t bytes = (name.size() + 1) * sizeof(WCHAR);
  out->Buffer = static_cast<PWCH>(std::malloc(bytes));
  if (out->Buffer == nullptr) {
    out->Length = out->MaximumLength = 0;
    return;
  }
  std::memcpy(out->Buffer, name.c_str(), bytes);
  out->Length = static_cast<USHORT>(name.size() * sizeof(WCHAR));
  out->MaximumLength = static_cast<USHORT>(bytes);
}

PDRIVER_OBJECT KitDriver() {
  static PDRIVER_OBJECT kit = [] {
    PDRIVER_OBJECT d = CreateDriverObject(L"softndk");
    for (auto& f : d->MajorFunction) f = KitDispatch;
    return d;
  }();
  return kit;
}

ULONG ReportDeviceLeaks() {
  std::lock_guard<std::mutex> lock(D().mutex);
  ULONG n = 0;
  for (auto& [dev, site] : D().live) {
    if (D().kit.count(dev) != 0) continue;  // the kit's own
    n++;
    std::string name;
    for (WCHAR c : NameOf(&dev->DeviceName))
      name += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
    Report(SoftNdkWdkRuleLeak, "IoCreateDevice", site,
           "device object %p (%s) never deleted with IoDeleteDevice", static_cast<void*>(dev),
           name.empty() ? "unnamed" : name.c_str());
  }
  return n;
}

const bool kRegistered = (RegisterLeakReporter("device", ReportDeviceLeaks), true);

}  // namespace

PDRIVER_OBJECT CreateDriverObject(const wchar_t* name) {
  (void)kRegistered;
  auto* d = new DRIVER_OBJECT{};
  auto* ext = new DRIVER_EXTENSION{};
  d->Type = 4;  // IO_TYPE_DRIVER
  d->Size = sizeof(DRIVER_OBJECT);
  d->DriverExtension = ext;
  ext->DriverObject = d;
  CopyName(&d->DriverName, std::wstring(L"\\Driver\\") + name);
  CopyName(&ext->ServiceKeyName, name);
  for (auto& f : d->MajorFunction) f = InvalidRequest;
  return d;
}

void DeleteDriverObject(PDRIVER_OBJECT driver) {
  if (driver == nullptr) return;
  std::free(driver->DriverName.Buffer);
  std::free(driver->DriverExtension->ServiceKeyName.Buffer);
  delete driver->DriverExtension;
  delete driver;
}

PDEVICE_OBJECT CreateKitDevice(const wchar_t* name, PDRIVER_DISPATCH dispatch, void* context,
                               CCHAR stack_size) {
  UNICODE_STRING us{};
  if (name != nullptr) RtlInitUnicodeString(&us, name);
  PDEVICE_OBJECT dev = nullptr;
  if (!NT_SUCCESS(IoCreateDevice(KitDriver(), 0, name ? &us : nullptr, FILE_DEVICE_NETWORK, 0,
                                 FALSE, &dev))) {
    return nullptr;
  }
  dev->StackSize = stack_size;
  dev->Flags &= ~static_cast<ULONG>(DO_DEVICE_INITIALIZING);
  std::lock_guard<std::mutex> lock(D().mutex);
  D().kit[dev] = {dispatch, context};
  return dev;
}

void* KitDeviceContext(PDEVICE_OBJECT device) {
  std::lock_guard<std::mutex> lock(D().mutex);
  auto it = D().kit.find(device);
  return it == D().kit.end() ? nullptr : it->second.second;
}

void DeleteKitDevice(PDEVICE_OBJECT device) {
  {
    std::lock_guard<std::mutex> lock(D().mutex);
    D().kit.erase(device);
  }
  IoDeleteDevice(device);
}

}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

NTSTATUS IoCreateDevice(PDRIVER_OBJECT DriverObject, ULONG DeviceExtensionSize,
                        PUNICODE_STRING DeviceName, DEVICE_TYPE DeviceType,
                        ULONG DeviceCharacteristics, BOOLEAN Exclusive,
                        PDEVICE_OBJECT* DeviceObject) {
  (void)Exclusive;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(PASSIVE_LEVEL, "IoCreateDevice", site);
  if (DriverObject == nullptr || DeviceObject == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "IoCreateDevice", site, "NULL driver or out pointer");
    return STATUS_INVALID_PARAMETER;
  }
  std::wstring name = NameOf(DeviceName);
  std::lock_guard<std::mutex> lock(D().mutex);
  if (!name.empty() && D().by_name.count(name) != 0) return STATUS_OBJECT_NAME_COLLISION;
  // The extension follows the object, 16-byte aligned, zeroed.
  size_t ext_offset = (sizeof(DEVICE_OBJECT) + 15) & ~size_t{15};
  void* mem = std::calloc(1, ext_offset + DeviceExtensionSize);
  if (mem == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  auto* dev = new (mem) DEVICE_OBJECT{};
  dev->Type = 3;  // IO_TYPE_DEVICE
  dev->Size = static_cast<USHORT>(ext_offset + DeviceExtensionSize);
  dev->ReferenceCount = 0;
  dev->DriverObject = DriverObject;
  dev->Flags = DO_DEVICE_INITIALIZING;
  dev->Characteristics = DeviceCharacteristics;
  dev->DeviceExtension = DeviceExtensionSize ? static_cast<char*>(mem) + ext_offset : nullptr;
  dev->DeviceType = DeviceType;
  dev->StackSize = 1;
  KeInitializeEvent(&dev->DeviceLock, SynchronizationEvent, TRUE);
  if (!name.empty()) {
    CopyName(&dev->DeviceName, name);
    D().by_name[name] = dev;
  }
  dev->NextDevice = DriverObject->DeviceObject;
  DriverObject->DeviceObject = dev;
  D().live[dev] = site;
  *DeviceObject = dev;
  return STATUS_SUCCESS;
}

VOID IoDeleteDevice(PDEVICE_OBJECT DeviceObject) {
  const void* site = SOFTNDK_WDK_SITE();
  std::lock_guard<std::mutex> lock(D().mutex);
  if (DeviceObject == nullptr || D().live.erase(DeviceObject) == 0) {
    Report(SoftNdkWdkRuleDoubleFree, "IoDeleteDevice", site,
           "%p is not a device object (deleted twice, or never created)",
           static_cast<void*>(DeviceObject));
    return;
  }
  std::wstring name = NameOf(&DeviceObject->DeviceName);
  if (!name.empty()) D().by_name.erase(name);
  PDEVICE_OBJECT* link = &DeviceObject->DriverObject->DeviceObject;
  while (*link != nullptr && *link != DeviceObject) link = &(*link)->NextDevice;
  if (*link == DeviceObject) *link = DeviceObject->NextDevice;
  std::free(DeviceObject->DeviceName.Buffer);
  DeviceObject->~DEVICE_OBJECT();
  std::free(DeviceObject);
}

NTSTATUS IoCreateSymbolicLink(PUNICODE_STRING SymbolicLinkName, PUNICODE_STRING DeviceName) {
  std::wstring link = NameOf(SymbolicLinkName), target = NameOf(DeviceName);
  std::lock_guard<std::mutex> lock(D().mutex);
  auto it = D().by_name.find(target);
  if (it == D().by_name.end()) return STATUS_OBJECT_NAME_NOT_FOUND;
  if (D().by_name.count(link) != 0) return STATUS_OBJECT_NAME_COLLISION;
  D().by_name[link] = it->second;
  return STATUS_SUCCESS;
}

NTSTATUS IoDeleteSymbolicLink(PUNICODE_STRING SymbolicLinkName) {
  std::lock_guard<std::mutex> lock(D().mutex);
  return D().by_name.erase(NameOf(SymbolicLinkName)) ? STATUS_SUCCESS
                                                     : STATUS_OBJECT_NAME_NOT_FOUND;
}

NTSTATUS IoGetDeviceObjectPointer(PUNICODE_STRING ObjectName, ACCESS_MASK DesiredAccess,
                                  PFILE_OBJECT* FileObject, PDEVICE_OBJECT* DeviceObject) {
  (void)DesiredAccess;
  RequireIrqlAtMost(PASSIVE_LEVEL, "IoGetDeviceObjectPointer", SOFTNDK_WDK_SITE());
  std::lock_guard<std::mutex> lock(D().mutex);
  auto it = D().by_name.find(NameOf(ObjectName));
  if (it == D().by_name.end()) return STATUS_OBJECT_NAME_NOT_FOUND;
  auto* file = new (std::nothrow) FILE_OBJECT{};
  if (file == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  file->Type = 5;  // IO_TYPE_FILE
  file->Size = sizeof(FILE_OBJECT);
  file->DeviceObject = it->second;
  D().files.insert(file);
  *FileObject = file;
  *DeviceObject = it->second;
  return STATUS_SUCCESS;
}

VOID ObReferenceObject(PVOID Object) { (void)Object; }

}  // extern "C"

namespace softndk::wdk {
// True if `object` was a file object from IoGetDeviceObjectPointer (now freed).
bool ReleaseFileObject(PVOID object) {
  std::lock_guard<std::mutex> lock(D().mutex);
  auto* f = static_cast<PFILE_OBJECT>(object);
  if (D().files.erase(f) == 0) return false;
  delete f;
  return true;
}
}  // namespace softndk::wdk
