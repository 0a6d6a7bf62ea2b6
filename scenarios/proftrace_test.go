package scenarios

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/units"
)

const us = units.Microsecond

// TestParseProfilerTrace reads the synthetic torch.profiler trace in
// testdata/proftrace (gen_step.py states its sums) and small inline traces.
func TestParseProfilerTrace(t *testing.T) {
	step, err := os.ReadFile("testdata/proftrace/step.json")
	if err != nil {
		t.Fatal(err)
	}
	kernel := func(name string, ts, dur, corr int) string {
		return `{"ph":"X","cat":"kernel","name":"` + name + `","pid":0,"tid":7,"ts":` + itoa(ts) + `,"dur":` + itoa(dur) + `,"args":{"correlation":` + itoa(corr) + `}}`
	}
	for i, c := range []struct {
		name string
		data string
		want TraceKernels
	}{
		// gen_step.py: the median of three steps is ProfilerStep#4.
		// By class: GEMM 1800 + 600·k, attention 1200 + 300·k, other 1100;
		// per block: Block_0 1000/2300, Block_1 800/1300 (forward/backward).
		{"step.json", string(step), TraceKernels{Steps: 3, Step: "ProfilerStep#4", Compute: 5900 * us, Kernels: 11, Passes: true,
			Forward: 1800 * us, Backward: 3600 * us, Optimizer: 500 * us, NCCL: 700 * us,
			GEMM: 3000 * us, Attention: 1800 * us, Other: 1100 * us, GEMMKernels: 4, AttentionKernels: 2, OtherKernels: 5,
			AttentionFamily: KernelFA2, AttentionFamilyTime: 1800 * us,
			Modules: true, Block: "Block", Layers: []TraceLayer{{"Block_0", 1000 * us, 2300 * us}, {"Block_1", 800 * us, 1300 * us}},
			DeviceName: "NVIDIA H100 80GB HBM3", DeviceAt: "step.json:3:23", WorldSize: 16, WorldSizeAt: "step.json:16:22", Devices: 1, Device: "0"}},
		// No ProfilerStep and no launches: the whole trace is one step, NCCL
		// excluded (both kernel names), fractional microseconds kept.
		{"bare", `{"traceEvents":[` + kernel("gemm", 10, 100, 1) + `,` + kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 20, 50, 2) + `,` +
			kernel("ncclDevKernel_AllGather_RING_LL", 30, 25, 3) + `,{"ph":"X","cat":"Kernel","name":"add","pid":0,"tid":7,"ts":200,"dur":0.5}]}`,
			TraceKernels{Step: "the whole trace", Compute: 100500 * units.Nanosecond, Kernels: 2, NCCL: 75 * us,
				GEMM: 100 * us, Other: 500 * units.Nanosecond, GEMMKernels: 1, OtherKernels: 1, Devices: 1, Device: "0"}},
		// QA6 F9: kernels of two GPUs (a merged trace, or -g 8): only the
		// first device's are one rank's step (800 ms was summed for 400).
		{"two devices", `{"traceEvents":[` + kernel("gemm", 10, 100, 1) + `,` + strings.Replace(kernel("gemm", 10, 100, 2), `"pid":0`, `"pid":1`, 1) + `]}`,
			TraceKernels{Step: "the whole trace", Compute: 100 * us, Kernels: 1, GEMM: 100 * us, GEMMKernels: 1, Devices: 2, Device: "0"}},
		// A backward op but no launch events: no split into passes.
		{"no launches", `{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: MmBackward0","pid":1,"tid":2,"ts":0,"dur":500},` +
			kernel("gemm", 10, 100, 1) + `]}`, TraceKernels{Step: "the whole trace", Compute: 100 * us, Kernels: 1, GEMM: 100 * us, GEMMKernels: 1, Devices: 1, Device: "0"}},
		// PyTorch 1.8's categories: Operator, Runtime, Kernel.
		{"old categories", `{"traceEvents":[{"ph":"X","cat":"Operator","name":"ProfilerStep#5","pid":1,"tid":1,"ts":0,"dur":1000},` +
			`{"ph":"X","cat":"Operator","name":"autograd::engine::evaluate_function: MmBackward","pid":1,"tid":2,"ts":100,"dur":50},` +
			`{"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},` +
			`{"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":120,"dur":5,"args":{"correlation":2}},` +
			`{"ph":"X","cat":"Kernel","name":"volta_sgemm_128x64_nn","pid":0,"tid":7,"ts":2000,"dur":40,"args":{"correlation":1}},` +
			`{"ph":"X","cat":"Kernel","name":"volta_sgemm_128x64_nt","pid":0,"tid":7,"ts":2100,"dur":70,"args":{"correlation":2}}]}`,
			TraceKernels{Steps: 1, Step: "ProfilerStep#5", Compute: 110 * us, Kernels: 2, Passes: true, Forward: 40 * us, Backward: 70 * us,
				GEMM: 110 * us, GEMMKernels: 2, Devices: 1, Device: "0"}},
	} {
		got, err := ParseProfilerTrace(c.name, []byte(c.data))
		if err != nil {
			t.Errorf("%d %s: %v", i, c.name, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%d %s:\n got %+v\nwant %+v", i, c.name, *got, c.want)
		}
	}
}

