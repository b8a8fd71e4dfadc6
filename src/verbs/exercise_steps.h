// SPDX-License-Identifier: Apache-2.0
// exercise_steps.h - the data-path steps of softndk-verbs-exercise over a
// connected pair (cli the active side, srv the passive one whose QP takes
// its receives from an SRQ). Each reports its own result (report()); they
// run in this order, since each relies on the receives the ones before
// consumed and the last leaves the client's QP in error.
#pragma once

#include "verbs/exercise_rig.h"

namespace softndk::verbs::exercise {

void exercise_send(Side& cli, Side& srv, const QpLimits& lim);
void exercise_deferred_chain(Side& cli, Side& srv, const QpLimits& lim);
void exercise_read(Side& cli, Side& srv, const QpLimits& lim);
// On devices with type-2 windows (FrStrategy::kType2Window) ...
void exercise_fast_register(Side& cli, Side& srv, const QpLimits& lim);
// ... and on the others.
void exercise_no_windows(Side& cli, Side& srv, const QpLimits& lim);
void exercise_srq_event_and_flush(Side& cli, Side& srv);

}  // namespace softndk::verbs::exercise
