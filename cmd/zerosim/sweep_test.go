package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/reports"
	"github.com/zerosim/zerosim/sweep"
)

func sweepCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// sweepGrids is the 1,728-point acceptance sweep of seed 002's tiny model
// on 2 nodes × 2 GPUs (sweep/sweep_test.go); k=3 points are invalid rows.
var sweepGrids = []string{"--set", "cluster.nodes=2", "--set", "parallelism.dp=4",
	"--grid", "parallelism.zero_stage=0,1,2,3", "--grid", "parallelism.k=1,2,3,4",
	"--grid", "communication.algorithm=ring,hierarchical,auto", "--grid", "communication.bucket_size=64B,256B,1KiB",
	"--grid", "communication.prefetch_depth=0,1,2", "--grid", "communication.max_inflight_allgathers=1,2",
	"--grid", "communication.overlap=true,false"}

// smallGrids is the first three grids of sweepGrids: 48 points, 12 of them
// invalid (k=3).
var smallGrids = sweepGrids[:10]

// TestSweepShardMerge is the acceptance test through the CLI: the sweep to
// stdout (all cores) equals -j 1 and three --shard runs into --out files
// merged with zerosim merge; stderr on a pipe has no progress bar, only the
// count of invalid points.
// The sweep is the 1,728-point one, or with -short the 48 points of
// smallGrids (sweep's TestSweepAcceptance runs the 1,728 points either way).
func TestSweepShardMerge(t *testing.T) {
	grids, points := sweepGrids, 4*4*3*3*3*2*2 // the grids' values: 1,728 points
	// The stage-0 points with K 2 and 4 (K 3 is invalid), which repeat
	// their K=1 rows (qauser30 L2).
	kNoEffect := "points 108–215, 324–431"
	if testing.Short() {
		grids, points, kNoEffect = smallGrids, 4*4*3, "points 3–5, 9–11"
	}
	dir := t.TempDir()
	whole, errOut, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny"}, grids...)...)
	// On a pipe stderr holds only the notes and the count of invalid
	// points (qa21 LOW 5).
	if want := fmt.Sprintf("zerosim: warning: %s (parallelism.zero_stage=0): %s\nzerosim: sweep: %d points (shard 0/1), %d invalid\n",
		kNoEffect, sweep.KNoEffectNote, points, points/4); code != 0 || errOut != want {
		t.Fatalf("sweep: exit %d, stderr %q, want %q", code, errOut, want)
	}
	if n := strings.Count(whole, "\n"); n != points+2 {
		t.Fatalf("%d lines, want meta line, header and %d rows", n, points)
	}
	if n := strings.Count(whole, "does not divide"); n != points/4 {
		t.Errorf("%d invalid rows, want %d (k=3)", n, points/4)
	}
	one, _, _ := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "-j", "1"}, grids...)...)
	if one != whole {
		t.Fatal("-j 1 output differs")
	}
	var shards []string
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		p := filepath.Join(dir, "shard-"+s[:1]+".csv")
		if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--shard", s, "--out", p}, grids...)...); code != 0 {
			t.Fatalf("shard %s: exit %d: %s", s, code, e)
		}
		shards = append(shards, p)
	}
	count, _, _ := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--count"}, sweepGrids...)...)
	if want := strconv.Itoa(4*4*3*3*3*2*2) + "\n"; count != want {
		t.Errorf("--count = %q, want %q", count, want)
	}
	merged := filepath.Join(dir, "merged.csv")
	np := strconv.Itoa(points)
	if _, e, code := sweepCLI(t, append([]string{"merge", "--points", np, "--out", merged}, shards...)...); code != 0 || e != "" {
		t.Fatalf("merge: exit %d: %s", code, e)
	}
	got, _ := os.ReadFile(merged)
	if string(got) != whole {
		t.Fatal("merged shards differ from the whole sweep")
	}
	// A missing shard is reported with the missing points, exit 1.
	_, e, code := sweepCLI(t, "merge", "--points", np, shards[0], shards[2])
	if code != 1 || !strings.Contains(e, strconv.Itoa(points/3)+" points missing: 1, 4, 7,") {
		t.Errorf("merge without shard 1: exit %d, stderr %q", code, e)
	}
	// --out refuses to overwrite without --resume.
	if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--out", shards[0]}, grids...)...); code != 2 || !strings.Contains(e, "--resume") {
		t.Errorf("overwrite: exit %d, %q", code, e)
	}
}

