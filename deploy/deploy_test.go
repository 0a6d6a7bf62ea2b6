// Package deploy_test runs the deploy/ examples locally: the Slurm array
// script with the variables Slurm would set, and the Kubernetes Jobs'
// container scripts with JOB_COMPLETION_INDEX, against a zerosim binary
// built from this tree.
package deploy_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// zerosimBin is the zerosim binary TestMain builds once for every test.
var zerosimBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zerosim-deploy-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zerosimBin = filepath.Join(dir, "zerosim")
	if out, err := exec.Command("go", "build", "-o", zerosimBin, "github.com/zerosim/zerosim/cmd/zerosim").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildZerosim returns the zerosim binary TestMain built, skipping the test
// when there is no bash to run the scripts.
func buildZerosim(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	return zerosimBin
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout: %s\nstderr: %s", name, args, err, out.String(), errOut.String())
	}
	return out.String()
}

// TestSlurmScript runs slurm-sweep.sbatch as array tasks 0–2 of 3 and then
// in merge mode, and checks the merged file is the whole sweep's output.
func TestSlurmScript(t *testing.T) {
	bin := buildZerosim(t)
	dir := t.TempDir()
	grids := "parallelism.zero_stage=0,1,2,3 parallelism.k=1,2 communication.bucket_size=64B,1KiB"
	env := []string{"ZEROSIM=" + bin, "SCENARIO=seed002-tiny", "SWEEP_GRIDS=" + grids, "OUT_DIR=" + filepath.Join(dir, "out"), "SLURM_CPUS_PER_TASK=2"}
	for i := 0; i < 3; i++ {
		run(t, append(env, "SLURM_ARRAY_TASK_ID="+strconv.Itoa(i), "SLURM_ARRAY_TASK_COUNT=3"), "bash", "slurm-sweep.sbatch")
	}
	// A requeued task resumes its complete shard without changing it.
	before, _ := os.ReadFile(filepath.Join(dir, "out", "shard-1.csv"))
	run(t, append(env, "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=3"), "bash", "slurm-sweep.sbatch")
	after, _ := os.ReadFile(filepath.Join(dir, "out", "shard-1.csv"))
	if !bytes.Equal(before, after) || len(before) == 0 {
		t.Errorf("rerunning task 1 changed its shard")
	}
	run(t, append(env, "MODE=merge", "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=1"), "bash", "slurm-sweep.sbatch")
	merged, err := os.ReadFile(filepath.Join(dir, "out", "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, g := range strings.Fields(grids) {
		args = append(args, "--grid", g)
	}
	whole := run(t, nil, bin, append([]string{"sweep", "seed002-tiny"}, args...)...)
	if string(merged) != whole || strings.Count(whole, "\n") != 18 { // meta line, header, 16 rows
		t.Errorf("merged shards (%d lines) differ from the whole sweep (%d lines)", strings.Count(string(merged), "\n"), strings.Count(whole, "\n"))
	}
}

type job struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Env []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					Command   []string `yaml:"command"`
					Args      []string `yaml:"args"`
					Resources struct {
						Limits struct {
							CPU string `yaml:"cpu"`
						} `yaml:"limits"`
					} `yaml:"resources"`
				} `yaml:"containers"`
				Volumes []struct {
					PVC struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestIndexedJob parses sweep-indexed-job.yaml (yaml.v3), checks the
// Indexed Job's settings, and runs both Jobs' container scripts locally with
// /data on a temporary directory: pods 0…SHARDS-1, then the merge.
func TestIndexedJob(t *testing.T) {
	data, err := os.ReadFile("sweep-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []job
	for {
		var j job
		if err := dec.Decode(&j); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("sweep-indexed-job.yaml: %v", err)
		}
		docs = append(docs, j)
	}
	if len(docs) != 3 || docs[0].Kind != "PersistentVolumeClaim" || docs[1].Kind != "Job" || docs[2].Kind != "Job" {
		t.Fatalf("want a PVC and two Jobs, got %+v", docs)
	}
	pvc, sweep, merge := docs[0], docs[1], docs[2]
	env := func(j job) map[string]string {
		m := map[string]string{}
		for _, e := range j.Spec.Template.Spec.Containers[0].Env {
			m[e.Name] = e.Value
		}
		return m
	}
	se := env(sweep)
	shards, _ := strconv.Atoi(se["SHARDS"])
	if sweep.Spec.CompletionMode != "Indexed" || sweep.Spec.Completions != shards || sweep.Spec.Parallelism != shards || shards < 2 {
		t.Errorf("sweep Job: completionMode %q completions %d parallelism %d SHARDS %d", sweep.Spec.CompletionMode, sweep.Spec.Completions, sweep.Spec.Parallelism, shards)
	}
	for _, j := range []job{sweep, merge} {
		if v := j.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].PVC.ClaimName != pvc.Metadata.Name {
			t.Errorf("%s: volumes %+v, want the claim %s", j.Metadata.Name, v, pvc.Metadata.Name)
		}
	}
	if sweep.Metadata.Labels["step"] != "sweep" || pvc.Metadata.Labels["step"] != "sweep" || merge.Metadata.Labels["step"] != "merge" {
		t.Errorf("step labels: %v %v %v", pvc.Metadata.Labels, sweep.Metadata.Labels, merge.Metadata.Labels)
	}
	if se["SWEEP_GRIDS"] != env(merge)["SWEEP_GRIDS"] || se["SCENARIO"] != env(merge)["SCENARIO"] {
		t.Error("the sweep and merge Jobs have different grids or scenarios")
	}
	// Run the pods' scripts locally.
	bin := buildZerosim(t)
	dir := t.TempDir()
	path := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	script := func(j job) (string, []string) {
		c := j.Spec.Template.Spec.Containers[0]
		if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || len(c.Args) != 1 {
			t.Fatalf("%s: command %q args %q", j.Metadata.Name, c.Command, c.Args)
		}
		var e []string
		for k, v := range env(j) {
			e = append(e, k+"="+v)
		}
		return strings.ReplaceAll(c.Args[0], "/data", dir), append(e, path)
	}
	s, e := script(sweep)
	if !strings.Contains(s, "$JOB_COMPLETION_INDEX/$SHARDS") {
		t.Errorf("the sweep script does not shard by JOB_COMPLETION_INDEX: %s", s)
	}
	// -j is the pod's CPU limit, as the Slurm script passes
	// $SLURM_CPUS_PER_TASK (QA25 M5: it ran the node's CPU count).
	if cpu := sweep.Spec.Template.Spec.Containers[0].Resources.Limits.CPU; cpu == "" || !strings.Contains(s, " -j "+cpu+" ") {
		t.Errorf("the sweep script does not pass -j %q, its CPU limit: %s", cpu, s)
	}
	for i := 0; i < shards; i++ {
		run(t, append(e, "JOB_COMPLETION_INDEX="+strconv.Itoa(i)), "sh", "-c", s)
	}
	s, e = script(merge)
	run(t, e, "sh", "-c", s)
	merged, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, g := range strings.Fields(se["SWEEP_GRIDS"]) {
		args = append(args, "--grid", g)
	}
	whole := run(t, nil, bin, append([]string{"sweep", se["SCENARIO"]}, args...)...)
	if string(merged) != whole {
		t.Errorf("merged pods' shards differ from the whole sweep")
	}
}
