package collectives

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
)

// unseenLog is a published nccl-tests log that came to the project after
// the model was written (testdata/nccl-tests; each file's "##" lines give
// its source, hardware, NCCL version and how the cluster is described):
// nothing is tuned to it. The cluster is described as a user would, with
// the default example and the --set equivalents of `zerosim collective`'s
// flags (sets), at the NCCL release the log states (unseenRelease: the
// --nccl-version equivalent), so the figures are those the CLI prints; held
// is the signed error of each row, in %, as the model reaches it: a row
// may get better, never worse (by more than 0.5 points).
type unseenLog struct {
	file  string
	class fabricClass
	// what the scenario cannot say about the cluster (the stand-ins used).
	gap   string
	sets  []string
	algo  Algo // NCCL_ALGO of the run; Auto when none
	gpt   int  // nccl-tests -g of the run
	held  []float64
	label string // GPUs, fabric and NCCL version, for the table
	// excerpt: the file keeps the rows a post quoted, not its whole run
	// (no "# Avg bus bandwidth" line: Log.Unfinished).
	excerpt bool
}

// isUnseen reports whether file is one of unseenLogs.
func isUnseen(file string) bool {
	return slices.ContainsFunc(unseenLogs, func(u unseenLog) bool { return u.file == file })
}

// isExcerpt reports whether file is an unseen log cut from a post.
func isExcerpt(file string) bool {
	return slices.ContainsFunc(unseenLogs, func(u unseenLog) bool { return u.file == file && u.excerpt })
}

// fabricClass sorts the unseen logs by how well a scenario can describe
// the cluster they ran on.
type fabricClass int

const (
	// ibGDR: InfiniBand or RoCE through NCCL's own IB transport, with
	// GPUDirect RDMA, and a GPU preset of the same NVLink (or no network).
	ibGDR fabricClass = iota
	// undescribed: a network behind a plugin or a GPU system no preset or
	// link describes (Slingshot through aws-ofi-nccl, GCP gIB, DGX Spark,
	// a PCIe pair on an NVLink bridge).
	undescribed
)

func (c fabricClass) String() string {
	return [...]string{"IB/RoCE with GPUDirect RDMA, or one NVSwitch node", "a fabric or system the scenario cannot describe"}[c]
}

