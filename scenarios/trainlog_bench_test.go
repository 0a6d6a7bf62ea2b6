package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// trainLogBench is a log of n steps of format f, each followed by three
// lines of other output (warnings, data-loader messages), about 1 KiB per
// step: what a long run's stdout looks like to ParseTrainLog.
func trainLogBench(f string, n int) []byte {
	var b strings.Builder
	noise := "[rank0]:[titan] 2025-09-01 10:00:00,000 - root - WARNING - some other line with noise " + strings.Repeat("x", 160) + "\n" +
		"  warnings.warn(  # /usr/lib/python3/dist-packages/torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py:1234 iteration step: global\n" +
		"[2025-09-01 10:00:00] [INFO] [data.py:88] loading shard 00017 of 00128 / epoch 0 / samples 12345, tokens 50577408 | ok |\n"
	for i := 1; i <= n; i++ {
		switch f {
		case TrainLogTorchtitan:
			fmt.Fprintf(&b, "[rank0]:[titan] 2025-09-01 10:00:00,000 - root - INFO - step: %6d  loss:  2.0000  grad_norm:  1.0000  memory: 68.47GiB(86.55%%)  tps: 880  tflops: 449.00  mfu: 45.40%%\n", i)
		case TrainLogMegatron:
			fmt.Fprintf(&b, " [2025-09-01 10:00:00] iteration %8d/  500000 | consumed samples: %12d | elapsed time per iteration (ms): 14500.0 | throughput per GPU (TFLOP/s/GPU): 402.1 | learning rate: 1.500000E-04 | global batch size:   128 | lm loss: 7.990000E+00 | loss scale: 1.0 | grad norm: 1.234 |\n", i, 128*i)
		case TrainLogDeepSpeed:
			fmt.Fprintf(&b, "[2024-01-01 00:00:01,000] [INFO] [logging.py:96:log_dist] [Rank 0] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=25.7, CurrSamplesPerSec=25.7, MemAllocated=4.2GB, MaxMemAllocated=9.1GB\n", i, i)
		}
		b.WriteString(noise)
	}
	return []byte(b.String())
}

// BenchmarkParseTrainLog: MB/s of ParseTrainLog over 5,000-step logs
// (about 4 MB) of three formats (QA2 finding 9: a 4.6 MB log took 4.6 s,
// 96 % of it in regexp backtracking).
func BenchmarkParseTrainLog(b *testing.B) {
	for _, f := range []string{TrainLogTorchtitan, TrainLogMegatron, TrainLogDeepSpeed} {
		data := trainLogBench(f, 5000)
		b.Run(f, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				l, err := ParseTrainLog("bench.log", data)
				if err != nil || len(l.Steps) != 5000 || l.Format != f {
					b.Fatalf("%v, %d steps of %s", err, len(l.Steps), l.Format)
				}
			}
			b.ReportMetric(float64(len(data))*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
		})
	}
}
