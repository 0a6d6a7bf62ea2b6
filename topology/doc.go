// Package topology owns the cluster as a graph: nodes, GPUs, links and their
// link classes (intra-node NVLink/NVSwitch, inter-node network), NIC sharing,
// per-link overrides, rank placement and the process groups (the dp·cp group
// of N ranks, the K intra groups of N/K contiguous ranks and the N/K inter
// groups of K ranks).
//
// It knows no collective algorithm. Bandwidths are bytes per second and
// latencies picoseconds (package units). A Link is one direction of one
// port (a GPU's NVLink egress or ingress, a NIC's egress or ingress) and is
// named by its LinkID, an index into Links(). Ranks are numbered
// r = dp·CP + cp; placement decides which GPU holds each rank. A Topology is
// immutable once built, and every input problem comes back as an error.
package topology
