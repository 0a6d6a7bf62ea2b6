package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/scenarios"
)

// Expected values are DeepSpeed's formulas evaluated by hand (Python
// arithmetic: int products exact, int·float via the nearest double, int/int
// true division, int() truncates). Sources, deepspeedai/DeepSpeed at
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641:
//
//	Z2 = deepspeed/runtime/zero/stage_1_and_2.py:3087-3098
//	     offload:  gpu 2P;             host P·max(4·G, 16)·1.5
//	     none:     gpu 2P + int(18P/G); host P·4·gpn·1.5
//	Z3 = deepspeed/runtime/zero/stage3.py:3754-3780, gf = 1/nodes, LLM = 4L
//	     opt+param, zi=1: gpu LLM;               host P·18·gf·1.5
//	     opt+param, zi=0: gpu LLM;               host P·max(4·gpn, 18·gf)·1.5
//	     opt,       zi=1: gpu LLM + int(2P/G);   host P·16·gf·1.5
//	     opt,       zi=0: gpu LLM + int(2P/G);   host P·max(4·gpn, 16·gf)·1.5
//	     none,      zi=1: gpu LLM + int(18P/G);  host L·4·gpn·1.5
//	     none,      zi=0: gpu LLM + int(18P/G);  host P·4·gpn·1.5
type dsRow struct{ host, gpu int64 }

func TestDeepSpeedZero2Offload(t *testing.T) {
	for _, tc := range []struct {
		name       string
		P          int64
		gpn, nodes int
		want       [2]dsRow // offload_optimizer=cpu, none
		peak       [2]bool
	}{
		// The 7B case of TestEstimators: P = 7e9, 1 node × 8 GPUs, G = 8.
		// offload: gpu 2·7e9 = 14e9; host 7e9·max(32, 16)·1.5 = 336e9.
		// none:    gpu 14e9 + int(126e9/8) = 14e9 + 15.75e9 = 29.75e9;
		//          host 7e9·4·8·1.5 = 336e9.
		{"7B 1x8", 7e9, 8, 1, [2]dsRow{{336e9, 14e9}, {336e9, 29_750_000_000}}, [2]bool{true, true}},
		// Llama-2-7B, P = 6,738,415,616 on 4 × 8 (G = 32):
		// offload: gpu 13,476,831,232; host P·max(128, 16)·1.5 = P·192 = 1,293,775,798,272.
		// none:    gpu 13,476,831,232 + int(121,291,481,088/32 = 3,790,358,784) = 17,267,190,016;
		//          host P·48 = 323,443,949,568.
		{"llama2-7b 4x8", 6_738_415_616, 8, 4, [2]dsRow{{1_293_775_798_272, 13_476_831_232}, {323_443_949_568, 17_267_190_016}}, [2]bool{true, true}},
		// P = 1,000,000,007 on 3 × 8 (G = 24):
		// offload: host P·96·1.5 = 144,000,001,008; gpu 2,000,000,014.
		// none:    gpu 2,000,000,014 + int(18,000,000,126/24 = 750,000,005.25) = 2,750,000,019;
		//          host P·32·1.5 = 48,000,000,336.
		{"1e9+7 3x8", 1_000_000_007, 8, 3, [2]dsRow{{144_000_001_008, 2_000_000_014}, {48_000_000_336, 2_750_000_019}}, [2]bool{true, true}},
		// One GPU: max(4, 16) = 16 is the steady-state term.
		// offload: host 123,456,789·16·1.5 = 2,962,962,936; gpu 246,913,578.
		// none:    gpu 246,913,578 + 2,222,222,202 = 2,469,135,780; host P·6 = 740,740,734.
		{"123456789 1x1", 123_456_789, 1, 1, [2]dsRow{{2_962_962_936, 246_913_578}, {740_740_734, 2_469_135_780}}, [2]bool{false, true}},
		// P = 2^53 + 1 on 3 × 2 (G = 6), where Python's floats round:
		// offload: P·max(24, 16) = 216,172,782,113,783,832 is exact, its
		//   nearest double 216,172,782,113,783,840 (ulp 32), ·1.5 =
		//   324,259,173,170,675,760 rounds to 324,259,173,170,675,776 (ulp 64).
		// none: 18P/6 = 27,021,597,764,222,979 rounds to …980 (ulp 4):
		//   gpu 18,014,398,509,481,986 + 27,021,597,764,222,980 = 45,035,996,273,704,966;
		//   host P·8 → 72,057,594,037,927,944 → double …936, ·1.5 = 108,086,391,056,891,904.
		{"2^53+1 3x2", 1<<53 + 1, 2, 3, [2]dsRow{{324_259_173_170_675_776, 18_014_398_509_481_986}, {108_086_391_056_891_904, 45_035_996_273_704_966}}, [2]bool{true, true}},
	} {
		rows, err := DeepSpeedZero2Offload(tc.P, tc.gpn, tc.nodes, DeepSpeedBufferFactor)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows, want 2", tc.name, len(rows))
		}
		for i, r := range rows {
			if got := (dsRow{r.HostPerNode, r.GPU}); got != tc.want[i] || r.StartupPeak != tc.peak[i] {
				t.Errorf("%s %s: host %d gpu %d start-up %v, want %d %d %v", tc.name, r.Options(), got.host, got.gpu, r.StartupPeak, tc.want[i].host, tc.want[i].gpu, tc.peak[i])
			}
		}
		if rows[0].Options() != "offload_optimizer=cpu " || rows[1].Options() != "offload_optimizer=none" {
			t.Errorf("%s: options %q, %q", tc.name, rows[0].Options(), rows[1].Options())
		}
	}
}