// TestSweepResume: a killed sweep (a prefix of its output ending in a
// partial line) continued with --resume gives the uninterrupted file; JSON
// Lines too (48 points; sweep's TestResume covers every cut point).
func TestSweepResume(t *testing.T) {
	for _, format := range []string{"csv", "json"} {
		dir := t.TempDir()
		args := append([]string{"sweep", "seed002-tiny", "--format", format}, smallGrids...)
		full, _, code := sweepCLI(t, args...)
		if code != 0 {
			t.Fatal("sweep failed")
		}
		p := filepath.Join(dir, "out")
		cut := strings.Index(full, "\n40,") + 7
		if format == "json" {
			cut = strings.Index(full, `{"index":40,`) + 9
		}
		if err := os.WriteFile(p, []byte(full[:cut]), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, e, code := sweepCLI(t, append(args, "--out", p, "--resume")...); code != 0 {
			t.Fatalf("%s resume: exit %d: %s", format, code, e)
		}
		got, _ := os.ReadFile(p)
		if string(got) != full {
			t.Errorf("%s: resumed file differs from the uninterrupted one", format)
		}
	}
}

func TestSweepInputErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no grid", []string{"sweep", "seed002-tiny"}, "no --grid"},
		{"bad grid", []string{"sweep", "seed002-tiny", "--grid", "parallelism.k"}, "--grid"},
		{"bad shard", []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "--shard", "3/3"}, "--shard"},
		{"resume without out", []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "--resume"}, "--resume needs --out"},
		{"no such file", []string{"sweep", "nope.yaml", "--grid", "parallelism.k=1"}, "cannot read"},
		{"jobs", []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "-j", "0"}, "--jobs 0"},
		// Sized the reorder window by -j: the process ran out of memory.
		{"huge jobs", []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "-j", "99999999999"}, "--jobs 99999999999: use 1 to 1024"},
		// Each made every point an error row, with exit 0.
		{"set without =", []string{"sweep", "seed002-tiny", "--set", "parallelism.k", "--grid", "parallelism.k=1,2"}, `--set parallelism.k: missing "="`},
		{"set without value", []string{"sweep", "seed002-tiny", "--set", "parallelism.k=", "--grid", "parallelism.k=1,2"}, `--set parallelism.k=: no value after "="`},
		// Said "exists (continue it with --resume, or delete it)".
		{"out is a directory", []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "--out", dir}, "--out " + dir + " is a directory"},
		// Wrote to stdout as if --out were not given.
		{"empty out", []string{"sweep", "seed002-tiny", "--grid", "parallelism.k=1", "--out", ""}, "--out: empty value"},
		{"misspelled grid key", []string{"sweep", "seed002-tiny", "--grid", "parallelism.kk=1,2"}, `unknown key "kk" in parallelism (did you mean "k"?)`},
		{"misspelled set key", []string{"sweep", "seed002-tiny", "--set", "paralelism.k=2", "--grid", "parallelism.k=1,2"}, `did you mean "parallelism"?`},
		{"syntax error", []string{"sweep", "-", "--grid", "parallelism.k=1,2"}, "<stdin>:2:10: invalid YAML"},
		{"endless stdin", []string{"sweep", "-", "--grid", "parallelism.k=1,2"}, "larger than 4194304 bytes"},
		// Each made every point an error row, exit 0 (QA7 F7): a file's
		// unknown key, a value of the wrong kind and one out of its own
		// range, none under a --grid key.
		{"file's unknown key", []string{"sweep", "-", "--grid", "parallelism.k=1,2", "--out", filepath.Join(dir, "typo.csv")}, `<stdin>:3:11: unknown key "nodez" in cluster (did you mean "nodes"?)`},
		{"file's value of the wrong kind", []string{"sweep", "-", "--grid", "parallelism.k=1,2"}, `<stdin>:3:18: nodes: "two" is not an integer`},
		{"file's value out of range", []string{"sweep", "-", "--grid", "parallelism.k=1,2"}, "<stdin>:6:12: micro_batch=-1 is out of range (use 1 to"},
		{"set out of range", []string{"sweep", "seed002-tiny", "--set", "training.micro_batch=0", "--grid", "parallelism.k=1,2"}, "--set training.micro_batch=0: micro_batch=0 is out of range"},
	} {
		var in io.Reader = strings.NewReader("")
		const body = "model: {preset: llama3.1-8b}\nparallelism: {dp: 16, zero_stage: 3}\n"
		switch tc.name {
		case "syntax error":
			in = strings.NewReader("version: 1\ncluster: [nodes: 2\n")
		case "endless stdin":
			in = zeroReader{}
		case "file's unknown key":
			in = strings.NewReader("version: 1\nname: x\ncluster: {nodez: 2, gpus_per_node: 8, gpu: H100-80GB}\n" + body)
		case "file's value of the wrong kind":
			in = strings.NewReader("version: 1\nname: x\ncluster: {nodes: two, gpus_per_node: 8, gpu: H100-80GB}\n" + body)
		case "file's value out of range":
			in = strings.NewReader("version: 1\nname: x\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\n" + body + "training: {micro_batch: -1}\n")
		}
		var out, errOut bytes.Buffer
		code := Main(tc.args, in, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) || out.Len() > 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2, nothing on stdout and %q", tc.name, code, out.String(), errOut.String(), tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "typo.csv")); err == nil {
		t.Error("a refused sweep wrote its --out file")
	}
}

