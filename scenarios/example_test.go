package scenarios_test

import (
	"fmt"
	"strings"

	"github.com/zerosim/zerosim/scenarios"
)

func ExampleLoad() {
	s, err := scenarios.Load("tiny.yaml", []byte(`version: 1
cluster: {nodes: 1, gpus_per_node: 2, gpu: A100-80GB}
model: {preset: tiny-transformer}
parallelism: {dp: 2, zero_stage: 3}
`), []string{"training.optimizer=adamw"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.N(), s.Model.Params, s.Training.Optimizer, s.Cluster.Intra.Preset, s.Communication.BucketSize)
	var units []string
	for _, l := range s.Model.LayerList {
		units = append(units, fmt.Sprintf("%s=%d", l.Name, l.Params))
	}
	fmt.Println(strings.Join(units, " "))

	_, err = scenarios.Load("bad.yaml", []byte("version: 1\ncluster:\n  nodez: 2\n"), nil)
	fmt.Println(err)
	// Output:
	// 2 260 adamw NVLink3 38.15 MiB
	// ln1=8 attn=64 ln2=8 ffn=148 out=32
	// bad.yaml:3:3: unknown key "nodez" in cluster (did you mean "nodes"?)
}

func ExampleExampleNames() {
	for _, name := range scenarios.ExampleNames() {
		if name == scenarios.DefaultExample {
			b, _ := scenarios.Example(name)
			s, _ := scenarios.Load(name, b, nil)
			fmt.Println(name, s.N(), s.Model.Params)
		}
	}
	// Output: default 16 6738415616
}
