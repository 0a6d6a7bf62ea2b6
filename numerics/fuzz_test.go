package numerics

import (
	"bytes"
	"testing"
)

// FuzzCheckReference: no input may panic CheckReference; it returns a
// result or an error.
func FuzzCheckReference(f *testing.F) {
	for _, s := range []string{
		`{"format":"zerosim-reference/v1","kind":"bf16-round","input_f32":[0,1065353216],"output_bf16":[0,16256]}`,
		`{"format":"zerosim-reference/v1","kind":"adam","hyper":{"lr":0.001,"beta1":0.9,"beta2":0.999,"eps":1e-8},"n":1,"param0_f32":[0],"grads_f32":[[1065353216]],"param_f32":[[0]],"exp_avg_f32":[[0]],"exp_avg_sq_f32":[[0]]}`,
		`{"format":"zerosim-reference/v1","kind":"toy-mlp","model":{"hidden":1,"layers":1,"activation":"gelu-erf","residual":true},"hyper":{"lr":0.001,"beta1":0.9,"beta2":0.999,"eps":1e-8},"param_names":["layers.0.fc1.weight","layers.0.fc1.bias","layers.0.fc2.weight","layers.0.fc2.bias"],"params0_bf16":[[[1],[2],[3],[4]],[1,2,3,4],[[1,2,3,4]],[5]],"inputs_bf16":[[[16256]]],"loss_f32":[0],"grads_bf16":[[[[1],[2],[3],[4]],[1,2,3,4],[[1,2,3,4]],[5]]],"params_bf16":[[[[1],[2],[3],[4]],[1,2,3,4],[[1,2,3,4]],[5]]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := CheckReference(bytes.NewReader(data))
		if err == nil && r == nil {
			t.Fatal("nil result without error")
		}
	})
}

// FuzzVerifyConfig: no configuration may panic Verify.
func FuzzVerifyConfig(f *testing.F) {
	f.Add(uint8(0), uint8(4), uint8(2), uint8(1), int16(0), uint8(2), uint8(1), int16(3), uint8(2), false)
	f.Fuzz(func(t *testing.T, model, n, k, stage uint8, bucket int16, steps, crank uint8, cidx int16, cstep uint8, megatron bool) {
		c := Config{Model: ModelKind(model % 3), Hidden: 3, Layers: 1, N: int(n % 9), K: int(k % 9), Stage: int(stage % 5),
			BucketElems: int64(bucket), Steps: int(steps % 4), Seed: 1}
		if megatron {
			c.Padding = 1
		}
		if crank > 0 {
			c.Corrupt = &Corruption{Rank: int(crank % 10), Index: int64(cidx), Step: int(cstep % 4)}
		}
		r, err := Verify(c)
		if err == nil && c.Corrupt == nil && !r.Pass {
			t.Fatalf("%s: mismatch %v", c.Name(), r.First)
		}
		if err == nil && c.Corrupt != nil && r.Pass {
			t.Fatalf("%s: corruption %+v not detected", c.Name(), *c.Corrupt)
		}
	})
}
