// Package units holds zerosim's exact integer quantities and parses the
// spellings people write in scenario files.
//
// Every quantity is an integer: bytes (Bytes), picoseconds (Duration),
// bytes per second (Bandwidth), floating-point operations per second (FLOPS)
// and plain counts (Count). Parsing is exact: "1.34B" is 1,340,000,000 and
// "1.5ms" is 1,500,000,000 ps; a spelling that does not name a whole number
// of the base unit (for example "1bps", 1/8 byte per second) is an error, not
// a rounding. Arithmetic helpers report int64 overflow instead of wrapping.
//
// Decimal prefixes are powers of 1000 (GB = 1e9 bytes); binary prefixes are
// powers of 1024 (GiB = 2^30 bytes), for counts too ("4Mi" is 4 × 2^20,
// "4M" 4 × 10^6; a count's B is a billion). Bandwidth in bits ("400Gbps") is
// converted to bytes per second (50e9 B/s).
package units
