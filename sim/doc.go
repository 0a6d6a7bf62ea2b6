// Package sim is a deterministic discrete-event engine: an integer picosecond
// clock, a heap-ordered event queue with ties broken by insertion order, and
// bandwidth resources shared max–min fairly between flows.
//
// It imports no other zerosim package and knows nothing of ZeRO. It has no
// goroutines, no wall clock and no I/O: the same calls give the same events in
// the same order. An Engine is not safe for concurrent use.
//
// Units: Time is picoseconds; sizes are bytes (int64); bandwidths are bytes
// per second (int64, at most MaxBandwidth). Rates and remaining work are exact
// integers (see flow.go), so a flow alone on its resources takes exactly
// TransferTime(bytes, bandwidth) = ⌈bytes·1e12/bandwidth⌉ ps, and a coupled
// group (StartGroup) progresses in lockstep at the rate of its slowest member
// for the cost of one event.
//
// Panics are reserved for caller bugs and documented on each function
// (scheduling in the past, negative sizes, a bandwidth out of range);
// callers validate user input before it reaches the engine.
package sim
