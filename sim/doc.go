// Package sim is a deterministic discrete-event engine: an integer picosecond
// clock, a heap-ordered event queue with ties broken by insertion order, and
// bandwidth resources shared max–min fairly between flows.
//
// It imports no other zerosim package and knows nothing of ZeRO. It has no
// goroutines, no wall clock and no I/O: the same calls give the same events in
// the same order.
package sim