// TestSweepGridCompletesFile: a file wrong only at a key every point sets
// (its value of the wrong kind, out of range) still sweeps: the grid's
// values replace it.
func TestSweepGridCompletesFile(t *testing.T) {
	doc := "version: 1\nname: x\ncluster: {nodes: two, gpus_per_node: 2, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 4, zero_stage: 3}\ntraining: {micro_batch: -1}\n"
	var out, errOut bytes.Buffer
	code := Main([]string{"sweep", "-", "--grid", "cluster.nodes=2", "--grid", "training.micro_batch=1"}, strings.NewReader(doc), &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "\n0,2,1,") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want one row at nodes 2, micro_batch 1", code, out.String(), errOut.String())
	}
}

// zeroReader is an endless stream of zero bytes, like /dev/zero.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestSweepResumeRefuses: --resume leaves alone a file that is not a sweep
// output, another sweep's output and a symbolic link; merge refuses to mix
// two scenarios.
func TestSweepResumeRefuses(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"--grid", "parallelism.zero_stage=1,2"}
	notSweep := filepath.Join(dir, "config.json")
	if err := os.WriteFile(notSweep, []byte(`{"keep": "me"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.csv")
	if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-7b", "--out", other}, grid...)...); code != 0 {
		t.Fatalf("sweep: %s", e)
	}
	mine := filepath.Join(dir, "mine.csv")
	if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--out", mine}, grid...)...); code != 0 {
		t.Fatalf("sweep: %s", e)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	withSet := filepath.Join(dir, "set.csv")
	if _, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--set", "training.steps=2", "--out", withSet}, grid...)...); code != 0 {
		t.Fatalf("sweep: %s", e)
	}
	for _, tc := range []struct{ file, want string }{
		{notSweep, "not a zerosim sweep output"},
		{other, "another sweep (scenario sha256"},
		{withSet, "another sweep (--set"},
		{link, "symbolic link"},
	} {
		before, _ := os.ReadFile(tc.file)
		_, e, code := sweepCLI(t, append([]string{"sweep", "seed002-tiny", "--resume", "--out", tc.file}, grid...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("resume %s: exit %d, %q; want 2 and %q", filepath.Base(tc.file), code, e, tc.want)
		}
		if after, _ := os.ReadFile(tc.file); string(after) != string(before) {
			t.Errorf("resume %s changed the file", filepath.Base(tc.file))
		}
	}
	if _, e, code := sweepCLI(t, "merge", mine, other); code != 2 || !strings.Contains(e, "comes from another sweep") {
		t.Errorf("merge of two scenarios: exit %d, %q", code, e)
	}
	if _, e, code := sweepCLI(t, "merge", mine, withSet); code != 2 || !strings.Contains(e, "comes from another sweep") {
		t.Errorf("merge of two --set lists: exit %d, %q", code, e)
	}
}

// TestSweepErrorRowReadsAsTheCLI: a point the replay refuses is an error
// row whose message reads as run's would, the key and the fix without the
// package prefix.
func TestSweepErrorRowReadsAsTheCLI(t *testing.T) {
	code, out, errOut := runMain(t, "", "sweep", "--grid", "communication.bucket_size=1B", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	const want = `"error":"communication.bucket_size 1 B cuts group \"dense\"`
	if !strings.Contains(out, want) || strings.Contains(out, "zero: ") {
		t.Errorf("sweep row %q: want an error starting %s", out, want)
	}
}

// TestSweepRowsCarryDevicePeakAndMFU: a sweep row carries the device peak
// and the MFU run and plan report, and flags a point that fits by its
// allocated peak but not on the device. On llama2-13b-a100-eth at plan's
// winner (ZeRO-3, micro-batch 4, full checkpointing, prefetch 2, auto)
// swept over K, K=4 allocates 35.1 GiB of the A100's 40 but needs 42.0 GiB
// on the device: fits true, device_fits false, as run warns and plan's
// "gives:" line says. Each row's figures equal run --format json's for
// its point, and the K=4 row equals plan.csv's first row.
func TestSweepRowsCarryDevicePeakAndMFU(t *testing.T) {
	sets := []string{"--set", "parallelism.zero_stage=3", "--set", "training.micro_batch=4", "--set", "training.grad_accum=1",
		"--set", "training.recompute=full", "--set", "communication.prefetch_depth=1", "--set", "communication.algorithm=auto"}
	code, out, errOut := runMain(t, "", append([]string{"sweep", "llama2-13b-a100-eth", "--grid", "parallelism.k=1,4", "--format", "json"}, sets...)...)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	type row struct {
		Point        map[string]string `json:"point"`
		PeakMemory   int64             `json:"peak_memory_bytes"`
		DevicePeak   int64             `json:"device_peak_bytes"`
		TokensPerSec float64           `json:"tokens_per_s_per_gpu"`
		MFU          *float64          `json:"mfu"`
		Fits         bool              `json:"fits"`
		DeviceFits   *bool             `json:"device_fits"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
	if len(lines) != 2 {
		t.Fatalf("%d rows:\n%s", len(lines), out)
	}
	const gpu = 40 << 30 // A100-40GB
	for i, k := range []string{"1", "4"} {
		var r row
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil || r.Point["parallelism.k"] != k || r.MFU == nil || r.DeviceFits == nil {
			t.Fatalf("row %d: %v: %s", i, err, lines[i])
		}
		code, js, errOut := runMain(t, "", append([]string{"run", "llama2-13b-a100-eth", "--format", "json", "--set", "parallelism.k=" + k}, sets...)...)
		var run struct {
			MFU        float64 `json:"mfu"`
			DevicePeak int64   `json:"device_peak_bytes"`
		}
		if code != 0 || json.Unmarshal([]byte(js), &run) != nil {
			t.Fatalf("run k=%s: exit %d: %s", k, code, errOut)
		}
		if r.DevicePeak != run.DevicePeak || *r.MFU != math.Round(run.MFU*1e5)/1e5 || r.DevicePeak <= r.PeakMemory {
			t.Errorf("k=%s: device peak %d, mfu %v; run's %d, %v (allocated %d)", k, r.DevicePeak, *r.MFU, run.DevicePeak, run.MFU, r.PeakMemory)
		}
		if want := r.DevicePeak <= gpu; !r.Fits || *r.DeviceFits != want {
			t.Errorf("k=%s: fits %v, device_fits %v; want true, %v (device %d of %d)", k, r.Fits, *r.DeviceFits, want, r.DevicePeak, gpu)
		}
		if k == "4" && (*r.DeviceFits || r.PeakMemory > gpu) {
			t.Errorf("k=4 no longer fits by its allocated peak but not on the device (%d, %d of %d): the case lost its point", r.PeakMemory, r.DevicePeak, gpu)
		}
		if k != "4" {
			continue
		}
		dir := t.TempDir()
		if code, _, errOut := runMain(t, "", "plan", "llama2-13b-a100-eth", "-o", dir); code != 0 {
			t.Fatalf("plan: exit %d: %s", code, errOut)
		}
		data, err := os.ReadFile(filepath.Join(dir, "plan.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("plan.csv: %v", err)
		}
		// The same configuration's row of plan.csv (ranked after the rows
		// with room: its device peak is over the GPU).
		at := slices.IndexFunc(recs, func(rec []string) bool {
			col := func(name string) string { return rec[slices.Index(recs[0], name)] }
			return col("k") == "4" && col("recompute") == "full" && col("micro_batch") == "4" && col("prefetch_depth") == "1"
		})
		if at < 1 {
			t.Fatalf("plan.csv has no k=4, micro-batch 4, full, prefetch 1 row")
		}
		col := func(name string) string { return recs[at][slices.Index(recs[0], name)] }
		if col("device_peak_bytes") != strconv.FormatInt(r.DevicePeak, 10) || col("mfu") != strconv.FormatFloat(*r.MFU, 'f', 5, 64) ||
			col("tokens_per_s_per_gpu") != strconv.FormatFloat(r.TokensPerSec, 'f', 3, 64) {
			t.Errorf("plan.csv's k=4 row %q differs from the sweep's %s", recs[at], lines[i])
		}
	}
}

// TestSweepMetaFromItsOwnLoads: the meta line sweep writes from the
// scenarios its input checks loaded (the file by itself, else its first
// point) is sweep.NewMeta of sweep.Resolve's scenario, byte for byte: for
// a file that reads a config.json and a calibration file, and for one only
// its grid completes.
func TestSweepMetaFromItsOwnLoads(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile("../../scenarios/testdata/hf/llama-2-7b/config.json")
	if err != nil {
		t.Fatal(err)
	}
	cal, err := os.ReadFile("../../docs/examples/calibration-h100-ndr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"config.json": string(cfg), "cal.yaml": string(cal),
		"hf.yaml": "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16, zero_stage: 3}\n" +
			"model: {hf_config: config.json, seq_len: 4096}\ncommunication: {calibration: cal.yaml}\n",
		"grid.yaml": "version: 1\nname: x\ncluster: {nodes: two, gpus_per_node: 2, gpu: H100-80GB}\nmodel: {preset: llama3.1-8b}\nparallelism: {dp: 4, zero_stage: 3}\ntraining: {micro_batch: -1}\n"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		file  string
		grids []string
	}{
		{"hf.yaml", []string{"parallelism.k=1,2"}},
		{"grid.yaml", []string{"cluster.nodes=2", "training.micro_batch=1"}},
	} {
		path := filepath.Join(dir, tc.file)
		args := []string{"sweep", path, "--set", "training.steps=2", "-j", "1"}
		var grids []sweep.Grid
		for _, g := range tc.grids {
			args = append(args, "--grid", g)
			gr, err := sweep.ParseGrid(g)
			if err != nil {
				t.Fatal(err)
			}
			grids = append(grids, gr)
		}
		out, errOut, code := sweepCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d, %s", tc.file, code, errOut)
		}
		sp, err := sweep.NewSpace(grids)
		if err != nil {
			t.Fatal(err)
		}
		src := sweep.Source{File: path, Data: []byte(files[tc.file]), Sets: []string{"training.steps=2"}}
		s := sweep.Resolve(src, sp)
		if s == nil {
			t.Fatalf("%s: sweep.Resolve loaded nothing", tc.file)
		}
		meta := sweep.NewMeta(src, sp, s)
		meta.Zerosim = reports.ReadBuild().Sweep()
		want := meta.Line(sweep.CSV)
		if got, _, _ := strings.Cut(out, "\n"); got+"\n" != want {
			t.Errorf("%s: meta line\n%s\nwant\n%s", tc.file, got, want)
		}
	}
}

// TestSweepResumeNamesTheEditedFile (QA11 #8): --resume after an edit of
// the config.json the scenario reads is refused, exit 2, the file
// untouched, and the refusal names config.json (model.hf_config) instead
// of three possible causes, and says to restore it or write a new --out.
func TestSweepResumeNamesTheEditedFile(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile("../../scenarios/testdata/hf/llama-2-7b/config.json")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", string(cfg))
	write("s.yaml", "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 16}\nmodel: {hf_config: config.json, seq_len: 4096}\n")
	out := filepath.Join(dir, "o.csv")
	args := []string{"sweep", filepath.Join(dir, "s.yaml"), "--grid", "parallelism.zero_stage=1,2,3", "--out", out}
	if _, e, code := sweepCLI(t, args...); code != 0 {
		t.Fatalf("sweep: exit %d, %s", code, e)
	}
	full, _ := os.ReadFile(out)
	cut := full[:bytes.LastIndexByte(full[:len(full)-1], '\n')+1] // the last row dropped
	if err := os.WriteFile(out, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	write("config.json", strings.Replace(string(cfg), `"num_hidden_layers": 32`, `"num_hidden_layers": 16`, 1))
	stdout, e, code := sweepCLI(t, append(args, "--resume")...)
	// The fix restores the file, or starts a new output: passing the same
	// flags again cannot help (QA14 finding 10).
	want := ": config.json (model.hf_config) differs); restore config.json (model.hf_config) as the output read it, or write to a new --out file\n"
	if code != 2 || stdout != "" || !strings.HasPrefix(e, "zerosim: --resume "+out+": the existing output comes from another sweep (scenario sha256 ") || !strings.HasSuffix(e, want) || strings.Count(e, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line ending %q", code, stdout, e, want)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(after, cut) {
		t.Error("the refused resume changed the file")
	}
}

// TestSweepPrintsPointWarnings: a load warning only some points give (a
// grid GPU without the file's NVLink) is printed on stderr once, after the
// rows, naming those points and the grid value they share; nothing of it
// is in the rows; the file's own warnings are printed once, not again per
// point; values named by a --grid are said to be the --grid's.
func TestSweepPrintsPointWarnings(t *testing.T) {
	const link = "default.yaml:16:5 (built-in example: zerosim scenarios show default): intra preset NVLink4 (450.00 GB/s per direction) is not the MI300X's interconnect: it has xGMI (448.00 GB/s); use preset: xGMI (--set cluster.intra.preset=xGMI), or intra.bandwidth: for links of your own\n"
	for _, format := range []string{"csv", "json"} {
		out, errOut, code := sweepCLI(t, "sweep", "--grid", "cluster.gpu=H100-80GB,MI300X", "--grid", "parallelism.k=1,2", "--format", format)
		if code != 0 || errOut != "zerosim: warning: points 2–3 (cluster.gpu=MI300X): "+link {
			t.Errorf("%s: exit %d, stderr %q", format, code, errOut)
		}
		// The meta line, the CSV header and 4 rows.
		if strings.Contains(out, "warning") || strings.Contains(out, "NVLink4") || strings.Count(out, "\n") != 5+btoi(format == "csv") {
			t.Errorf("%s: the rows carry the warning or lack a point:\n%s", format, out)
		}
	}
	_, errOut, code := sweepCLI(t, "sweep", "--set", "cluster.gpu=MI300X", "--grid", "parallelism.k=1,2,4")
	if code != 0 || errOut != "zerosim: warning: "+link {
		t.Errorf("the file's warning: exit %d, stderr %q, want it once, without points", code, errOut)
	}
	_, errOut, code = sweepCLI(t, "sweep", "--grid", "parallelism.k=1,2", "--grid", "cluster.gpu_memory=80GB,81559MiB", "-j", "2")
	want := "zerosim: warning: points 0, 2 (cluster.gpu_memory=80GB): default.yaml: --grid cluster.gpu_memory=80GB: gpu_memory 80GB is 74.51 GiB"
	if code != 0 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("a --grid value's warning: exit %d, stderr %q, want one line starting %q", code, errOut, want)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Invalid points are counted on stderr whether or not it is a terminal
// (qa21 LOW 5: `sweep ... > out.csv` exited 0 with nothing on stderr and a
// row of zeros); a sweep without one prints nothing there on a pipe.
func TestSweepInvalidCountOnPipe(t *testing.T) {
	for _, c := range []struct{ ks, want string }{
		{"parallelism.k=1,3", "zerosim: sweep: 2 points (shard 0/1), 1 invalid\n"},
		{"parallelism.k=1,2", ""},
	} {
		out, errOut, code := sweepCLI(t, "sweep", "seed002-tiny", "--set", "parallelism.dp=4", "--set", "cluster.nodes=2", "--grid", c.ks)
		if code != 0 || errOut != c.want || strings.Count(out, "\n") != 4 {
			t.Errorf("--grid %s: exit %d, stderr %q, want %q; stdout\n%s", c.ks, code, errOut, c.want, out)
		}
	}
}
