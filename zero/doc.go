// Package zero owns the per-stage training-step schedule — what runs when, on
// which stream, with which dependencies — for ZeRO stages 0–3 and redundancy
// K, and replays it on the sim engine to give step time, exposed
// communication, bytes per link class and memory over time.
//
// It computes and never prints or writes files.
package zero
