package scenarios

import (
	"strings"
	"testing"
)

// TestHostSyncEachLayer: the host syncs in every attention layer only where
// transformers' FlashAttention-2 path tests packed position_ids (packed
// documents under training.attention flash) and where that bounds
// DeepSpeed ZeRO-3's gather pool (boundary deepspeed, stage 3, overlap_comm
// on); a given memory.host_lead overrides it. The load says so at
// model.document_len, once, and only then.
func TestHostSyncEachLayer(t *testing.T) {
	const base = `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: A100-80GB}
model: {preset: llama2-7b, seq_len: 4096}
parallelism: {dp: 8, zero_stage: 3}
training: {param_dtype: bf16}
communication: {boundary: deepspeed}
`
	for _, c := range []struct {
		sets []string
		want bool
	}{
		{nil, false},
		{[]string{"model.document_len=1024"}, true},
		{[]string{"model.document_len=4096", "training.attention=flash"}, true},
		{[]string{"model.document_len=1024", "communication.overlap=true"}, true},
		{[]string{"model.document_len=1024", "memory.host_lead=1"}, false},
		{[]string{"model.document_len=1024", "memory.host_lead=0.5"}, false},
		{[]string{"model.document_len=1024", "training.attention=eager"}, false},
		{[]string{"model.document_len=1024", "communication.overlap=false"}, false},
		{[]string{"model.document_len=1024", "parallelism.zero_stage=2"}, false},
		{[]string{"model.document_len=1024", "communication.boundary=fsdp2"}, false},
		// flash-attn's unpad_input reads the longest sequence to the host
		// in every block (bert_padding.py lines 107-109 at
		// Dao-AILab/flash-attention v0.2.8, 33e0860c): the same bound, no
		// note (no collator can skip it; the report names the reason).
		{[]string{"training.attention_unpad=true"}, true},
		{[]string{"training.attention_unpad=true", "memory.host_lead=1"}, false},
		{[]string{"training.attention_unpad=true", "communication.overlap=false"}, false},
		{[]string{"training.attention_unpad=true", "communication.boundary=fsdp1"}, false},
		{[]string{"training.attention_unpad=true", "communication.boundary=fsdp1", "communication.limit_all_gathers=false"}, true},
	} {
		s, err := Load("ds.yaml", []byte(base), c.sets)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		if got := s.HostSyncEachLayer(); got != c.want {
			t.Errorf("%v: HostSyncEachLayer %v, want %v", c.sets, got, c.want)
		}
		var notes []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "DeepSpeed's gather pool holds at most one layer") {
				notes = append(notes, w)
			}
		}
		packed := c.want && strings.Contains(strings.Join(c.sets, " "), "document_len")
		if want := map[bool]int{true: 1}[packed]; len(notes) != want {
			t.Errorf("%v: %d host-sync notes, want %d: %q", c.sets, len(notes), want, notes)
		}
		if why := map[bool]string{true: HostSyncUnpad}[c.want && !packed]; c.want && !packed && s.HostSyncWhy() != why {
			t.Errorf("%v: HostSyncWhy %q, want %q", c.sets, s.HostSyncWhy(), why)
		}
		if packed && len(notes) == 1 && !strings.Contains(notes[0], "--set model.document_len=") {
			t.Errorf("%v: the note %q does not name model.document_len", c.sets, notes[0])
		}
	}
}
