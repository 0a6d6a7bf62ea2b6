// Package topology owns the cluster as a graph: nodes, GPUs, links and their
// link classes (intra-node NVLink/NVSwitch, inter-node network), NIC sharing,
// per-link overrides, rank placement and the process groups (the dp·cp group
// of N ranks, the K intra groups of N/K contiguous ranks and the N/K inter
// groups of K ranks).
//
// It knows no collective algorithm. Bandwidths are bytes per second and
// latencies picoseconds (package units).
package topology
