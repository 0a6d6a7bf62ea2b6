package main

import (
	htmlpkg "html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAMDReportsSayAMDWords (QA11 #7): the reports of a run on MI300X name
// the HIP context, RCCL's buffers and choice, rocm-smi and the xGMI wire,
// not CUDA, NCCL, nvidia-smi or NVLink: run's verdict, phase table and
// profiler lines, memory's notes, component row ("rccl buffers", final
// read LOW-5: the row said nccl buffers above a line saying RCCL buffers)
// and fit's header. The key memory.nccl_buffers and the JSON and CSV
// component keep their name (a scenario key). The same reports
// on the H100 keep NVIDIA's words (and the goldens in reports/testdata
// their bytes). Only words are held here: the goldens hold the figures.
func TestAMDReportsSayAMDWords(t *testing.T) {
	amd := []string{"--set", "cluster.gpu=MI300X", "--set", "cluster.intra.preset=xGMI"}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"run", []string{"as rocm-smi shows it: allocated, the caching allocator's reserve, the HIP context and RCCL's buffers); allocated peak ", "│ xgmi wire  │ network wire │",
			"(under auto, RCCL's choice at each size)", "wire: xgmi ", " GiB (rocm-smi: + HIP context, RCCL buffers" + cudaContextForHIP + ")"}},
		{"memory", []string{" GiB (+ HIP context, RCCL buffers" + cudaContextForHIP + ")", "│ rccl buffers "}},
		{"fit", []string{"\n# fits and peaks are the replayed step's, as zerosim run --require-fit judges them (the peak with the HIP context and RCCL's buffers within the GPU); "}},
	} {
		code, out, errOut := runMain(t, "", append([]string{tc.cmd}, amd...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.cmd, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s on MI300X: no %q", tc.cmd, w)
			}
		}
		// The one CUDA word an AMD report keeps: where its HIP context's
		// figure comes from (QA24 L3).
		rest := strings.ReplaceAll(out, cudaContextForHIP, "")
		for _, nv := range []string{"CUDA", "NCCL", "nccl buffers", "nvidia-smi", "nvlink", "NVLink"} {
			if strings.Contains(rest, nv) {
				t.Errorf("%s on MI300X says %q", tc.cmd, nv)
			}
		}
		_, h100, _ := runMain(t, "", tc.cmd)
		for _, nv := range []string{"CUDA context", "NCCL's buffers"} {
			if tc.cmd != "memory" && !strings.Contains(h100, nv) {
				t.Errorf("%s on H100: no %q", tc.cmd, nv)
			}
		}
		if tc.cmd == "memory" && !strings.Contains(h100, "│ nccl buffers ") {
			t.Errorf("memory on H100: no nccl buffers row")
		}
	}
}

// cudaContextForHIP is the profiler lines' note on AMD that the HIP
// context is charged CUDA's figure (memory.DefaultCUDAContext): no ROCm
// one was found.
const cudaContextForHIP = "; the HIP context is CUDA's 400 MB, no ROCm figure being found: memory.runtime_context sets yours"