func TestDeepSpeedZero3Offload(t *testing.T) {
	for _, tc := range []struct {
		name       string
		P, L       int64
		gpn, nodes int
		want       [6]dsRow // print order: opt+param zi 1/0, opt zi 1/0, none zi 1/0
		peak       [6]bool
	}{
		// The 7B case of TestEstimators: L = 131,072,000, 1 × 8, gf = 1.0,
		// LLM = 524,288,000.
		//  opt+param zi=1: host 7e9·18·1.0·1.5 = 189e9
		//  opt+param zi=0: host 7e9·max(32, 18.0)·1.5 = 336e9
		//  opt zi=1: gpu LLM + int(14e9/8) = 2,274,288,000; host 7e9·16·1.5 = 168e9
		//  opt zi=0: host 7e9·max(32, 16.0)·1.5 = 336e9
		//  none zi=1: gpu LLM + 15.75e9 = 16,274,288,000; host L·4·8·1.5 = 6,291,456,000
		//  none zi=0: host 7e9·4·8·1.5 = 336e9
		{"7B 1x8", 7e9, 131_072_000, 8, 1, [6]dsRow{
			{189e9, 524_288_000}, {336e9, 524_288_000},
			{168e9, 2_274_288_000}, {336e9, 2_274_288_000},
			{6_291_456_000, 16_274_288_000}, {336e9, 16_274_288_000}},
			[6]bool{false, true, false, true, true, true}},
		// Llama-2-70B-sized P = 68,976,648,192, L = 1,048,576,000 on 32 × 8
		// (G = 256, gf = 0.03125, LLM = 4,194,304,000):
		//  opt+param zi=1: P·18 = 1,241,579,667,456 · 0.03125 · 1.5 = 58,199,046,912
		//  opt+param zi=0: max(32, 0.5625) = 32: P·48 = 3,310,879,113,216
		//  opt zi=1: gpu LLM + int(137,953,296,384/256 = 538,880,064) = 4,733,184,064;
		//            host P·16·0.03125·1.5 = 51,732,486,144
		//  opt zi=0: host P·48 = 3,310,879,113,216
		//  none: gpu LLM + int(1,241,579,667,456/256 = 4,849,920,576) = 9,044,224,576;
		//        host zi=1 L·48 = 50,331,648,000, zi=0 P·48
		{"70B 32x8", 68_976_648_192, 1_048_576_000, 8, 32, [6]dsRow{
			{58_199_046_912, 4_194_304_000}, {3_310_879_113_216, 4_194_304_000},
			{51_732_486_144, 4_733_184_064}, {3_310_879_113_216, 4_733_184_064},
			{50_331_648_000, 9_044_224_576}, {3_310_879_113_216, 9_044_224_576}},
			[6]bool{false, true, false, true, true, true}},
		// P = 1,000,000,007, L = 12,345,679 on 3 × 8: gf = 1/3 rounds down
		// to 0.3333333333333333; P·18 = 18,000,000,126 · gf = 6,000,000,042.0
		// (to the double), ·1.5 = 9,000,000,063.
		//  opt zi=1: P·16 = 16,000,000,112 · gf · 1.5 = 8,000,000,055.99… → 8,000,000,055
		//  gpu opt: 49,382,716 + int(2,000,000,014/24 = 83,333,333.9) = 132,716,049
		//  gpu none: 49,382,716 + int(18,000,000,126/24 = 750,000,005.25) = 799,382,721
		//  host none zi=1: L·32·1.5 = 592,592,592; zi=0 P·48 = 48,000,000,336
		{"1e9+7 3x8", 1_000_000_007, 12_345_679, 8, 3, [6]dsRow{
			{9_000_000_063, 49_382_716}, {48_000_000_336, 49_382_716},
			{8_000_000_055, 132_716_049}, {48_000_000_336, 132_716_049},
			{592_592_592, 799_382_721}, {48_000_000_336, 799_382_721}},
			[6]bool{false, true, false, true, true, true}},
		// 4 nodes × 1 GPU, P = 123,456,789, L = 1,000,001, gf = 0.25:
		//  opt+param zi=0: max(4, 18·0.25 = 4.5) = 4.5, the float (steady-state) term:
		//    123,456,789 · 4.5 · 1.5 = 833,333,325.75 → 833,333,325 (= zi=1's P·18·0.25·1.5)
		//  opt zi=0: max(4, 16·0.25 = 4.0) is a tie; Python keeps the first, the
		//    int 4 (start-up term): P·4·1.5 = 740,740,734 (= zi=1's value)
		//  gpu opt: 4,000,004 + int(246,913,578/4 = 61,728,394.5) = 65,728,398
		//  gpu none: 4,000,004 + int(2,222,222,202/4 = 555,555,550.5) = 559,555,554
		//  host none zi=1: 1,000,001·4·1·1.5 = 6,000,006
		{"123456789 4x1", 123_456_789, 1_000_001, 1, 4, [6]dsRow{
			{833_333_325, 4_000_004}, {833_333_325, 4_000_004},
			{740_740_734, 65_728_398}, {740_740_734, 65_728_398},
			{6_000_006, 559_555_554}, {740_740_734, 559_555_554}},
			[6]bool{false, false, false, true, true, true}},
	} {
		rows, err := DeepSpeedZero3Offload(tc.P, tc.L, tc.gpn, tc.nodes, DeepSpeedBufferFactor)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(rows) != 6 {
			t.Fatalf("%s: %d rows, want 6", tc.name, len(rows))
		}
		for i, r := range rows {
			if got := (dsRow{r.HostPerNode, r.GPU}); got != tc.want[i] || r.StartupPeak != tc.peak[i] {
				t.Errorf("%s row %d (%s): host %d gpu %d start-up %v, want %d %d %v", tc.name, i, r.Options(), got.host, got.gpu, r.StartupPeak, tc.want[i].host, tc.want[i].gpu, tc.peak[i])
			}
		}
		if want := "offload_param=cpu , offload_optimizer=cpu , zero_init=1"; rows[0].Options() != want {
			t.Errorf("%s: first row options %q, want %q", tc.name, rows[0].Options(), want)
		}
		if want := "offload_param=none, offload_optimizer=none, zero_init=0"; rows[5].Options() != want {
			t.Errorf("%s: last row options %q, want %q", tc.name, rows[5].Options(), want)
		}
	}
}

