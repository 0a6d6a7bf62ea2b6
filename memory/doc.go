// Package memory owns the per-rank memory model: every component in exact
// bytes for ZeRO stages 0–3 and redundancy K, at rest and at peak, the buffer
// layout (padding, shard ranges, buckets) shared with numerics and zero, the
// activation model and the DeepSpeed and Megatron estimators.
//
// Conventions:
//   - Sizes are int64 bytes, computed with overflow checks; Layout offsets
//     and sizes are elements (multiply by the buffer's element size).
//   - Figures are per rank. Every Report names its Convention (what it
//     counts), so a figure can be matched with a published table.
//   - Layout, Report and their slices are read-only after construction;
//     Timeline returns a copy.
//   - Input that a scenario can cause comes back as an error; panics
//     ("memory: …") mark caller bugs such as an out-of-range rank or bucket.
//
// See docs/memory-model.md for the model, the conventions and the seed
// reproductions.
//
// It computes and never prints or writes files.
package memory
