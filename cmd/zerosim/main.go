// Command zerosim simulates one training step of ZeRO data parallelism
// (stages 0–3, FSDP, Megatron's distributed optimizer with redundancy K):
// time, exposed communication, bytes per link class and memory per rank, and
// verifies the sharded numerics bit for bit on toy models.
//
// Run "zerosim help" for the commands.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