// TestDeepSpeedOffloadInEstimate: the deepspeed estimator's report carries
// the _all_cold rows, and their no-offload GPU figure is the report's own.
func TestDeepSpeedOffloadInEstimate(t *testing.T) {
	s3 := bigModel(7e9, 8, 1, 8, 3)
	s3.Model.LargestLayer = 131_072_000
	for _, tc := range []struct {
		stage, rows int
		none        int64
	}{{1, 2, 29_750_000_000}, {2, 2, 29_750_000_000}, {3, 6, 16_274_288_000}} {
		s := bigModel(7e9, 8, 1, 8, tc.stage)
		if tc.stage == 3 {
			s = s3
		}
		r, err := Estimate(s, EstimatorDeepSpeed, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.DeepSpeedOffload) != tc.rows || r.DeepSpeedOffload[tc.rows-1].GPU != tc.none || r.AtRest != tc.none {
			t.Errorf("stage %d: %d rows %+v, at rest %d, want %d rows ending with gpu %d", tc.stage, len(r.DeepSpeedOffload), r.DeepSpeedOffload, r.AtRest, tc.rows, tc.none)
		}
	}
}

func TestDeepSpeedOffloadBadInput(t *testing.T) {
	for _, f := range []func() error{
		func() error { _, err := DeepSpeedZero2Offload(-1, 8, 1, 1.5); return err },
		func() error { _, err := DeepSpeedZero2Offload(1, 0, 1, 1.5); return err },
		func() error { _, err := DeepSpeedZero3Offload(1, 1, 8, 0, 1.5); return err },
		func() error { _, err := DeepSpeedZero3Offload(1, 1, 8, 1, 0); return err },
		func() error { _, err := DeepSpeedZero2Offload(1<<62, 8, 1, 1.5); return err }, // P·4·8 overflows int64
		func() error { _, err := DeepSpeedZero3Offload(1<<62, 1, 8, 1, 1.5); return err },
	} {
		if f() == nil {
			t.Error("bad input accepted")
		}
	}
}

