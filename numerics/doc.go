// Package numerics executes the real sharded numerics on toy models: bf16
// rounding, Adam and AdamW in PyTorch's float32 operation order, hand-written
// forward and backward passes, and in-process data parallelism over N simulated
// ranks for every ZeRO stage and K, checked bit for bit against unsharded
// training.
//
// Conventions:
//   - BF16 is a bit pattern; float32 values that "are bf16" hold exactly a
//     bf16 value. Forward/backward passes accumulate in float32 and round
//     every tensor they write to bf16 (or, in float64, round nothing: the
//     gradient checks).
//   - Flat buffers follow memory.NewLayout (the layout shared with the memory
//     model and the replay); offsets are elements, bytes are 2 per bf16
//     element.
//   - All randomness comes from math/rand/v2 PCG streams seeded by
//     Config.Seed (the scenario's training.seed); nothing reads the clock.
//   - Anything a scenario, flag or reference file can cause returns an error;
//     panics mark caller bugs (mismatched slice lengths in AdamStep).
//
// Entry points: Verify (one configuration), Matrix (the verify matrix),
// Drift (native-reduction drift between two K), CheckReference (PyTorch
// zerosim-reference/v1 files). See docs/numerics.md.
//
// It computes and never prints or writes files.
package numerics
