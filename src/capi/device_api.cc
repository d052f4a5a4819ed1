// extern "C" shims for trainwatch/device.h.
#include "capi/guard.h"
#include "device/registry.h"

using tw::capi::Guard;

extern "C" {

tw_status tw_set_device(const tw_device *table, void *user_data) {
  return Guard([&] { return tw::device::Register(table, user_data); });
}

tw_status tw_unset_device(int32_t device_type) {
  return Guard([&] { return tw::device::Unregister(device_type); });
}

}  // extern "C"
