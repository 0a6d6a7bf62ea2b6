// Package collectives owns reduce-scatter, all-gather and all-reduce over a
// group of ranks with ring, hierarchical and tree algorithms: their closed-form
// alpha–beta times, their lowering into flows on topology links run by the sim
// engine, and their byte accounting (logical volume as the seeds count it and
// wire bytes per link and link class).
//
// Sizes are bytes, times picoseconds. A collective of S bytes means the full
// buffer (nccl-tests' "size"): all-gather output, reduce-scatter input.
package collectives
