// Ports for service replicas (PORT, AIRTIME_PORT): where each listens, so that the daemon can
// scrape its demand (`metrics:`) and clients reach it.
//
// A replica on this machine (the local executor; a Slurm lab whose nodes are this machine:
// a loopback address, api/http_api.h's IsLoopbackHost) gets a port the kernel has free now. One on
// another host (a Slurm node elsewhere) cannot be checked from here: it gets the lowest port of the
// operator's range (`--replica-ports`, kept free of other services on the nodes) that no live
// replica of the daemon holds and no parked Slurm job keeps, wherever it runs, since a parked job
// may run again on any node with the port it was given. Ports are unique across the daemon's
// replicas either way.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

struct PortRange {
  int first = 20000;
  int last = 20999;
};

// "FIRST-LAST", 1024 <= FIRST <= LAST <= 65535; the error names what is wrong.
StatusOr<PortRange> ParsePortRange(std::string_view text);

// The first port of `range` not in `used`, from `from` on and then from the start of the
// range (a port just given up comes back last: a replica that outlived its run may still
// hold it); 0 when every one is.
int PickPort(const PortRange& range, const std::set<int>& used, int from = 0);

}  // namespace airtime
