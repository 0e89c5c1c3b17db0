// Whether a TCP address can be listened on now, for picking a default port without a race
// that matters: a local tool asks, then its server binds moments later.
#pragma once

#include "libfarm/net/address.h"

namespace farm {

// True when a TCP socket could bind `address` now (SO_REUSEADDR, as servers bind). A host
// that does not resolve or a port held by another listener is false.
bool CanListenOn(const HostPort& address);

}  // namespace farm