func itoa(n int) string { return units.Count(n).String() }

// TestParseProfilerTraceErrors: one line naming file:line:column (or the
// file) and what to do.
func TestParseProfilerTraceErrors(t *testing.T) {
	for i, c := range []struct{ data, want string }{
		{`not json`, "t.json:1:2: not valid JSON"},
		{"{\"traceEvents\": [\n  {\"ph\": \"X\",, }\n]}", "t.json:2:14: not valid JSON: invalid character ','"},
		{`[1, 2]`, `t.json:1:1: not a Chrome trace: want an object {"traceEvents": [...]}`},
		{`{"schemaVersion": 1}`, `t.json: no "traceEvents": not a torch.profiler trace`},
		{`{"traceEvents": {}}`, "t.json:1:17: traceEvents: want an array of events"},
		{"{\"traceEvents\": [\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": \"soon\", \"dur\": 1}]}", `t.json:2:3: traceEvents[0] (kernel "k"): ts "soon": want a number of microseconds`},
		{"{\"traceEvents\": [\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": -4}]}", `t.json:2:3: traceEvents[0] (kernel "k"): dur -4 is out of range`},
		{`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": 5}]}`, "t.json:1:18: traceEvents[0]: name is a number, want a string"},
		{`{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}]}`, "t.json: no GPU compute kernels"},
		{`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}`, "the JSON ends early"},
		{`{"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 100, "dur": 10}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}]}`,
			"t.json: ProfilerStep#1 has no compute kernels launched inside it"},
		// Two iterations (a backward pass between two optimizer steps)
		// and no ProfilerStep#N: not one step.
		{`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}, ` +
			`{"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 1, "tid": 2, "ts": 5, "dur": 3}, ` +
			`{"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#AdamW.step", "pid": 1, "tid": 1, "ts": 10, "dur": 5}, ` +
			`{"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 1, "tid": 2, "ts": 20, "dur": 3}, ` +
			`{"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#AdamW.step", "pid": 1, "tid": 1, "ts": 30, "dur": 5}]}`,
			"t.json: 2 iterations (optimizer steps with a backward pass between them) and no ProfilerStep#N ranges to tell them apart: call prof.step() once per iteration, or export one step"},
	} {
		_, err := ParseProfilerTrace("t.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%d: got %v, want %q", i, err, c.want)
		}
	}
}