// TestDeepSpeedEstimateFollowsOffload: the deepspeed estimator's figure is
// the one DeepSpeed's function returns for the scenario's offload settings
// (QA2 finding 5: it was always the no-offload row). Expected GPU bytes are
// DeepSpeed's formulas by hand for P = 7e9, L = 131,072,000, G = 8
// (stage_1_and_2.py:3087-3098, stage3.py:3754-3780 at edaa7221267243c7be7fb49c5d5f5c4fb97b4641):
// Z2 none 2P + int(18P/G) = 14e9 + 15.75e9; Z2 cpu_offload 2P;
// Z3 none 4L + int(18P/G); cpu_offload 4L + int(2P/G); with
// cpu_offload_params 4L. DeepSpeed reads cpu_offload_params only under
// cpu_offload, so params offloaded alone give the no-offload row.
func TestDeepSpeedEstimateFollowsOffload(t *testing.T) {
	const cpu, nvme, none = scenarios.OffloadCPU, scenarios.OffloadNVMe, scenarios.OffloadNone
	for _, tc := range []struct {
		stage          int
		optim, params  scenarios.OffloadDevice
		gpu            int64
		comps          int
		noteSubstrings string
	}{
		{1, none, none, 29_750_000_000, 2, "estimate_zero2_model_states_mem_needs"},
		{2, none, none, 29_750_000_000, 2, "estimate_zero2_model_states_mem_needs"},
		{1, cpu, none, 14_000_000_000, 1, "cpu_offload=True"},
		{2, cpu, none, 14_000_000_000, 1, "cpu_offload=True"},
		{2, nvme, none, 14_000_000_000, 1, "offload.optimizer nvme"},
		{3, none, none, 16_274_288_000, 2, "L = 131072000"},
		{3, cpu, none, 2_274_288_000, 2, "cpu_offload=True, cpu_offload_params=False"},
		{3, cpu, cpu, 524_288_000, 1, "cpu_offload=True, cpu_offload_params=True"},
		{3, nvme, nvme, 524_288_000, 1, "offload.params nvme"},
		{3, cpu, nvme, 524_288_000, 1, "cpu_offload_params=True"},
		{3, none, cpu, 16_274_288_000, 2, "only with cpu_offload"},
	} {
		s := bigModel(7e9, 8, 1, 8, tc.stage)
		s.Model.LargestLayer = 131_072_000
		s.Offload = scenarios.Offload{Optimizer: tc.optim, Params: tc.params}
		s.Cluster.GPUMemory = 80 << 30
		name := fmt.Sprintf("stage %d optimizer %s params %s", tc.stage, tc.optim, tc.params)
		r, err := Estimate(s, EstimatorDeepSpeed, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var notes []string
		for _, c := range r.Components {
			notes = append(notes, c.Name+": "+c.Note)
		}
		if r.AtRest != tc.gpu || r.Peak != tc.gpu || len(r.Components) != tc.comps || !r.Fits {
			t.Errorf("%s: at rest %d, peak %d, %d components, fits %v; want %d in %d components", name, r.AtRest, r.Peak, len(r.Components), r.Fits, tc.gpu, tc.comps)
		}
		if all := strings.Join(notes, "; "); !strings.Contains(all, tc.noteSubstrings) {
			t.Errorf("%s: notes %q do not say %q", name, all, tc.noteSubstrings)
		}
		// The figure is one of the _all_cold rows the report carries.
		found := false
		for _, row := range r.DeepSpeedOffload {
			found = found || row.GPU == tc.gpu
		}
		if !found {
			t.Errorf("%s: %d is none of the _all_cold rows %+v", name, tc.gpu, r.DeepSpeedOffload)
		}
	}
}
