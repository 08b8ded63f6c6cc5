#include "airtime/policies/bestfit/bestfit.h"

#include <memory>

#include "airtime/policies/plugins/common_plugins.h"

namespace airtime {

void RegisterBestFit(PolicyRegistry& registry) {
  registry.Register("bestfit",
                    "arrival order, skip what does not fit, best-fit node (least GPU+CPU left)", {},
                    [](const Cluster&, const PolicyParams&) -> StatusOr<Policy> {
                      Policy p;
                      p.name = "bestfit";
                      p.description = "arrival order with skipping, best-fit placement";
                      p.queue_sort = std::make_unique<ArrivalOrder>();
                      p.scores.emplace_back(std::make_unique<BestFitScore>(), 1.0);
                      return p;
                    });
}

}  // namespace airtime
