// ParallelFor: runs independent tasks side by side on a few threads, results by index.
//
// For the simulator's batch work (several policies over one input, the FGD protocol's seeds
// x policies): each task reads shared input and writes only its own slot, so the outcome is
// the same whatever the number of threads and the order they run in. Callers keep the
// core's determinism by collecting results by index and reporting in index order.
#pragma once

#include <cstddef>
#include <functional>

namespace airtime {

// The number of tasks `airtime sim` runs at once unless told: the hardware threads this
// process may use (at least 1).
int DefaultParallelism();

// Calls task(i) once for every i in [0, n), on min(threads, n) threads (the caller's own
// among them); threads <= 1 runs them in order on the calling thread. Returns once every
// task has ended. If a task throws, no new task starts, and the exception of the lowest
// index that threw is rethrown here.
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& task);

}  // namespace airtime