// FuzzParseProfilerTrace: no panic on any input; a result's passes add up
// to its compute time.
func FuzzParseProfilerTrace(f *testing.F) {
	// Not testdata/proftrace/step.json (80 KB; TestParseProfilerTrace
	// reads it): Go's fuzzer minimizes each new input byte by byte, so a
	// seed that size kept every 40 s run minimizing (4 executions), and
	// the fuzzer never fuzzed. This trace has what step.json exercises in
	// a few events: a step, a forward launch, an autograd-thread launch,
	// an optimizer range, GEMM, attention and other kernels by correlation.
	f.Add([]byte(`{"traceEvents":[` +
		`{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"thread 2 (pt_autograd_0)"}},` +
		`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},` +
		`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":10},` +
		`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation":7}},` +
		`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":3,"dur":1,"args":{"correlation":8}},` +
		`{"ph":"X","cat":"user_annotation","name":"Optimizer.step#AdamW.step","pid":1,"tid":1,"ts":50,"dur":20},` +
		`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":55,"dur":1,"args":{"correlation":9}},` +
		`{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n","pid":0,"tid":7,"ts":5,"dur":20,"args":{"correlation":7}},` +
		`{"ph":"X","cat":"kernel","name":"void flash_bwd_dq_dk_dv_loop_kernel<>","pid":0,"tid":7,"ts":30,"dur":10,"args":{"correlation":8}},` +
		`{"ph":"X","cat":"kernel","name":"multi_tensor_apply_kernel","pid":0,"tid":7,"ts":60,"dur":5,"args":{"correlation":9}}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1e300,"dur":1}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","cat":"cuda_runtime","name":"l","ts":1,"dur":1,"args":{"correlation":1.5}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParseProfilerTrace("f.json", data)
		if err != nil {
			return
		}
		if k.Compute <= 0 || k.Kernels < 1 || (k.Passes && k.Forward+k.Backward+k.Optimizer != k.Compute) ||
			k.GEMM+k.Attention+k.Other != k.Compute || k.GEMMKernels+k.AttentionKernels+k.OtherKernels != k.Kernels {
			t.Fatalf("inconsistent %+v", *k)
		}
	})
}

// TestClassifyKernel: kernel names as traces show them, by class.
func TestClassifyKernel(t *testing.T) {
	for _, c := range []struct {
		name string
		want KernelClass
	}{
		// cuBLAS / cuBLASLt / CUTLASS GEMMs.
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", KernelGEMM},
		{"sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize160x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel", KernelGEMM},
		{"ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn", KernelGEMM},
		{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)", KernelGEMM},
		{"nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", KernelGEMM},
		{"volta_sgemm_128x64_nn", KernelGEMM},
		{"Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0", KernelGEMM},
		// Attention: FlashAttention-2 (and PyTorch's vendored copy), FA3,
		// SDPA's memory-efficient and cuDNN backends, Triton kernels.
		{"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(Flash_fwd_params)", KernelAttention},
		{"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, true, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)", KernelAttention},
		{"void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t> >(Flash_bwd_params)", KernelAttention},
		{"void flash::compute_attn_ws<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> > > >(flash::Params)", KernelAttention},
		{"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)", KernelAttention},
		{"fmha_cutlassB_bf16_aligned_64x64_k128_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, cutlass::bfloat16_t, true, false, true, 64, 64, 128, false>::Params)", KernelAttention},
		{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0", KernelAttention},
		{"_fwd_kernel_0d1d2d3d4d5d6d7d8d9d10d11d12d13d14d15d16d17d18d19d20c21d22d23c24d25d26d", KernelAttention},
		{"_bwd_kernel", KernelAttention},
		{"_bwd_preprocess_do_o_dot", KernelAttention},
		{"_attn_fwd", KernelAttention},
		{"triton_tem_fused_flex_attention_0", KernelAttention},
		// torch.compile's Triton GEMM templates (max-autotune).
		{"triton_tem_fused_mm_0", KernelGEMM},
		{"triton_tem_fused_addmm_gelu_view_18", KernelGEMM},
		{"triton_tem_fused_bmm_2", KernelGEMM},
		{"triton_tem_fused_baddbmm_1", KernelGEMM},
		{"triton_tem_fused__scaled_mm_3", KernelGEMM},
		{"triton_poi_fused_mm_mul_4", KernelOther},
		{"triton_tem_fused_convolution_5", KernelOther},
		// Other: elementwise, norms, the optimizer, a Triton norm whose
		// name ends in _fwd_kernel.
		{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)", KernelOther},
		{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4> >", KernelOther},
		{"_layer_norm_fwd_1pass_kernel", KernelOther},
		{"_rms_norm_fwd_kernel", KernelOther},
		{"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", KernelOther},
		{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", KernelOther},
	} {
		if got := ClassifyKernel(c.name); got != c.want {
			t.Errorf("%.60s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAttentionFamily: the attention kernel names that say which
// training.attention_kernel they belong to, on the names TestClassifyKernel
// uses; the memory-efficient kernels, Triton kernels named after attention
// and non-attention kernels say none.
func TestAttentionFamily(t *testing.T) {
	for _, c := range []struct {
		name string
		want AttentionKernel
	}{
		{"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(Flash_fwd_params)", KernelFA2},
		{"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, true, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)", KernelFA2},
		{"void flash::compute_attn_ws<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> > > >(flash::Params)", KernelFA3},
		// FlashAttention-3's first release as its kernels are named
		// (hopper/ at 7f67966c: their template arguments and parameters
		// are Flash_fwd_*/Flash_bwd_*), and a helper of the namespace.
		{"void flash::compute_attn_ws<Flash_fwd_kernel_traits<128, 128, 176, 12, 2, false, 1, cutlass::bfloat16_t>, true, flash::SingleTileScheduler>(Flash_fwd_params, flash::CollectiveMainloopFwd<Flash_fwd_kernel_traits<128, 128, 176, 12, 2, false, 1, cutlass::bfloat16_t>, true>::Params, flash::CollectiveEpilogueFwd<Flash_fwd_kernel_traits<128, 128, 176, 12, 2, false, 1, cutlass::bfloat16_t> >::Params, flash::SingleTileScheduler::Params)", KernelFA3},
		{"void flash::compute_dqkv<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 1, 2, false, false, true, cutlass::bfloat16_t>, true>(Flash_bwd_params)", KernelFA3},
		{"void flash::convert_dQ<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 1, 2, false, false, true, cutlass::bfloat16_t>, cute::TiledCopy<cute::Copy_Atom<cute::SM90_TMA_LOAD> > >(Flash_bwd_params, cute::TiledCopy<cute::Copy_Atom<cute::SM90_TMA_LOAD> >)", KernelFA3},
		{"void flash::prepare_varlen_num_blocks_kernel(int, int, int, int const*, int const*, int const*, int const*, int const*, int const*, int, int, int, int, int, cutlass::FastDivmod, cutlass::FastDivmod, int*, int*, bool)", KernelFA3},
		// FlashAttention-3's release kernels, and FlashAttention-2's from
		// v2.7.4 on, in the namespace flash (bc482cbf).
		{"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, false> > > >(flash::Params)", KernelFA3},
		{"void cutlass::device_kernel<flash::FlashAttnBwdPostprocessConvertdQ<cute::tuple<cute::C<64>, cute::C<128> >, cutlass::bfloat16_t, float, cutlass::arch::Sm90> >(flash::Params)", KernelFA3},
		{"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)", KernelFA2},
		{"void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, true, false, false, false, false, false>(flash::Flash_bwd_params)", KernelFA2},
		{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0", KernelCuDNN},
		{"_fwd_kernel_0d1d2d3d4d5d6d7d8d9d10d11d12d13d14d15d16d17d18d19d20c21d22d23c24d25d26d", KernelTriton},
		{"_bwd_preprocess_do_o_dot", KernelTriton},
		{"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)", ""},
		{"triton_tem_fused_flex_attention_0", KernelFlex},
		{"triton_tem_fused_flex_attention_backward_1", KernelFlex},
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", ""},
	} {
		if got := AttentionFamily(c.name); got != c.want {
			t.Errorf("%.60s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestParseProfilerTraceOptimizerGroups (review s21 A F1): one iteration
// that calls optimizer.step() once per parameter group, as DeepSpeed's
// ZeRO-1/2 does (stage_1_and_2.py lines 2257-2274 at edaa7221), is one
// step without ProfilerStep#N: its two Optimizer.step# ranges follow one
// backward pass, and its kernels are summed.
func TestParseProfilerTraceOptimizerGroups(t *testing.T) {
	data := `{"traceEvents": [` +
		`{"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 1, "tid": 2, "ts": 5, "dur": 3}, ` +
		`{"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#FusedAdam.step", "pid": 1, "tid": 1, "ts": 10, "dur": 5}, ` +
		`{"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#FusedAdam.step", "pid": 1, "tid": 1, "ts": 20, "dur": 5}, ` +
		`{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "ts": 1, "dur": 4}, ` +
		`{"ph": "X", "cat": "kernel", "name": "multi_tensor_apply_kernel", "ts": 30, "dur": 2}]}`
	k, err := ParseProfilerTrace("t.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if k.Step != "the whole trace" || k.Compute != 6*units.Microsecond || k.GEMM != 4*units.Microsecond {
		t.Errorf("step %q, compute %v, GEMM %v; want the whole trace, 6µs, 4µs", k.Step, k.Compute, k.GEMM)
	}
}