// TestAMDCompareSaysXGMI (QA14 #1): compare on MI300X names the intra-node
// rows and the slow-link section's column "xgmi", as run's phase table
// does; a compare of an H100 with an MI300X names them "intra-node", since
// either vendor's name would misname the other's bytes; the H100's compare
// keeps "nvlink". The JSON rows keep the class key under "classes".
func TestAMDCompareSaysXGMI(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		want, nots []string
	}{
		{[]string{"--set", "cluster.gpu=MI300X", "--set", "cluster.intra.preset=xGMI", "--vary", "parallelism.k=1,2"},
			[]string{"│ step: xgmi total ", "│ backward reduce-scatter: xgmi busiest rank ", "│ network total │ xgmi total │"},
			[]string{"nvlink", "NVLink", "intra-node"}},
		{[]string{"--vary", "cluster.gpu=H100-80GB,MI300X"},
			[]string{"│ step: intra-node total ", "│ post-optimizer all-gather: intra-node busiest rank "},
			[]string{"nvlink", "xgmi"}},
		{[]string{"--vary", "parallelism.k=1,2"},
			[]string{"│ step: nvlink total ", "│ network total │ nvlink total │"},
			[]string{"xgmi", "intra-node"}},
	} {
		code, out, errOut := runMain(t, "", append([]string{"compare"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("compare %v: exit %d: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("compare %v: no %q", tc.args, w)
			}
		}
		for _, n := range tc.nots {
			if strings.Contains(out, n) {
				t.Errorf("compare %v says %q", tc.args, n)
			}
		}
	}
	_, js, _ := runMain(t, "", "compare", "--set", "cluster.gpu=MI300X", "--vary", "parallelism.k=1,2", "--format", "json")
	for _, w := range []string{`"class":"nvlink"`, `"nvlink_total_bytes":`, `"metric":"step: xgmi total"`} {
		if !strings.Contains(strings.ReplaceAll(js, " ", ""), strings.ReplaceAll(w, " ", "")) {
			t.Errorf("compare --format json on MI300X: no %s", w)
		}
	}
}

// TestAMDCollectiveSaysXGMI (QA14 #2): collective on MI300X with the xGMI
// preset names the intra-node link "xgmi" in its title (text and
// nccl-tests formats: the title is zerosim's own comment line, the table
// is nccl-tests', which rccl-tests prints alike) and in its byte columns;
// the CSV keys stay nvlink_bytes (keys, as run's JSON keeps). The H100
// keeps "nvlink".
func TestAMDCollectiveSaysXGMI(t *testing.T) {
	amd := []string{"collective", "--set", "cluster.gpu=MI300X", "--set", "cluster.intra.preset=xGMI", "--op", "allreduce", "--size", "1GiB"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{amd, "on 2 nodes × 8 MI300X, xgmi 448.00 GB/s 500ns, network 50.00 GB/s 2µs"},
		{amd, "│ xgmi wire │ network wire │"},
		{append(append([]string{}, amd...), "--wide"), "│ xgmi B "},
		{append(append([]string{}, amd...), "--format", "nccl-tests"), "# zerosim allreduce (auto: RCCL's cost model, gfx942) over 16 ranks on 2 nodes × 8 MI300X, xgmi 448.00 GB/s 500ns,"},
		{append(append([]string{}, amd...), "--format", "csv"), ",nvlink_bytes,nvlink_bytes_max_per_rank,"},
		{[]string{"collective", "--op", "allreduce", "--size", "1GiB"}, "│ nvlink wire │ network wire │"},
	} {
		code, out, errOut := runMain(t, "", tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v: no %q in\n%s", tc.args, tc.want, out)
		}
		if tc.args[2] == "cluster.gpu=MI300X" && !slices.Contains(tc.args, "csv") && strings.Contains(out, "nvlink") {
			t.Errorf("%v says nvlink:\n%s", tc.args, out)
		}
	}
}

// TestAMDRunFilesSayXGMI (QA14 #3): run -o on MI300X writes a comm plot
// whose legend says "xgmi" and a report.html whose comm caption says
// "RCCL routes over xGMI", with no NVLink or NCCL but the memory
// component "nccl buffers", which names its scenario key
// memory.nccl_buffers and keeps its name as the text tables do. The H100's
// files keep "nvlink" and "NCCL routes over NVLink".
func TestAMDRunFilesSayXGMI(t *testing.T) {
	for _, tc := range []struct {
		sets              []string
		svg, html, notSVG string
	}{
		{[]string{"--set", "cluster.gpu=MI300X", "--set", "cluster.intra.preset=xGMI"}, ">xgmi<", "a byte RCCL routes over xGMI to the GPU", "nvlink"},
		{nil, ">nvlink<", "a byte NCCL routes over NVLink to the GPU", "xgmi"},
	} {
		dir := filepath.Join(t.TempDir(), "o")
		if code, _, errOut := runMain(t, "", append([]string{"run", "-o", dir}, tc.sets...)...); code != 0 {
			t.Fatalf("run %v: exit %d: %s", tc.sets, code, errOut)
		}
		svg, err := os.ReadFile(filepath.Join(dir, "comm.svg"))
		if err != nil {
			t.Fatal(err)
		}
		html, err := os.ReadFile(filepath.Join(dir, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(svg), tc.svg) || strings.Contains(string(svg), tc.notSVG) {
			t.Errorf("run %v: comm.svg has no %q or has %q", tc.sets, tc.svg, tc.notSVG)
		}
		if !strings.Contains(string(html), tc.html) {
			t.Errorf("run %v: report.html has no %q", tc.sets, tc.html)
		}
		if tc.sets == nil {
			continue
		}
		rest := strings.NewReplacer("nccl buffers", "", "nccl_buffers", "", cudaContextForHIP, "", htmlpkg.EscapeString(cudaContextForHIP), "").Replace(string(html))
		for _, nv := range []string{"nvlink", "NVLink", "NCCL", "nccl", "CUDA", "nvidia-smi"} {
			if strings.Contains(rest, nv) {
				t.Errorf("run %v: report.html says %q", tc.sets, nv)
			}
		}
	}
}
