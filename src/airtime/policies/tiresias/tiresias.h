// tiresias: Tiresias's discretized two-dimensional least-attained-service (2D-LAS,
// NSDI'19), for GPU clusters whose job run times are unknown.
//
// A job's attained service is GPUs x time it has run (fractions count their share), since
// it arrived or was last promoted; it is integrated from the engine's allocations between
// cycles. K priority queues split attained service at thresholds: a job starts in the top
// queue and is demoted when it crosses its queue's threshold. Queues are served in order,
// FIFO within a queue (by when the job joined it); a job that does not fit is passed. A
// waiting job that does not fit may preempt running preemptible jobs of lower queues, the
// lowest queue and latest arrival first, and only as many as it needs; the engine's
// progress model keeps their checkpointed work and charges their restart cost. Starvation
// avoidance: a job in a lower queue that has waited, since it last ran from the top queue,
// longer than promote_knob times the time it has run is promoted back to the top queue
// with its attained service reset. The policy asks the engine for a cycle when a running
// job crosses a threshold or a waiting one becomes due for promotion, whenever that could
// change what runs. Realtime services are outside LAS: their replicas stay in the top queue.
// Placement is best fit.
//
// Parameters (defaults): thresholds (1h: the GPU-time limits of every queue but the last,
// ascending, comma-separated durations, so "1h" is one GPU-hour and gives two queues; the
// authors' simulator splits two queues at 3,250-3,600 GPU-seconds), promote_knob (8; 0: no
// promotion; their simulator offers 0.5 to 1000), preempt (1).
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {

void RegisterTiresias(PolicyRegistry& registry);

}  // namespace airtime
