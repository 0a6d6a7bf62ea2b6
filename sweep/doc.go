// Package sweep runs parameter studies over a scenario: the cartesian product
// of --grid values in a fixed order, sharded across machines, resumed after a
// crash and merged back into one deterministic file; the variants of a
// comparison; and the memory fit search (smallest data-parallel size that
// fits, largest model that fits).
//
// Conventions: a point of a sweep is identified by its index in the
// product (grids in the order given, values in the order given, the last grid
// varying fastest); times are integer picoseconds and sizes integer bytes, as
// in zero and memory. Shard i of n runs the points whose index ≡ i (mod n).
//
// It computes; it reads and writes only through the io.Reader and io.Writer
// values it is given, and never prints.
package sweep
