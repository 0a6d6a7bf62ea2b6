package zero

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestFMSFSDP6327da6MHADocFigures holds the figures testdata/validation/
// README.md quotes for fms-fsdp's 6327da6 table read with the models of
// 6327da6's own config_utils.py (34b and 70b with one KV head per query
// head, MHA, where the suite reads main's 247f22c GQA, 8 KV heads): the
// validation's own replay with those rows' kv_heads set to their heads,
// calibrated as the suite is on the 7b row.
func TestFMSFSDP6327da6MHADocFigures(t *testing.T) {
	const name = "fms-fsdp-llama2-a100-6327da6"
	src, tmpl := loadValidation(t, "../testdata/validation/"+name)
	var mha []string
	for i := range src.Rows {
		r := &src.Rows[i]
		if r.Model == "llama2-34b" || r.Model == "llama2-70b" {
			if r.KVHeads != 8 {
				t.Fatalf("%s: %s has %d KV heads, want main's 8: reword the README", name, r.Model, r.KVHeads)
			}
			r.KVHeads = r.Heads
			mha = append(mha, r.Model)
		}
	}
	if len(mha) != 2 {
		t.Fatalf("%s: want the 34b and 70b rows, got %v", name, mha)
	}
	cases, _ := runValidation(t, name, src, tmpl, validationVariant{})
	var slow []string
	for _, m := range mha {
		for _, c := range cases {
			if c.row.Model == m {
				if math.IsNaN(c.tokenErr) || c.tokenErr >= 0 {
					t.Fatalf("%s %s under MHA: throughput error %v, want slow", name, m, c.tokenErr)
				}
				slow = append(slow, fmt.Sprintf("%.1f %%", -100*c.tokenErr))
			}
		}
	}
	if len(slow) != 2 {
		t.Fatalf("%s: %d MHA rows replayed, want 2", name, len(slow))
	}
	golden.CheckQuotes(t, "../testdata/validation/README.md", "TestFMSFSDP6327da6MHADocFigures (runValidation of "+name+" with kv_heads = heads)",
		"predicts them "+strings.Join(slow, " and ")+" slow")
}
