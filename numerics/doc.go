// Package numerics executes the real sharded numerics on toy models: bf16
// rounding, Adam and AdamW in PyTorch's float32 operation order, hand-written
// forward and backward passes, and in-process data parallelism over N simulated
// ranks for every ZeRO stage and K, checked bit for bit against unsharded
// training.
//
// It computes and never prints or writes files.
package numerics
