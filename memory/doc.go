// Package memory owns the per-rank memory model: every component in exact
// bytes for ZeRO stages 0–3 and redundancy K, at rest and at peak, the buffer
// layout (padding, shard ranges, buckets) shared with numerics and zero, the
// activation model and the DeepSpeed and Megatron estimators.
//
// It computes and never prints or writes files.
package memory
