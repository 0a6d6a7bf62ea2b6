package scenarios

import "testing"

// BenchmarkLoad measures Load on the embedded examples and on the largest
// models the limits allow.
func BenchmarkLoad(b *testing.B) {
	inputs := []struct {
		name string
		data []byte
	}{
		{"example=default", nil},
		{"example=gpt3-175b-16k", nil},
		{"model=mlp-1024-layers", []byte(rep("preset: gpt3-125m", "preset: residual-mlp-4096\n  layers: 1024"))},
		{"model=params-1024-layers", []byte(rep("preset: gpt3-125m", "params: 7B\n  layers: 1024"))},
	}
	for _, in := range inputs {
		data := in.data
		if data == nil {
			data, _ = Example(in.name[len("example="):])
		}
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load("b.yaml", data, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