var unseenLogs = []unseenLog{
	{file: "a100_2node_allreduce_oci_bmgpu48_10gib.log",
		held: []float64{8.8}, class: ibGDR, label: "2 × 8 A100-40GB, OCI RoCE 16 × 100 Gb/s, NCCL 2.21.5",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=A100-40GB", "cluster.intra.preset=NVLink3", "cluster.inter.preset=RoCE200", "cluster.host.cpu=amd"},
		gap:  "none (two 100 Gb/s ports merge into one 200 Gb/s NIC per GPU)"},
	{file: "h100_2node_1gpu_allreduce_roce_tree.log", excerpt: true,
		held: []float64{2.8, 17.2, 16.0, 30.8, 30.3}, class: ibGDR, label: "2 × 1 H100, RoCE 400 Gb/s, NCCL_ALGO=Tree",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=1", "cluster.inter.preset=RoCE400"}, algo: Tree,
		gap: "none"},
	{file: "h20_2node_allreduce_nvlstree_small.log", excerpt: true,
		held: []float64{11.5, 11.3, 14.6, 14.3, 14.5, 11.0, 13.6, 13.8}, class: ibGDR, label: "2 × 8 H20, IB NDR, NCCL 2.21.5, NCCL_ALGO=NVLSTree",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8"}, algo: NVLSTree,
		gap: "no H20 preset: H100-80GB (same NVLink4/NVSwitch)"},
	{file: "h100_16node_allreduce_small.log", excerpt: true,
		held: []float64{-23.3, -11.2, -11.2, -11.5, -11.5, -24.5, -18.0, -25.0, -27.8, -27.2}, class: ibGDR, label: "16 × 8 H100, NCCL 2.20.5",
		sets: []string{"cluster.nodes=16", "cluster.gpus_per_node=8"},
		gap:  "GPUs per node and NIC not stated: 8 and NDR assumed"},
	{file: "h20_1node_allreduce_small.log", excerpt: true,
		held: []float64{20.1, 20.1, 19.8, -39.1, 3.5, -3.2, -4.4, -7.7, -8.3, -8.9, -9.8}, class: ibGDR, label: "1 × 8 H20, NVSwitch",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8"},
		gap:  "no H20 preset: H100-80GB (same NVLink4/NVSwitch)"},
	{file: "h100_2node_allreduce_oci_bmgpuh1008_roce.log",
		held: []float64{-8.5, -9.8, -10.4, -10.8, -11.1}, class: ibGDR, label: "2 × 8 H100, OCI RoCE 16 × 200 Gb/s, NCCL 2.21.5",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.inter.preset=RoCE400"},
		gap:  "none (two 200 Gb/s ports merge into one 400 Gb/s NIC per GPU)"},
	{file: "h200_2node_allreduce_oci_bmgpuh2008_roce.log",
		held: []float64{-6.1, -6.8, -6.7, -6.9, -6.9}, class: ibGDR, label: "2 × 8 H200, OCI RoCE 8 × 400 Gb/s, NCCL 2.27.5",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=H200", "cluster.inter.preset=RoCE400"},
		gap:  "none"},
	{file: "h200_2node_allreduce_nebius_ib.log",
		held: []float64{-8.5, -8.3, -8.4, -9.2, -8.5}, class: ibGDR, label: "2 × 8 H200, Nebius InfiniBand, NCCL 2.23.4 (image tag)",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=H200"},
		gap:  "NIC speed not stated: NDR assumed"},
	{file: "b300_2node_allreduce_oci_roce.log",
		held: []float64{-12.2, -13.0}, class: ibGDR, label: "2 × 8 B300, OCI RoCE 16 × 400 Gb/s, NCCL 2.28.9",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=8", "cluster.gpu=B300", "cluster.intra.preset=NVLink5", "cluster.inter.preset=RoCE400", "cluster.inter.bandwidth=800Gbps"},
		gap:  "none (two 400 Gb/s ports merge into one 800 Gb/s NIC per GPU)"},
	{file: "b300_1node_allreduce_oci.log",
		held: []float64{1.2}, class: ibGDR, label: "1 × 8 B300, NVSwitch, NCCL 2.28.9, -g 8",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8", "cluster.gpu=B300", "cluster.intra.preset=NVLink5"}, gpt: 8,
		gap: "none"},
	{file: "a100_1node_allreduce_oci_ubuntu_10gib.log",
		held: []float64{-3.2}, class: ibGDR, label: "1 × 8 A100-40GB, NVSwitch, NCCL 2.26.5",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=8", "cluster.gpu=A100-40GB", "cluster.intra.preset=NVLink3", "cluster.host.cpu=amd"},
		gap:  "none"},
	{file: "gh200_2node_allreduce_alps_slingshot.log",
		held: []float64{-76.9, -64.6, -53.6, -28.1, -10.8, -5.8, -4.5, -3.9}, class: undescribed, label: "2 × 1 GH200, Slingshot-11 200 Gb/s (aws-ofi-nccl), NCCL 2.30.7",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=1", "cluster.gpu=GH200-96GB", "cluster.inter.bandwidth=200Gbps"},
		gap:  "no preset of its 120GB variant, no Slingshot link: GH200-96GB (Hopper, Grace host), 200 Gb/s at NDR's latency"},
	{file: "gb300_2node_allgather_gcp_a4xmax.log",
		held: []float64{-46.0, -44.9, -45.1, -47.5, -49.6, -49.6, -45.0, -82.2, -48.7, -44.7, -37.0, -29.8, -57.3, -52.8, -21.9, -11.6, -8.8, -10.9, -10.6, -8.5, -7.1, -6.6, -6.9}, class: undescribed, label: "2 × 4 GB300 across NVLink domains, GCP gIB, NCCL 2.28.9",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=4", "cluster.gpu=GB300", "cluster.intra.preset=NVLink5", "cluster.inter.preset=XDR"},
		gap:  "no gIB link, NIC speed not stated: XDR assumed"},
	{file: "gb10_2node_allreduce_dgxspark_roce.log", excerpt: true,
		held: []float64{-45.1, -37.0, -46.1, -64.6}, class: undescribed, label: "2 × 1 GB10 (DGX Spark), RoCE 200 Gb/s, NCCL 2.31.2",
		sets: []string{"cluster.nodes=2", "cluster.gpus_per_node=1", "cluster.gpu=B200", "cluster.intra.preset=NVLink5", "cluster.inter.preset=RoCE200"},
		gap:  "no GB10 preset: B200"},
	{file: "h100pcie_1node_2gpu_allreduce_nvlbridge.log", excerpt: true,
		held: []float64{-53.2, -53.0, -52.9}, class: undescribed, label: "1 × 2 H100 PCIe, NVLink bridge, -g 2",
		sets: []string{"cluster.nodes=1", "cluster.gpus_per_node=2", "cluster.gpu=H100-PCIe", "cluster.intra.preset=NVLink4", "cluster.intra.bandwidth=300GB/s"}, gpt: 2,
		gap: "no bridge preset: H100-PCIe over NVLink4 at 300 GB/s"},
}

