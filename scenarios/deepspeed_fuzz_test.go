package scenarios

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

// FuzzImportDeepSpeed feeds ds_config.json bytes, with the options a
// caller may know, to the DeepSpeed importer, seeded with the real configs
// of docs/examples/deepspeed and small ones reaching each rule: it never
// panics, every error is one line naming the file, every setting has a
// value and a one-line source, notes are single lines, and the same input
// imports the same way twice (the output is deterministic).
func FuzzImportDeepSpeed(f *testing.F) {
	files, _ := filepath.Glob(dsDir + "*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint64(8), uint64(202_383_360))
	}
	for _, s := range []string{"", "{}", "[]", "null", `{"zero_optimization": true}`, `{"zero_optimization": false}`,
		`{"train_batch_size": 64, "gradient_accumulation_steps": 3}`,
		`{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 1e300}`,
		`{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "reduce_bucket_size": 9e18, "stage3_prefetch_bucket_size": "auto", "stage3_max_live_parameters": 0}}`,
		`{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 16, "zero_quantized_weights": true, "offload_param": {"device": "cpu"}, "offload_optimizer": {"device": "nvme", "ratio": 0.5}}}`,
		`{"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": 1e-300, "weight_decay": -1}}}`,
		`{"train_micro_batch_size_per_gpu": 1, "fp16": {"enabled": "auto"}, "bf16": {"enabled": false}, "data_types": {"grad_accum_dtype": "fp32"}, "pipeline": {}, "x\n": 1}`,
		`{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}, "bf16": {"enabled": "auto", "bf16_master_weights_and_grads": true, "bf16_optimizer_states": "yes"}, "fp16": {"fp16_master_weights_and_grads": true}}`,
		"\xef\xbb\xbf{\"train_micro_batch_size_per_gpu\": 1}", "\xef\xbb\xbf", "\xef\xbb\xbf\xef\xbb\xbf{}",
	} {
		f.Add([]byte(s), uint64(0), uint64(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, dp, block uint64) {
		o := DeepSpeedOptions{DP: int64(dp % (1 << 23)), Units: dsFuzzUnits(int64(block % (1 << 40)))}
		if len(data) > 0 && data[0]%2 == 1 {
			o.Hidden = int64(binary.LittleEndian.Uint16(append([]byte{data[0], 0}, data...)[:2]))
			o.MicroBatch, o.GradAccum, o.ParamDType = int64(dp%7), int64(block%5), BF16
		}
		d, err := ImportDeepSpeed("ds.json", data, o)
		if err != nil {
			// "FILE: …", or "FILE:LINE:COL: …" at a JSON syntax error.
			if !dsJSONError.MatchString(err.Error()) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		for _, s := range d.Settings {
			if s.Key == "" || s.Value == "" || s.From == "" || strings.ContainsAny(s.From+s.Value, "\n\r") {
				t.Fatalf("setting %+v", s)
			}
		}
		for _, n := range d.Notes {
			if n == "" || strings.ContainsAny(n, "\n\r") {
				t.Fatalf("note %q", n)
			}
		}
		if d.Stage < 0 || d.Stage > 3 {
			t.Fatalf("stage %d", d.Stage)
		}
		again, err := ImportDeepSpeed("ds.json", data, o)
		if err != nil || len(again.Settings) != len(d.Settings) || len(again.Notes) != len(d.Notes) {
			t.Fatalf("a second import differs: %v", err)
		}
		for i := range d.Settings {
			if again.Settings[i] != d.Settings[i] {
				t.Fatalf("a second import differs: %+v, %+v", again.Settings[i], d.Settings[i])
			}
		}
		for i := range d.Notes {
			if again.Notes[i] != d.Notes[i] {
				t.Fatalf("a second import differs: %q, %q", again.Notes[i], d.Notes[i])
			}
		}
	})
}

var dsJSONError = regexp.MustCompile(`^ds\.json(:\d+:\d+)?: `)

// dsFuzzUnits is a MoE-like unit list: an embedding, eight blocks of p
// parameters each followed by experts of 7·p, and a head.
func dsFuzzUnits(p int64) []Layer {
	if p == 0 {
		return nil
	}
	l := []Layer{{Name: "embedding", Params: units.Count(p)}}
	for i := range 8 {
		l = append(l, Layer{Name: fmt.Sprintf("block.%d", i), Params: units.Count(p)}, Layer{Name: fmt.Sprintf("experts.%d", i), Params: units.Count(7 * p)})
	}
	return append(l, Layer{Name: "lm_head", Params: units.Count(p)})
}
