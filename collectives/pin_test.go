package collectives

import (
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// TestNCCLLists: NCCL_ALGO and NCCL_PROTO as parseList reads them
// (tuning.cc at 5067397c): case-insensitive names, a comma list, "^" to
// disable those listed.
func TestNCCLLists(t *testing.T) {
	for _, c := range []struct {
		s    string
		want uint8
	}{
		{"Ring", 1 << Ring}, {"ring,TREE", 1<<Ring | 1<<Tree}, {"^nvls,nvlstree", 1<<Tree | 1<<Ring | 1<<PAT}, {"nvlstree", 1 << NVLSTree},
		// NCCL's CollNet names are taken, and CollNet stays off (QA18 L2).
		{"^CollNetDirect", 1<<Tree | 1<<Ring | 1<<NVLS | 1<<NVLSTree | 1<<PAT}, {"Ring,CollNetChain", 1 << Ring},
		// strtok_r skips empty tokens: "Ring," is Ring.
		{"Ring,", 1 << Ring},
	} {
		if got, err := ParseNCCLAlgos(c.s); err != nil || got != c.want {
			t.Errorf("NCCL_ALGO=%s: %b, %v; want %b", c.s, got, err, c.want)
		}
	}
	for _, c := range []struct {
		s    string
		want uint8
	}{
		{"Simple", 1 << Simple}, {"ll,ll128", 1<<LL | 1<<LL128}, {"^LL", 1<<LL128 | 1<<Simple},
	} {
		if got, err := ParseNCCLProtos(c.s); err != nil || got != c.want {
			t.Errorf("NCCL_PROTO=%s: %b, %v; want %b", c.s, got, err, c.want)
		}
	}
	for _, s := range []string{"", "ring;allreduce:tree", "butterfly", "^LL,LL128,Simple"} {
		if _, err := ParseNCCLProtos(s); err == nil {
			t.Errorf("NCCL_PROTO=%q: no error", s)
		}
	}
	if _, err := ParseNCCLAlgos("CollNetDirect"); err == nil || !strings.Contains(err.Error(), "leaves only CollNet, which needs SHARP switches") {
		t.Errorf("NCCL_ALGO=CollNetDirect: %v", err)
	}
}

// TestNCCLProtoEnablesLL128: NCCL leaves LL128 off over PCIe by default
// (pEnable 2) but runs it when NCCL_PROTO names it (pEnable 1: tuning.cc
// lines 443–447 and 518–536 at 5067397c).
func TestNCCLProtoEnablesLL128(t *testing.T) {
	hw := Hardware{Arch: Ampere, PCI: true, IntraBW: 32e9, NICBW: 25e9, NICsPerNode: 8}
	sh := Shape{Ranks: 16, Nodes: 2}
	for s := units.Bytes(8); s <= units.GiB; s *= 8 {
		if c, err := NewModel(hw).Choose(AllReduce, sh, Auto, s); err != nil || c.Proto == LL128 {
			t.Fatalf("default over PCIe, %d B: %v/%v, %v; want no LL128", s, c.Algo, c.Proto, err)
		}
	}
	hw.Protos = 1 << LL128
	c, err := NewModel(hw).Choose(AllReduce, sh, Auto, units.MiB)
	if err != nil || c.Proto != LL128 {
		t.Errorf("NCCL_PROTO=LL128 over PCIe: %v/%v, %v; want LL128", c.Algo, c.Proto, err)
	}
}
