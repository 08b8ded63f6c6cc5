#include "airtime/policies/fifo/fifo.h"

#include <memory>

#include "airtime/policies/plugins/common_plugins.h"

namespace airtime {

void RegisterFifo(PolicyRegistry& registry) {
  registry.Register("fifo", "strict first come, first served; first fit; head-of-line blocking", {},
                    [](const Cluster&, const PolicyParams&) -> StatusOr<Policy> {
                      Policy p;
                      p.name = "fifo";
                      p.description = "strict FIFO, first fit";
                      p.queue_sort = std::make_unique<ArrivalOrder>();
                      p.order = std::make_unique<StrictOrder>();
                      return p;
                    });
}

}  // namespace airtime
