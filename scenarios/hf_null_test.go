package scenarios

import (
	"os"
	"strings"
	"testing"
)

// TestHFNullKeys: a key config.json gives as null is None in transformers,
// not the class default. gpt-oss's sliding_window null makes every forward
// fail (create_sliding_window_causal_mask raises on a None window), and
// DeepSeek-V3's n_shared_experts null fails DeepseekV3MoE's
// moe_intermediate_size * n_shared_experts: both refused at the key with
// the fix, where they imported with the defaults 128 and 1. DeepSeek-V2's
// class builds no shared expert for None: V2-Lite with n_shared_experts
// null loses its 26 MoE layers' shared MLP of 2·1408, 26 · 3 · 2048 · 2816
// = 449,839,104 parameters (15,706,484,224 → 15,256,645,120).
func TestHFNullKeys(t *testing.T) {
	for _, c := range []struct {
		file, from, to string
		want           string // error prefix; "" imports
		total          int64
	}{
		{"gpt-oss-20b.json", `"sliding_window": 128`, `"sliding_window": null`,
			"gpt-oss-20b.json:70:3: sliding_window is null: GptOssModel builds the sliding-window mask on every forward", 0},
		{"deepseek-v3.json", `"n_shared_experts": 1`, `"n_shared_experts": null`,
			"deepseek-v3.json:27:3: n_shared_experts is null: DeepseekV3MoE sizes shared_experts as moe_intermediate_size * n_shared_experts", 0},
		{"deepseek-v2-lite.json", `"n_shared_experts": 2`, `"n_shared_experts": null`, "", 15_256_645_120},
		{"deepseek-v2-lite.json", `"n_shared_experts": 2`, `"n_shared_experts": 2`, "", 15_706_484_224},
	} {
		raw, err := os.ReadFile("testdata/hf-extra/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		data := strings.Replace(string(raw), c.from, c.to, 1)
		if !strings.Contains(string(raw), c.from) {
			t.Fatalf("%s has no %s", c.file, c.from)
		}
		hm, err := ImportHF(c.file, []byte(data))
		switch {
		case c.want == "" && (err != nil || int64(hm.Total) != c.total):
			t.Errorf("%s with %s: %v, want %d parameters", c.file, c.to, err, c.total)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s with %s: error %v, want one line starting %q", c.file, c.to, err, c.want)
		}
	}
}