// statedNCCL is the NCCL version an unseen log's "## software:" line
// states ("NCCL 2.21.5", "nccl-library=22809 (NCCL 2.28.9)"), "" when it
// states none.
func statedNCCL(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "nccl-tests", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if m := statedNCCLRe.FindStringSubmatch(l); m != nil && strings.HasPrefix(l, "## software:") {
			return m[1]
		}
	}
	return ""
}

var statedNCCLRe = regexp.MustCompile(`NCCL (\d+\.\d+\.\d+)`)

// unseenRelease is the NCCL release an unseen log is timed at: the one its
// "##" lines state where the tuner has it (scenarios.NCCLReleases),
// the default otherwise; why says which, for the table.
func unseenRelease(t *testing.T, file string) (release, why string) {
	v := statedNCCL(t, file)
	if v == "" {
		return DefaultNCCL, DefaultNCCL + ", the default (the log states no version)"
	}
	r, err := scenarios.ParseNCCLVersion(v)
	if err != nil {
		return DefaultNCCL, fmt.Sprintf("%s, the default (the log's %s is outside %s–%s)", DefaultNCCL, v, scenarios.NCCLReleases[0], scenarios.NCCLReleases[len(scenarios.NCCLReleases)-1])
	}
	return r, fmt.Sprintf("%s (the log's %s)", r, v)
}

// unseenRow is one row of an unseen log against the model.
type unseenRow struct {
	size         units.Bytes
	measured, us float64 // µs
	err          float64 // predicted/measured − 1
	algo         string  // algorithm/protocol the model ran
}

// unseenRows times every row of ul's log as `zerosim collective` would,
// at the NCCL release the log states (unseenRelease, as --nccl-version).
func unseenRows(t *testing.T, ul unseenLog) []unseenRow {
	t.Helper()
	r, _ := unseenRelease(t, ul.file)
	return unseenRowsAt(t, ul, r)
}

// unseenRowsAt is unseenRows under NCCL release r.
func unseenRowsAt(t *testing.T, ul unseenLog, r string) []unseenRow {
	t.Helper()
	def, ok := scenarios.Example("default")
	if !ok {
		t.Fatal("no default example")
	}
	// dp fills the cluster, as `collective --nodes --gpus-per-node` sets it.
	sets := append([]string{"parallelism.dp=auto", "communication.nccl_version=" + r}, ul.sets...)
	s, err := scenarios.Load("default.yaml", def, sets)
	if err != nil {
		t.Fatalf("%s: %v", ul.file, err)
	}
	c := &s.Cluster
	lg := readShared(t, sharedLog{file: ul.file})
	m := NewModel(HardwareOf(s))
	m.GPUsPerThread = max(ul.gpt, 1)
	sh := Shape{Ranks: c.Nodes * c.GPUsPerNode, Nodes: c.Nodes}
	var rows []unseenRow
	for _, r := range lg.Rows {
		ch, err := m.Time(lg.Op, sh, ul.algo, r.Size)
		if err != nil {
			t.Fatalf("%s %d B: %v", ul.file, r.Size, err)
		}
		us := float64(ch.Time) / 1e6
		rows = append(rows, unseenRow{r.Size, r.Time, us, us/r.Time - 1, ch.Algo.String() + "/" + ch.Proto.String()})
	}
	return rows
}

