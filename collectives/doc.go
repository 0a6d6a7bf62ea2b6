// Package collectives owns reduce-scatter, all-gather and all-reduce over a
// group of ranks with ring, hierarchical and tree algorithms: their closed-form
// alpha–beta times, their lowering into flows on topology links run by the sim
// engine, and their byte accounting (logical volume as the seeds count it and
// wire bytes per link and link class).
//
// Sizes are bytes, times picoseconds. A collective of S bytes means the full
// buffer (nccl-tests' "size"): all-gather output, reduce-scatter input.
//
// Lower turns a Spec into a Plan of phases; ClosedForm sums the phases'
// alpha–beta times; Fabric.Start runs the same phases on a sim.Engine as one
// coupled flow group each, so alone on the links the engine reproduces
// ClosedForm to the picosecond, and concurrent collectives share links
// max–min fairly. docs/collectives.md has the formulas.
package collectives
