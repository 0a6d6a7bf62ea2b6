package scenarios

import (
	"strings"
	"testing"
)

// TestCPSeqLenSplitsInto2CP (qa19 L1): context parallelism gives each cp
// rank chunks r and 2·cp−1−r of 2·cp (PyTorch's _HeadTailLoadBalancer
// raises AssertionError unless seq_length % (2·world_size) == 0), so a
// seq_len that is no multiple of 2·cp is refused at model.seq_len with the
// nearest multiple above; one that is, loads.
func TestCPSeqLenSplitsInto2CP(t *testing.T) {
	file := []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}
model: {preset: llama2-7b, seq_len: 8191}
parallelism: {dp: 4, cp: 2, zero_stage: 3}
`)
	_, err := Load("s.yaml", file, nil)
	want := "s.yaml:3:28: seq_len=8191 does not split into 2·cp = 4 equal chunks: context parallelism gives each cp rank chunks r and 2·cp−1−r (PyTorch's _HeadTailLoadBalancer, torchtitan's default, raises otherwise; use a multiple of 4 such as 8192)"
	if err == nil || err.Error() != want {
		t.Errorf("seq_len 8191 at cp 2: %v\nwant %s", err, want)
	}
	// 4098 divides by cp = 2 but not by 2·cp = 4; 4100 does.
	if _, err := Load("s.yaml", file, []string{"model.seq_len=4098"}); err == nil || !strings.Contains(err.Error(), "use a multiple of 4 such as 4100") {
		t.Errorf("seq_len 4098 at cp 2: %v, want refused", err)
	}
	for _, sets := range [][]string{{"model.seq_len=4100"}, {"model.seq_len=8191", "parallelism.cp=1", "parallelism.dp=8"}} {
		if _, err := Load("s.yaml", file, sets); err != nil {
			t.Errorf("%v: %v", sets, err)
		}
	}
}
