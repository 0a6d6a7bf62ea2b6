package main

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/collectives"
)

// collectiveAlgo is what --algo and --proto ask for: NCCL's tuner with
// NCCL_ALGO and NCCL_PROTO set (algos, protos: 0 leaves the cluster's,
// NCCL's default unless a link preset restricts it, as TCPXO does), or
// one of zerosim's alpha–beta lowerings (abAlgo).
type collectiveAlgo struct {
	algos, protos uint8
	// ab is zerosim's alpha–beta lowering asked for (alphabeta-ring,
	// alphabeta-tree, hierarchical: a scenario's communication.algorithm
	// ring, tree, hierarchical); Auto for NCCL's tuner.
	ab collectives.Algo
	// name is the request as the report's header shows it.
	name string
}

// pinned reports whether NCCL_ALGO or NCCL_PROTO is set.
func (c collectiveAlgo) pinned() bool { return c.algos != 0 || c.protos != 0 }

// alphaBetaAlgos are zerosim's own lowerings by their --algo names: the
// seeds' flat ring in group order (a scenario's algorithm: ring), the
// alpha–beta double binary tree (algorithm: tree) and the two-level ring
// (algorithm: hierarchical).
var alphaBetaAlgos = map[string]collectives.Algo{"alphabeta-ring": collectives.Ring, "alphabeta-tree": collectives.Tree,
	"hierarchical": collectives.Hierarchical, "hier": collectives.Hierarchical}

// parseCollectiveAlgo reads --algo (auto; NCCL_ALGO's list, optionally
// "/" and NCCL_PROTO's: ring, ring/simple, tree,ring/ll128, ^nvls; or an
// alpha–beta lowering) and --proto (NCCL_PROTO's list).
func parseCollectiveAlgo(o *collectiveOpts) (collectiveAlgo, error) {
	v := strings.ToLower(strings.TrimSpace(o.algo))
	proto := strings.TrimSpace(o.proto)
	if ab, ok := alphaBetaAlgos[v]; ok {
		if o.changed("proto") {
			return collectiveAlgo{}, fmt.Errorf("--proto %s: --algo %s is zerosim's alpha–beta lowering, which has no NCCL protocol (drop --proto, or use NCCL's --algo ring or tree)", o.proto, o.algo)
		}
		if v == "hier" {
			v = "hierarchical"
		}
		return collectiveAlgo{ab: ab, name: v}, nil
	}
	algo, p, hasProto := strings.Cut(v, "/")
	if hasProto {
		if strings.TrimSpace(p) == "" {
			// QA18 L3: "ring/" ran as ring, the protocol silently dropped.
			return collectiveAlgo{}, fmt.Errorf("--algo %s: no protocol after / (give one of NCCL_PROTO's, e.g. %s/simple, or drop the /)", o.algo, algo)
		}
		if o.changed("proto") {
			return collectiveAlgo{}, fmt.Errorf("--algo %s and --proto %s both set NCCL_PROTO (give it once)", o.algo, o.proto)
		}
		proto = p
	}
	var c collectiveAlgo
	var err error
	// The old spellings of NVLS-tree.
	algo = strings.NewReplacer("nvls-tree", "nvlstree", "nvls_tree", "nvlstree").Replace(algo)
	if algo != "auto" && algo != "" {
		if c.algos, err = collectives.ParseNCCLAlgos(algo); err != nil {
			return c, fmt.Errorf("--algo %s: %w; or auto (NCCL's choice), or zerosim's alpha–beta alphabeta-ring, alphabeta-tree or hierarchical", o.algo, err)
		}
	}
	if proto != "" && (hasProto || o.changed("proto")) {
		flag := "--proto " + o.proto
		if hasProto {
			flag = "--algo " + o.algo
		}
		if c.protos, err = collectives.ParseNCCLProtos(proto); err != nil {
			return c, fmt.Errorf("%s: %w", flag, err)
		}
	}
	c.name = "auto"
	if c.algos != 0 {
		c.name = strings.ToLower(strings.Join(collectives.AlgoNames(c.algos), ","))
	}
	if c.protos != 0 {
		c.name += "/" + strings.ToLower(strings.Join(collectives.ProtoNames(c.protos), ","))
	}
	return c, nil
}

// pinFlags names the flags that pinned NCCL's tuner, as the user gave
// them: "--algo ring", "--proto ll", or both (QA18 L4: an all-to-all's
// refusal named "--algo auto/ll" for --proto ll).
func pinFlags(o *collectiveOpts) string {
	var f []string
	if o.changed("algo") {
		f = append(f, "--algo "+o.algo)
	}
	if o.changed("proto") {
		f = append(f, "--proto "+o.proto)
	}
	return strings.Join(f, " and ")
}

// apply sets NCCL_ALGO and NCCL_PROTO on hw, in place of what the
// cluster sets (a link preset's: TCPXO's Ring,Tree and Simple), as the
// environment variables replace a profile's.
func (c collectiveAlgo) apply(hw collectives.Hardware) collectives.Hardware {
	if c.algos != 0 {
		hw.Algos = c.algos
	}
	if c.protos != 0 {
		hw.Protos = c.protos
	}
	return hw
}
