// SIGTERM/SIGINT handling for daemons: block them in every thread, wait in one.
#pragma once

namespace farm {

// Call first in main, before any thread starts, so no thread is killed by the signal.
void BlockTerminationSignals();

// Blocks until SIGTERM or SIGINT arrives; returns the signal number.
int WaitForTerminationSignal();

}  // namespace farm
