// The CAS's wire traffic counters, one pair for every service that moves blobs in or out of
// the farm's CAS (its own CasService, REAPI's ContentAddressableStorage and ByteStream): REAPI
// traffic is CAS traffic, counted under the same names.
#pragma once

#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

struct CasTraffic {
  Counter* bytes_in;   // blob bytes received by uploads, as sent on the wire
  Counter* bytes_out;  // blob bytes sent by downloads, as sent on the wire

  static CasTraffic In(MetricsRegistry* metrics) {
    return {metrics->GetCounter("farm_cas_bytes_in_total",
                                "Blob bytes received by CAS uploads (as sent on the wire)."),
            metrics->GetCounter("farm_cas_bytes_out_total",
                                "Blob bytes sent by CAS downloads (as sent on the wire).")};
  }
};

}  // namespace farm::coordinator
