package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/jsonschema"
)

// TestJSONOutputSchemas: the JSON of plan, compare, fit, memory,
// collective, verify (and --reference), calibrate, import (hf, deepspeed,
// accelerate), validate, scenarios and version, and manifest.json, follows its
// docs/*.schema.json (QA25 M6: only run's and sweep's JSON had a schema),
// each command run the ways that write the optional parts (plan's network
// section and nothing-fits fields, compare's slow-link, K-no-effect and
// ZeRO++ sections, fit under a seed's convention, memory's estimators,
// offload and n/a stages, collective's ranges, verify's drift, each of
// calibrate's forms); plan -o's plan.json too. The
// validator refuses each file with a stray key in its top object: every
// schema holds its keys, not any object.
func TestJSONOutputSchemas(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		schema string
		args   []string
		code   int
	}{
		{"plan", []string{"plan", "default"}, 0},
		{"plan", []string{"plan", "default", "--network"}, 0},
		{"plan", []string{"plan", "seed002-7b", "--set", "model={preset: llama2-7b}", "--set", "cluster.gpu_memory=8GiB"}, exitFailure},
		{"plan", []string{"plan", "default", "--stages", "3", "--tokens", "1T", "--require-device-fit", "--set", "parallelism.k=1"}, 0},
		{"compare", []string{"compare", "default", "--vary", "parallelism.k=1,2"}, 0},
		{"compare", []string{"compare", "default", "--set", "parallelism.zero_stage=0", "--vary", "parallelism.k=1,2"}, 0},
		{"compare", []string{"compare", "default", "--vary", "parallelism.zero_stage=1,3"}, 0},
		{"compare", []string{"compare", "default", "--zeropp"}, 0},
		{"compare", []string{"compare", "default", "--set", "communication.calibration=../../docs/examples/calibration-h100-ndr.yaml", "--vary", "parallelism.k=1,2"}, 0},
		{"fit", []string{"fit", "default"}, 0},
		{"fit", []string{"fit", "seed002-7b", "--convention", "seed002"}, 0},
		{"fit", []string{"fit", "default", "--set", "stack=torchtitan"}, 0},
		{"memory", []string{"memory", "default"}, 0},
		{"memory", []string{"memory", "default", "--estimator", "all"}, 0},
		{"memory", []string{"memory", "default", "--set", "offload.optimizer=cpu", "--set", "parallelism.zero_stage=3", "--stage", "3"}, 0},
		{"memory", []string{"memory", "default", "--set", "communication.bucket_size=30KB", "--set", "parallelism.zero_stage=3"}, 0},
		{"collective", []string{"collective", "--size", "1MiB"}, 0},
		{"collective", []string{"collective", "--size", "1KiB:1MiB", "--group", "intra", "--concurrent", "--op", "allgather"}, 0},
		{"verify", []string{"verify"}, 0},
		{"verify", []string{"verify", "--drift"}, 0},
		{"verify", []string{"verify", "--reference", "../../numerics/testdata/reference/adam-basic.json"}, 0},
		{"import", []string{"import", "hf", "../../scenarios/testdata/hf/llama-2-7b"}, 0},
		{"import", []string{"import", "hf", "../../scenarios/testdata/hf/mixtral-8x7b"}, 0},
		{"import", []string{"import", "hf", "../../scenarios/testdata/hf/gemma-2-9b"}, 0},
		{"import", []string{"import", "deepspeed", "../../docs/examples/deepspeed/flagperf-llama2-7b.json", "--hf", "../../scenarios/testdata/hf/llama-2-7b", "--gpu", "A100-80GB"}, 0},
		{"import", []string{"import", "accelerate", "../../scenarios/testdata/accelerate/accelerate-fsdp.yaml", "--hf", "../../scenarios/testdata/hf/llama-2-7b", "--gpu", "H100-80GB"}, 0},
		{"validate", []string{"validate", "default", "../../docs/examples/mixtral-8x7b.yaml", "--set", "stack=torchtitan"}, 0},
		{"scenarios", []string{"scenarios"}, 0},
		{"version", []string{"version"}, 0},
		{"calibration", []string{"calibrate", "../../collectives/testdata/nccl-tests/h100_2node_allreduce_default_xe9680_nccltests309.log", "../../collectives/testdata/nccl-tests/h100_4node_allreduce_default_nccltests309.log", "--gpus-per-node", "8", "--file", filepath.Join(dir, "net.yaml")}, 0},
		{"calibration", []string{"calibrate", "--step-time", "10.5s", "../../docs/examples/llama-3.1-70b.yaml", "--file", filepath.Join(dir, "compute.yaml")}, 0},
		{"calibration", []string{"calibrate", "--reserved", "82.4GiB", "../../testdata/validation/torchtitan-llama3.1-8b-h100.yaml", "--file", filepath.Join(dir, "memory.yaml")}, 0},
		{"calibration", []string{"calibrate", "--train-log", "../../scenarios/testdata/trainlog/torchtitan-pr1287-llama3-8b.log", "../../testdata/validation/torchtitan-llama3.1-8b-h100.yaml", "--set", "training.micro_batch=1", "--file", filepath.Join(dir, "trainlog.yaml")}, 0},
	} {
		name := strings.Join(tc.args, " ")
		sch, err := jsonschema.Load(filepath.Join("..", "..", "docs", tc.schema+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runMain(t, "", append(tc.args, "--format", "json")...)
		if code != tc.code {
			t.Fatalf("%s: exit %d, want %d: %s", name, code, tc.code, errOut)
		}
		checkSchema(t, sch, name, []byte(out))
		if tc.schema == "plan" && tc.code == 0 {
			// plan -o DIR's plan.json is the same object.
			o := filepath.Join(dir, "plan")
			if code, _, errOut := runMain(t, "", append(tc.args, "-o", o)...); code != 0 {
				t.Fatalf("%s -o: exit %d: %s", name, code, errOut)
			}
			b, err := os.ReadFile(filepath.Join(o, "plan.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkSchema(t, sch, name+" -o: plan.json", b)
		}
	}
	// manifest.json of every command that writes -o DIR: plan's names
	// what made the files, run's and compare's do not.
	man, err := jsonschema.Load(filepath.Join("..", "..", "docs", "manifest.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, args := range [][]string{
		{"run", "seed002-tiny"},
		{"plan", "seed002-tiny", "--stages", "3"},
		{"compare", "seed002-tiny", "--vary", "parallelism.zero_stage=1,3"},
	} {
		o := filepath.Join(dir, fmt.Sprint("o", i))
		if code, _, errOut := runMain(t, "", append(args, "-o", o)...); code != 0 {
			t.Fatalf("%q -o: exit %d: %s", args, code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(o, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		checkSchema(t, man, strings.Join(args, " ")+" -o: manifest.json", b)
	}
}

// checkSchema validates the JSON doc against sch, and checks that sch
// refuses doc with a stray key in its top object.
func checkSchema(t *testing.T, sch *jsonschema.Schema, name string, doc []byte) {
	t.Helper()
	v, err := jsonschema.Decode(doc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if errs := sch.Check(v, "$"); len(errs) > 0 {
		t.Errorf("%s: the JSON does not follow its schema:\n%s", name, strings.Join(errs, "\n"))
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: the JSON is a %T, not an object", name, v)
	}
	m["surprise"] = true
	if errs := sch.Check(v, "$"); !strings.Contains(strings.Join(errs, "\n"), `key "surprise" is not in the schema`) {
		t.Errorf("%s: the schema took a stray key: %q", name, errs)
	}
}

// TestCmdSchemasHaveEveryKey: every key the structs of the JSON the
// command package writes itself can hold, at every depth and omitempty
// ones too, is a property of its schema (reports' TestSchemasHaveEveryKey
// does the same for the reports package's).
func TestCmdSchemasHaveEveryKey(t *testing.T) {
	for _, c := range []struct {
		schema string
		oneOf  int // the schema's oneOf branch the type writes, or -1
		typ    reflect.Type
		keys   int // at least
	}{
		{"import", 0, reflect.TypeOf(hfJSON{}), 40},
		{"import", 1, reflect.TypeOf(deepSpeedJSON{}), 7},
		{"import", 2, reflect.TypeOf(accelerateJSON{}), 8},
		{"validate", -1, reflect.TypeOf(validateJSON{}), 14},
		{"scenarios", -1, reflect.TypeOf(scenariosJSON{}), 9},
		{"version", -1, reflect.TypeOf(versionJSON{}), 6},
	} {
		jsonschema.CheckKeys(t, filepath.Join("..", "..", "docs", c.schema+".schema.json"), c.oneOf, c.typ, c.keys)
	}
}