// TestUnseenAccuracy holds every row of the unseen logs at the error the
// model reached on it when the log was added (held): the table of
// docs/calibration.md shows them all, worst case included, and a change
// that makes any row worse fails here.
func TestUnseenAccuracy(t *testing.T) {
	for _, ul := range unseenLogs {
		rows := unseenRows(t, ul)
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%.1f", 100*r.err))
		}
		t.Logf("%s: %s", ul.file, strings.Join(got, ", "))
		if len(rows) != len(ul.held) {
			t.Errorf("%s: %d rows, %d held", ul.file, len(rows), len(ul.held))
			continue
		}
		for i, r := range rows {
			if math.Abs(100*r.err) > math.Abs(ul.held[i])+0.5 {
				t.Errorf("%s %v: error %+.1f %%, held at %+.1f %% (measured %.2f µs, modelled %.2f, %s)", ul.file, r.size, 100*r.err, ul.held[i], r.measured, r.us, r.algo)
			}
		}
	}
}

// unseenSummary is the |error| median and max of rows within [lo, hi].
func unseenSummary(rows []unseenRow, lo, hi units.Bytes) (n int, median, worst float64, at unseenRow) {
	var errs []float64
	for _, r := range rows {
		if r.size < lo || r.size > hi {
			continue
		}
		errs = append(errs, r.err)
		if math.Abs(r.err) >= math.Abs(at.err) {
			at = r
		}
	}
	median, worst = Summary(errs)
	return len(errs), median, worst, at
}

// unseenRanges are the size ranges the table summarizes: NCCL's latency
// regime, the range the shared logs' figures cover (1 MiB–1 GiB), the
// messages above it, and the large messages of a ZeRO step's shards and
// buckets (from 64 MiB, overlapping the two before it).
var unseenRanges = []struct {
	name   string
	lo, hi units.Bytes
}{
	{"below 1 MiB", 0, units.MiB - 1},
	{"1 MiB–1 GiB", units.MiB, units.GiB},
	{"above 1 GiB", units.GiB + 1, math.MaxInt64},
	{"from 64 MiB", 64 * units.MiB, math.MaxInt64},
}

