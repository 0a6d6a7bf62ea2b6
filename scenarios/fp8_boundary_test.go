package scenarios

import (
	"strings"
	"testing"
)

// TestFP8AllGatherNeedsFSDP2: torchao's float8 all-gather is FSDP2's
// (WeightWithDynamicFloat8CastTensor's fsdp_pre_all_gather and
// fsdp_post_all_gather, torchao/float8/fsdp_utils.py lines 218 and 238 at
// 11ce634), so fp8_all_gather: true under FSDP1 or DeepSpeed is refused at
// the key; left out there it is false (torchao's and torchtitan's own
// default), and false, FSDP2 and the defaults load.
func TestFP8AllGatherNeedsFSDP2(t *testing.T) {
	doc := func(stage, boundary, fp8 string) string {
		return "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {preset: gpt3-125m}\n" +
			"parallelism: {dp: 8, zero_stage: " + stage + "}\ncommunication: {boundary: " + boundary + "}\ntraining: {" + fp8 + "}\n"
	}
	for _, c := range []struct{ name, in, want string }{
		{"fsdp1 true", doc("3", "fsdp1", "fp8: torchao, fp8_all_gather: true"),
			"s.yaml:6:26: fp8_all_gather is torchao's float8 all-gather, which only FSDP2 runs (fsdp_pre_all_gather/fsdp_post_all_gather of torchao/float8/fsdp_utils.py), and communication.boundary is fsdp1: FSDP1's FlatParameter gathers 16-bit weights (set fp8_all_gather: false, or boundary: fsdp2)"},
		{"fsdp1 true stage 1", doc("1", "fsdp1", "fp8: torchao, fp8_all_gather: true"),
			"s.yaml:6:26: fp8_all_gather is torchao's float8 all-gather, which only FSDP2 runs (fsdp_pre_all_gather/fsdp_post_all_gather of torchao/float8/fsdp_utils.py), and communication.boundary is fsdp1: stage 1 under it gathers no weights (set fp8_all_gather: false, or boundary: fsdp2)"},
		{"fsdp1 default", doc("3", "fsdp1", "fp8: torchao"), ""},
		{"fsdp1 default stage 2", doc("2", "fsdp1", "fp8: torchao"), ""},
		{"deepspeed true", doc("3", "deepspeed", "fp8: torchao, fp8_all_gather: true"),
			"s.yaml:6:26: fp8_all_gather is torchao's float8 all-gather, which only FSDP2 runs (fsdp_pre_all_gather/fsdp_post_all_gather of torchao/float8/fsdp_utils.py), and communication.boundary is deepspeed: DeepSpeed's stage 3 gathers 16-bit weights (set fp8_all_gather: false, or boundary: fsdp2)"},
		{"deepspeed default", doc("3", "deepspeed", "fp8: torchao"), ""},
		{"deepspeed true stage 2", doc("2", "deepspeed", "fp8: torchao, fp8_all_gather: true"),
			"s.yaml:6:26: fp8_all_gather is torchao's float8 all-gather, which only FSDP2 runs (fsdp_pre_all_gather/fsdp_post_all_gather of torchao/float8/fsdp_utils.py), and communication.boundary is deepspeed: stage 2 under it gathers no weights (set fp8_all_gather: false, or boundary: fsdp2)"},
		{"fsdp1 false", doc("3", "fsdp1", "fp8: torchao, fp8_all_gather: false"), ""},
		{"fsdp1 default stage 1", doc("1", "fsdp1", "fp8: torchao"), ""},
		{"deepspeed default stage 2", doc("2", "deepspeed", "fp8: torchao"), ""},
		{"fsdp2 true", doc("3", "fsdp2", "fp8: torchao, fp8_all_gather: true"), ""},
		{"fsdp2_head default", doc("3", "fsdp2_head", "fp8: torchao"), ""},
		{"reshard default", doc("3", "reshard", "fp8: torchao"), ""},
	} {
		s, err := Load("s.yaml", []byte(c.in), nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "":
			// Left out under FSDP1 or DeepSpeed it is false; under FSDP2
			// and reshard zerosim's default true.
			fsdp2 := strings.Contains(c.in, "fsdp2") || strings.Contains(c.in, "reshard")
			want := fsdp2 && !strings.Contains(c.in, "fp8_all_gather: false")
			if s.Training.FP8 != FP8TorchAO || s.Training.FP8Gather() != want {
				t.Errorf("%s: fp8 %s, gathers fp8 %t; want torchao, %t", c.name, s.Training.FP8, s.Training.FP8Gather(), want)
			}
		case err == nil:
			t.Errorf("%s: accepted, want %s", c.name, c.want)
		case strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: more than one line: %q", c.name, err)
		case err.Error() != c.want:
			t.Errorf("%s:\n got %s\nwant %s", c.name, err, c.want)
		}
	}
}
