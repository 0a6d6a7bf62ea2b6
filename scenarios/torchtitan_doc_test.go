package scenarios

import (
	"strings"
	"testing"
)

// TestTorchtitanDocumentNote: a torchtitan flavor on FlexAttention masks
// by document (attn_mask_type "block_causal": torchtitan's
// get_document_mask_mod, torchtitan/models/common/attention.py at
// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a), but the job file states no
// document length (the dataset decides it), so the import writes no
// model.document_len and says to set it; the written scenario then takes
// one and counts attention within each document.
func TestTorchtitanDocumentNote(t *testing.T) {
	tt, err := ImportTorchtitan("deepseek_v3_16b.toml", ttFile(t, "deepseek_v3_16b.toml"), TorchtitanCluster{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "the dataset's document length is not in the file: set model.document_len to it to count attention within each document"
	if notes := strings.Join(tt.Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("notes\n%s\nwant one with %q", notes, want)
	}
	y := tt.Scenario()
	if strings.Contains(string(y), "document_len:") {
		t.Errorf("the scenario writes document_len the file does not state:\n%s", y)
	}
	s, err := Load("s.yaml", y, []string{"model.document_len=512"})
	if err != nil {
		t.Fatalf("the imported scenario with a document length does not load: %v", err)
	}
	if s.Model.DocumentLen != 512 {
		t.Errorf("document_len %d, want 512", s.Model.DocumentLen)
	}
}