// unseenTable is docs/calibration.md's table of the unseen logs: one line
// per log, then the summary per class and size range.
func unseenTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| log | cluster | described as | NCCL timed | model ran |")
	for _, r := range unseenRanges {
		b.WriteString(" " + r.name + ": rows, median, max |")
	}
	b.WriteString(" worst row |\n|---|---|---|---|---|---|---|---|---|---|\n")
	all := map[fabricClass][]unseenRow{}
	logs := map[fabricClass]int{}
	for _, ul := range unseenLogs {
		rows := unseenRows(t, ul)
		all[ul.class] = append(all[ul.class], rows...)
		logs[ul.class]++
		var algos []string
		for _, r := range rows {
			if !slices.Contains(algos, r.algo) {
				algos = append(algos, r.algo)
			}
		}
		_, why := unseenRelease(t, ul.file)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |", ul.file, ul.label, ul.gap, why, strings.Join(algos, ", "))
		for _, rg := range unseenRanges {
			if n, md, mx, _ := unseenSummary(rows, rg.lo, rg.hi); n > 0 {
				fmt.Fprintf(&b, " %d, %.1f %%, %.1f %% |", n, 100*md, 100*mx)
			} else {
				b.WriteString(" – |")
			}
		}
		_, _, _, w := unseenSummary(rows, 0, math.MaxInt64)
		fmt.Fprintf(&b, " %v: %.2f µs measured, %.2f modelled (%+.1f %%) |\n", w.size, w.measured, w.us, 100*w.err)
	}
	b.WriteString("\n")
	every := append(slices.Clone(all[ibGDR]), all[undescribed]...)
	for _, c := range []struct {
		name string
		logs int
		rows []unseenRow
	}{
		{strings.ToUpper(ibGDR.String()[:1]) + ibGDR.String()[1:], logs[ibGDR], all[ibGDR]},
		{strings.ToUpper(undescribed.String()[:1]) + undescribed.String()[1:], logs[undescribed], all[undescribed]},
		{"All", len(unseenLogs), every},
	} {
		fmt.Fprintf(&b, "- %s (%d logs):", c.name, c.logs)
		for i, rg := range unseenRanges {
			if i > 0 {
				b.WriteString(";")
			}
			n, md, mx, w := unseenSummary(c.rows, rg.lo, rg.hi)
			if n == 0 {
				fmt.Fprintf(&b, " %s no rows", rg.name)
				continue
			}
			fmt.Fprintf(&b, " %s %s, median %.1f %%, max %.1f %% (%v, %+.1f %%)", rg.name, rowCount(n), 100*md, 100*mx, w.size, 100*w.err)
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// rowCount is "1 row" or "n rows".
func rowCount(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// unseenQuote is what the README and docs/calibration.md say of the
// unseen logs, from the rows as TestUnseenAccuracy times them.
func unseenQuote(t *testing.T) string {
	var every []unseenRow
	for _, ul := range unseenLogs {
		every = append(every, unseenRows(t, ul)...)
	}
	fig := func(lo, hi units.Bytes) (float64, float64) {
		_, md, mx, _ := unseenSummary(every, lo, hi)
		return 100 * md, 100 * mx
	}
	mdMid, mxMid := fig(units.MiB, units.GiB)
	mdSmall, mxSmall := fig(0, units.MiB-1)
	mdBig, mxBig := fig(64*units.MiB, math.MaxInt64)
	return fmt.Sprintf("on %d published logs it was not built on, the rows from 1 MiB to 1 GiB are off by %.1f %% at the median and %.1f %% at worst, the rows below 1 MiB by %.1f %% and %.1f %%, and the rows from 64 MiB on by %.1f %% and %.1f %%",
		len(unseenLogs), mdMid, mxMid, mdSmall, mxSmall, mdBig, mxBig)
}

// unseenScopeQuote is what the README and docs/calibration.md say of the
// large messages on the fabrics a scenario describes (class ibGDR, from 64
// MiB): how many rows there are, so the claim names what it rests on.
func unseenScopeQuote(t *testing.T) string {
	var rows []unseenRow
	for _, ul := range unseenLogs {
		if ul.class == ibGDR {
			rows = append(rows, unseenRows(t, ul)...)
		}
	}
	n, md, mx, _ := unseenSummary(rows, 64*units.MiB, math.MaxInt64)
	off := fmt.Sprintf("off by %.1f %%", 100*mx)
	if n > 1 {
		off = fmt.Sprintf("off by %.1f %% at the median and %.1f %% at worst", 100*md, 100*mx)
	}
	return fmt.Sprintf("on InfiniBand or RoCE with GPUDirect RDMA the published logs it was not built on have %s from 64 MiB, %s", rowCount(n), off)
}

// nvlsTreeReleaseQuote is what docs/collectives.md says of the H20 NVLS
// tree log (NCCL 2.21.5) at its release and at the default: the least and
// largest error of its rows under each.
func nvlsTreeReleaseQuote(t *testing.T) string {
	i := slices.IndexFunc(unseenLogs, func(u unseenLog) bool { return u.file == "h20_2node_allreduce_nvlstree_small.log" })
	span := func(rows []unseenRow) (lo, hi float64) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, r := range rows {
			lo, hi = math.Min(lo, 100*r.err), math.Max(hi, 100*r.err)
		}
		return lo, hi
	}
	lo, hi := span(unseenRows(t, unseenLogs[i]))
	dlo, dhi := span(unseenRowsAt(t, unseenLogs[i], DefaultNCCL))
	return fmt.Sprintf("is %.1f–%.1f %% above the 4–512 B rows, the default's (20.9 µs a hop, from 2.28.9) %.1f–%.1f %%", lo, hi, dlo, dhi)
}

// TestUnseenDocFigures keeps the figures the README and the docs quote of
// the unseen logs equal to the model's.
func TestUnseenDocFigures(t *testing.T) {
	q, scope := unseenQuote(t), unseenScopeQuote(t)
	for _, path := range []string{"../README.md", "../docs/calibration.md"} {
		golden.CheckQuotes(t, path, "go test ./collectives -run TestUnseenAccuracy -v", q, scope)
	}
	golden.CheckQuotes(t, "../docs/collectives.md", "go test ./collectives -run TestUnseenAccuracy -v", nvlsTreeReleaseQuote(t))
}
