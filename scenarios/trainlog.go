package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/gonum/stat"

	"github.com/zerosim/zerosim/units"
)

// This file reads a training run's stdout log: the step throughput (or
// time) and the memory the trainer reports, for calibrate --train-log. Four
// formats, each as its source prints it:
//
//   - torchtitan's metrics line (pytorch/torchtitan
//     torchtitan/components/metrics.py at
//     b5bcd76c66d0acb1a08b176d9639425bc55e0b2a, MetricsProcessor.log; the
//     same at 1ab4353189b0f9bf0640a7d6bd49d55f3e951a53):
//     "step: 10  loss:  9.8  grad_norm: 1.2  memory: 38.45GiB(40.47%)
//     tps: 7,890  tflops: 456.9  mfu: 46.19%", with ANSI colour codes
//     unless disabled. memory is device_info["reserved_bytes.all.peak"] in
//     GiB (2^30 B; torch.cuda.max_memory_reserved), its peak reset after
//     every logged line (reset_peak_stats), so each line holds the peak of
//     its interval. tps = ntokens_since_last_log / (time_delta ·
//     non_data_parallel_size): the labels of every micro-batch a
//     data-parallel rank read since the last line (torchtitan/trainer.py,
//     labels.numel() before context parallelism shards them) per second per
//     GPU of its model-parallel group; the interval is metrics.log_freq
//     steps, so tokens per step per GPU over tps is the mean step of the
//     interval. torchtitan before 2025 printed "wps:" for the same figure
//     (train.py at c48ae39f4f2711b945cbae6fd5ffe662fe523ccc, divided by
//     model_parallel_size). "validate step:" lines (log_validation) are not
//     training steps and are skipped.
//   - Megatron-LM's iteration line (NVIDIA/Megatron-LM
//     megatron/training/training.py at
//     d98e8a64ddf34856e74b24714e3bedb2f5a39553, training_log): " iteration
//     100/ 500000 | consumed samples: … | elapsed time per iteration (ms):
//     1234.5 | …", the mean time of the iterations since the last line
//     (log_interval of them; the first iteration has a line of its own);
//     one iteration is one optimizer step. Its memory is report_memory's
//     line (megatron/training/utils/common_utils.py at
//     543628902932815fc3ea29e74e7a526c03ce99d6): "[Rank 0] (after 10
//     iterations) memory (MB) | allocated: … | max allocated: … | reserved:
//     … | max reserved: …", MB being 2^20 B, max reserved
//     torch.cuda.max_memory_reserved since the start (never reset); it is
//     printed by the first rank of each data-parallel group after the first
//     logged iterations, so the largest over the lines is the busiest rank.
//   - The Hugging Face Trainer (huggingface/transformers). Its per-step log
//     dicts ("{'loss': 1.234, 'grad_norm': 0.5, 'learning_rate': 2e-05,
//     'epoch': 0.01}", ProgressCallback.on_log writing str(logs) through
//     the bar) carry no time. The time is tqdm's training bar
//     (src/transformers/trainer_callback.py at
//     01081ce2c31e51fa3876e386c5aef784d38e958a, ProgressCallback: a
//     tqdm(total=state.max_steps) on the local main process, advanced by
//     global_step, one optimizer step per unit, gradient accumulation
//     included): "  5%|▌         | 50/1000 [01:40<31:40,  2.00s/it]" or
//     "…, 12.34it/s]", the rate tqdm's exponential moving average of the
//     latest updates (smoothing 0.3), written to stderr with carriage
//     returns. Evaluation draws its own bar (on_prediction_step, total
//     len(eval_dataloader)); the training bar is the total with the most
//     distinct step numbers. Bars with a description ("Map: 100%|…") are
//     not the Trainer's and are skipped. The final summary "{'train_runtime':
//     1234.5, 'train_samples_per_second': …, 'train_steps_per_second': 0.81,
//     …}" (src/transformers/trainer.py at
//     2cda12cbf6e476183e68ec476551fa7e3717394a, speed_metrics("train",
//     start_time, …, num_steps=self.state.max_steps); trainer_utils
//     speed_metrics: runtime = time.time() - start_time, steps per second
//     rounded to 3 decimals) times the whole of train(): warm-up,
//     evaluation and checkpoint saves included. It is used only when the
//     bars are too few for a steady state, and then says so. The Trainer
//     prints no memory by default (skip_memory_metrics=True; its
//     TrainerMemoryTracker reports allocated deltas, not reserved).
//   - Composer's console logger, as llm-foundry runs it (mosaicml/composer
//     at 6405188805a0054b4551ec49e4919c54c971d0e8:
//     composer/loggers/console_logger.py log_to_console, "[batch=10/100]:"
//     or "[epoch=1][batch=5/5]:" or "[token=…/…]:", then one "\t Train
//     <key>: <value>" line per metric, floats as "%.4f"). The step time is
//     1 / "throughput/batches_per_sec" (composer/callbacks/speed_monitor.py
//     SpeedMonitor.batch_end: global batches, one optimizer step each, per
//     second of wall clock, a rolling mean over window_size batches, 100
//     by default, printed only once the window is full). Its memory is
//     MemoryMonitor's "memory/peak_reserved_mem"
//     (composer/callbacks/memory_monitor.py: torch.cuda.memory_stats()
//     "reserved_bytes.all.peak" / 1.0e9, decimal GB rounded to 5
//     significant digits, never reset; "_max" over ranks when
//     dist_aggregate_batch_interval is set). The step number is the
//     header's batch, or "Train time/batch" when the header counts epochs,
//     tokens or samples. Blocks without throughput (the first window) are
//     read but not timed.
//   - DeepSpeed's ThroughputTimer line (deepspeedai/DeepSpeed
//     deepspeed/utils/timer.py at edaa7221267243c7be7fb49c5d5f5c4fb97b4641,
//     ThroughputTimer.stop; the format since
//     0f0e38c52072cbcb12ed410a0e2704f2723123e2, v0.8.0):
//     "epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=25.03,
//     CurrSamplesPerSec=25.70, MemAllocated=4.32GB, MaxMemAllocated=38.49GB",
//     logged through DeepSpeed's logger at INFO (the logger's level is
//     WARNING since 066d912052b5eaf6094a2e57d20a163ba6517db8, v0.17.6;
//     ds_config "log_level" sets it since v0.19.3).
//     deepspeed/runtime/engine.py (same commit) builds the timer with
//     batch_size = train_batch_size (micro batch ×
//     gradient accumulation × data-parallel size: the global batch) and
//     steps_per_output = steps_per_print (None, no line, by default since
//     v0.15.2); engine.step() stops it with global_step at every
//     gradient-accumulation boundary and lets it report only on global rank
//     0, and a line is printed when global_step % steps_per_print == 0.
//     The timer starts at every engine.forward (at the next batch of
//     DeepSpeed's own data loader when the engine was given the training
//     data) from the third optimizer step on (start_step 2), and
//     synchronizes the device at start and stop (timers.throughput.
//     synchronized, true by default); each micro-step's start-to-stop is
//     summed into the optimizer step, so CurrSamplesPerSec = train_batch_size
//     / (that sum + TIME_EPSILON, 1 µs since v0.14.5) is the global batch over
//     the step's forward, backward and optimizer time on rank 0, the time
//     between micro-steps (the trainer's own data loading, logging)
//     excluded; one step, not an interval mean. RunningAvgSamplesPerSec is
//     the mean since the third step, warm-up included, and is not used.
//     micro_step counts every engine.step() call and global_step the
//     optimizer steps (neither reset by an epoch: update_epoch_count is
//     never called in DeepSpeed itself), so at epoch 0 micro_step /
//     global_step is the gradient accumulation the engine ran. The memory
//     is torch.cuda.memory_allocated and max_memory_allocated / 1024**3
//     rounded to 2 decimals: allocated GiB, not reserved, so it is not fed
//     to the allocator overhead's fit. Lines of DeepSpeed before v0.8.0
//     ("0/2000, SamplesPerSec=…", "…, RunningAvgSamplesPerSec=…,
//     CurrSamplesPerSec=…") count micro-batches and rate one micro-batch
//     (DeepSpeed issue #2498) and are not read. Megatron-DeepSpeed and
//     Composer runs print DeepSpeed's lines beside their own step lines:
//     the trainer's own are taken; DeepSpeed's are taken over the Hugging
//     Face Trainer's progress bar.
//   - NVIDIA NeMo 2.0 (NVIDIA/NeMo at
//     8cfedd7203462cb251a914e700e5605444277561). Its step time is
//     TimingCallback's "train_step_timing in s" (nemo/utils/exp_manager.py:
//     a timers.NamedTimer started in on_train_batch_start and stopped in
//     on_train_batch_end, reset every batch (buffer_size -1), so the value
//     is that one batch's time.time() interval on the rank that prints,
//     with no device synchronize (sync_cuda False) and no reduction over
//     ranks: pl_module.log(on_step=True, prog_bar=True), sync_dist unset).
//     One Lightning batch is one optimizer step: MegatronStrategy.
//     training_step (nemo/lightning/pytorch/strategies/megatron_strategy.py)
//     runs MegatronParallel's forward-backward over all the micro-batches
//     of the global batch (nemo/lightning/megatron_parallel.py, MegatronStep.
//     infer: get_num_microbatches()) and the optimizer steps once. Two
//     printers show it, on global rank 0 only. By default
//     (MegatronStrategy replace_progress_bar=True, strategies/utils.py
//     fix_progress_bar) Lightning's bar is replaced by ProgressPrinter
//     (nemo/lightning/pytorch/callbacks/progress_printer.py): "Training
//     epoch 0, iteration 9/19 | lr: … | global_step: 9 | reduced_train_loss:
//     11.03 | train_step_timing in s: 7.572 | consumed_samples: 5120",
//     printed every progress_interval (log_interval, default 1) optimizer
//     steps, "iteration" being current_epoch_step − 1 (optimizer steps
//     done in the epoch) and each metric but global_step the mean over the
//     interval, formatted "{:.4}" (4 significant digits; integral floats
//     as integers): the mean step of the interval, as Megatron's. With
//     replace_progress_bar=False it is MegatronProgressBar
//     (callbacks/progress_bar.py), Lightning's TQDMProgressBar counting
//     optimizer steps (n = current_epoch_step): "Epoch 0: : 100%|█| 50/50
//     [23:22<00:00, reduced_train_loss=0.186, global_step=49.00,
//     consumed_samples=51200.0, train_step_timing in s=24.00]" (Lightning's
//     own bar adds "…, 1.23it/s, v_num=…", a rate of Lightning batches,
//     not used), redrawn after a carriage return, the value to 3 or 4
//     significant digits (Lightning's Tqdm.format_num at
//     Lightning-AI/pytorch-lightning 7f0c3436cd3f6ad3753125672024fc415cbcb414,
//     src/lightning/pytorch/callbacks/progress/tqdm_progress.py). The bar
//     resets n every epoch; its lines of epoch 1 on are refused. Memory:
//     with NEMO_LOG_MEMORY_USAGE=1 training_step logs
//     "max_memory_reserved" (torch.cuda.max_memory_reserved() in bytes,
//     since the start, never reset; rank 0's) and "max_memory_allocated"
//     (allocated, not used); the reserved one is the memory read, the
//     largest over the lines used. Megatron-Bridge (NVIDIA-NeMo/
//     Megatron-Bridge src/megatron/bridge/training/utils/train_utils.py at
//     067f987df03b8355b03192d88d70f1709fedf51a, training_log) prints
//     Megatron-LM's iteration line unchanged (" [date] iteration 10/ 100
//     | consumed samples: … | elapsed time per iteration (ms): … |"), read
//     as Megatron-LM's. NeMo's lines are the trainer's own step lines: not
//     mixed with torchtitan's, Megatron's or Composer's, taken over
//     DeepSpeed's and the Hugging Face Trainer's bars.
//
// Lines of several ranks of one step (torchrun's "[rankN]:" prefixes, or
// the same line repeated) count once: the first line's throughput and the
// largest memory.

// Train log formats.
const (
	TrainLogTorchtitan = "torchtitan"
	TrainLogMegatron   = "megatron"
	TrainLogHFTrainer  = "hf-trainer"
	TrainLogComposer   = "composer"
	TrainLogDeepSpeed  = "deepspeed"
	TrainLogNeMo       = "nemo"
)

// TrainLogStep is one logged step of a training log.
type TrainLogStep struct {
	// Line is the step's first line in the file (1-based).
	Line int
	// Step is the step (iteration) number the line prints.
	Step int64
	// TPS is torchtitan's tokens per second per GPU (0 for the others).
	TPS float64
	// TimeMS is the step time in ms: Megatron's elapsed time per
	// iteration, NeMo's train_step_timing in s, the Trainer's tqdm s/it (or 1 / it/s), 1 / Composer's
	// batches_per_sec (0 for torchtitan, and for a Composer block without
	// throughput).
	TimeMS float64
	// Reserved is the max reserved memory the line prints, bytes
	// (torchtitan's of its interval, Composer's peak_reserved_mem, NeMo's
	// max_memory_reserved; 0: none printed, or 0); Memory says whether the
	// line prints it.
	Reserved int64
	Memory   bool
	// SamplesPerSec is DeepSpeed's CurrSamplesPerSec, MicroStep and Epoch
	// its micro_step and epoch (Epoch also NeMo's; 0 for the others).
	SamplesPerSec    float64
	MicroStep, Epoch int64
}

// TrainLog is what ParseTrainLog read.
type TrainLog struct {
	File   string
	Format string // TrainLogTorchtitan, TrainLogMegatron, TrainLogHFTrainer, TrainLogComposer, TrainLogDeepSpeed or TrainLogNeMo
	Steps  []TrainLogStep
	// MaxReserved is Megatron's largest report_memory "max reserved", bytes
	// (0: none), and MaxReservedLine its line.
	MaxReserved     int64
	MaxReservedLine int
	// Summary is the Hugging Face Trainer's train_runtime line (nil: none).
	Summary *HFTrainSummary
	// MaxAllocated is the largest MaxMemAllocated of DeepSpeed's lines,
	// bytes (its GiB to 2 decimals; 0: none), and MaxAllocatedLine its
	// line: allocated memory, shown, never fitted.
	MaxAllocated     int64
	MaxAllocatedLine int
	// Run is what the log states about its run beside its steps.
	Run RunFacts
	// Unread counts the lines of the log's format that its pattern
	// recognises but that cannot be read (a broken number, a line cut
	// off); UnreadAt is the first's file:line:column and UnreadWhy why.
	Unread    int
	UnreadAt  string
	UnreadWhy string
	// streamOf[line] is 1 + the index in prefixes of the rank prefix the
	// line carries (torchrun's "[rank3]:", nemo_run's "[default0]:"), 0
	// for none, and prefixes each prefix once: four bytes a line, not a
	// map entry holding the line (final read R2: a 183 MB log took 850 MB
	// with a map of substrings); last is the last step read of each stream
	// ("" for lines without a prefix). addStep tells another rank's line
	// of a step from a restart.
	streamOf []uint32
	prefixes []string
	prefixAt map[string]uint32
	last     map[string]TrainLogStep
}

// streamAt is the rank prefix of line at, "" for none.
func (l *TrainLog) streamAt(at int) string {
	if at < len(l.streamOf) && l.streamOf[at] > 0 {
		return l.prefixes[l.streamOf[at]-1]
	}
	return ""
}

// rankPrefix is the prefix of a rank's lines that torchrun's --tee (and
// its log redirection) puts before them, "[rank3]:", or nemo_run's
// "[default0]:", near the start of a line.
var rankPrefix = regexp.MustCompile(`\[(?:rank|default)\d{1,7}\]:`)

// readStream records the rank prefix of line at, if it has one.
func (l *TrainLog) readStream(line string, at int) {
	head := line[:min(len(line), 96)]
	if !strings.Contains(head, "]:") {
		return
	}
	if m := rankPrefix.FindString(head); m != "" {
		id, ok := l.prefixAt[m]
		if !ok {
			if l.prefixAt == nil {
				l.prefixAt = map[string]uint32{}
			}
			l.prefixes = append(l.prefixes, strings.Clone(m))
			id = uint32(len(l.prefixes))
			l.prefixAt[l.prefixes[id-1]] = id
		}
		if at >= len(l.streamOf) {
			l.streamOf = append(l.streamOf, make([]uint32, at+1-len(l.streamOf))...)
		}
		l.streamOf[at] = id
	}
}

// unreadLine is the first recognised line of a format that could not be
// read.
type unreadLine struct {
	line, col int
	why       string
}

// unreadField says why a recognised line has no readable value after
// key: the value is not a number of its kind, or the line stops before
// it (cut off); the column is the value's, or the line's end.
func unreadField(line, key, what string) (int, string) {
	i := strings.Index(line, key)
	if i < 0 {
		return len(line) + 1, fmt.Sprintf("no %s (a line cut off?)", what)
	}
	rest := line[i+len(key):]
	v := strings.TrimLeft(rest, " ")
	at := i + len(key) + len(rest) - len(v)
	if f := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '|' }); len(f) > 0 {
		v = f[0]
	} else {
		v = ""
	}
	if v == "" {
		return at + 1, fmt.Sprintf("no %s (a line cut off?)", what)
	}
	return at + 1, fmt.Sprintf("%s %q is not a number", what, v)
}

// RunFacts is what a training log states about the run it logs, 0 where it
// states nothing: calibrate compares it with the scenario (CheckRun) so
// that another run's log is not fitted to it.
type RunFacts struct {
	// GlobalBatch is the sequences of one optimizer step (micro batch ×
	// gradient accumulation × data-parallel size): Megatron's "global batch
	// size:" of its last iteration line, or its global_batch_size argument;
	// torchtitan's "global batch size" of its start line; DeepSpeed's
	// train_batch_size; NeMo's global_batch_size metric (its last line's);
	// the Hugging Face Trainer's "Total train batch size"; Composer's
	// samples_per_sec ÷ batches_per_sec. GlobalBatchLine is its line, GlobalBatchWhat what
	// the log calls it.
	GlobalBatch     int64
	GlobalBatchLine int
	GlobalBatchWhat string
	// WorldSize is Megatron's world_size argument: every GPU of the run.
	WorldSize     int64
	WorldSizeLine int
	// SeqLen is Megatron's seq_length argument or torchtitan's "sequence
	// length"; SeqLenWhat what the log calls it.
	SeqLen     int64
	SeqLenLine int
	SeqLenWhat string
	// Params is torchtitan's "size: N total parameters" (the whole
	// model's, counted before it is sharded).
	Params     int64
	ParamsLine int
	// DeviceGiB is the GPU's memory as torch reports it
	// (get_device_properties().total_memory, GiB): torchtitan's
	// "capacity: … with X GiB memory" line, or its metrics line's memory
	// over its percentage of the device (DeviceMemoryMonitor: 100 ·
	// reserved peak / total_memory; torchtitan/components/metrics.py at
	// b5bcd76c66d0acb1a08b176d9639425bc55e0b2a). DeviceWhat says which; DeviceLine is its line.
	DeviceGiB  float64
	DeviceLine int
	DeviceWhat string
	pct        float64 // the percentage DeviceGiB came from (0: none)
}

// HFTrainSummary is the Hugging Face Trainer's final speed_metrics line.
type HFTrainSummary struct {
	Line int
	// Runtime is train_runtime, s; StepsPerSecond train_steps_per_second.
	Runtime, StepsPerSecond float64
	// MaxSteps is the training bar's total (0: no bar in the log).
	MaxSteps int64
}

// MaxTrainLogBytes bounds a training log read by calibrate --train-log.
const MaxTrainLogBytes = 256 << 20

var (
	ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	titanLine  = regexp.MustCompile(`(?:^|[^A-Za-z_])step:\s*(\d{1,18})\s+loss:`)
	titanTPS   = regexp.MustCompile(`\s(?:tps|wps):\s*([0-9][0-9,]{0,30})(?:\s|$)`)
	titanMem   = regexp.MustCompile(`\smemory:\s*([0-9]{1,9}(?:\.[0-9]{1,9})?)GiB(?:\(([0-9]{1,3}(?:\.[0-9]{1,9})?)%\))?`)
	megaLine   = regexp.MustCompile(`(?:^|\s)iteration\s+(\d{1,18})/\s*\d{1,18}\s*\|`)
	megaTime   = regexp.MustCompile(`\|\s*elapsed time per iteration \(ms\):\s*([0-9]{1,15}(?:\.[0-9]{1,9})?)\s*\|`)
	megaMem    = regexp.MustCompile(`memory \(MB\) \|.*\| max reserved:\s*([0-9]{1,15}(?:\.[0-9]{1,9})?)`)
	megaGBS    = regexp.MustCompile(`\|\s*global batch size:\s*(\d{1,18})\s*\|`)
	// What a log states of its run (RunFacts): Megatron's and DeepSpeed's
	// argument dumps ("  world_size ........ 8"), torchtitan's start,
	// model size and device capacity lines.
	argDump     = regexp.MustCompile(`(?:^|\s)(global_batch_size|world_size|seq_length|train_batch_size) (\.{1,48}) (\d{1,18})\s*$`)
	titanGBS    = regexp.MustCompile(`with local batch size \d{1,18},.*\sglobal batch size (\d{1,18})(?:,|$)`)
	titanSeq    = regexp.MustCompile(`with local batch size \d{1,18},.*\ssequence length (\d{1,18})(?:,|$)`)
	titanParams = regexp.MustCompile(`\ssize:\s*([0-9][0-9,]{0,30}) total parameters`)
	// The Hugging Face Trainer's "***** Running training *****" block
	// (src/transformers/trainer.py at 2cda12cbf6e476183e68ec476551fa7e3717394a,
	// _inner_training_loop: f"  Total train batch size (w. parallel,
	// distributed & accumulation) = {total_train_batch_size:,}"; older
	// Trainers print it with %d, without the thousands' commas).
	hfGBS = regexp.MustCompile(`Total train batch size \(w\. parallel, distributed & accumulation\) = ([0-9][0-9,]{0,30})\s*$`)
	// NeMo's global_batch_size metric (MegatronDataSampler.
	// on_megatron_step_end, nemo/lightning/pytorch/plugins/data_sampler.py
	// at NVIDIA/NeMo 012c06eaca48c06dea38abe173ffb7b5bba6e85e:
	// pl_module.log("global_batch_size", current_global_batch_size,
	// prog_bar=True)), printed by ProgressPrinter as "| global_batch_size:
	// 128 |" and by the progress bar as "global_batch_size=128.0".
	nemoGBS  = regexp.MustCompile(`(?:\| |, )global_batch_size(?:: |=)([0-9]{1,18})(?:\.0{1,9})?(?: \||,|\]|$)`)
	titanCap = regexp.MustCompile(`\scapacity: .* with ([0-9]{1,9}(?:\.[0-9]{1,9})?)GiB memory`)
	// tqdm's bar without a description: "  5%|▌    | 50/1000 [01:40<31:40,  2.00s/it]".
	hfBar     = regexp.MustCompile(`^\s*(?:\d{1,3}%\|[^|]*\|\s*)?(\d{1,18})/(\d{1,18})\s*\[[0-9:]{1,20}<[0-9:?]{1,20},\s*([0-9]{1,12}(?:\.[0-9]{1,9})?)(s/it|it/s)(?:[],]|$)`)
	hfSummary = regexp.MustCompile(`'train_runtime':\s*'?([0-9]{1,15}(?:\.[0-9]{1,9})?)'?,.*'train_steps_per_second':\s*'?([0-9]{1,15}(?:\.[0-9]{1,9})?)'?`)
	hfLoss    = regexp.MustCompile(`^\s*\{'loss':`)
	// Composer's console block: a header, then "\t Train key: value" lines.
	compHead = regexp.MustCompile(`^\[(epoch=\d{1,18}\]\[)?(batch|sample|token|duration)=(\d{1,18})(?:/\d{1,18})?\]:\s*$`)
	compKV   = regexp.MustCompile(`^\s+Train ([^\s:]+): (.*)$`)
	// DeepSpeed's ThroughputTimer line (v0.8.0 on), its older forms, and
	// the engine's step line (_report_progress).
	dsLine     = regexp.MustCompile(`(?:^|[^A-Za-z_])epoch=(\d{1,18})/micro_step=(\d{1,18})/global_step=(\d{1,18}), RunningAvgSamplesPerSec=[^,]*, CurrSamplesPerSec=([^,\s]{0,40})(?:,|\s|$)`)
	dsMaxAlloc = regexp.MustCompile(`MaxMemAllocated=([0-9]{1,9}(?:\.[0-9]{1,9})?)GB`)
	dsOld      = regexp.MustCompile(`(?:^|\s)\d{1,18}/\d{1,18}, (?:RunningAvg)?SamplesPerSec=`)
	dsStep     = regexp.MustCompile(`\[Rank \d{1,9}\] step=\d{1,18}, skipped=\d{1,18}, lr=`)
	// NeMo's ProgressPrinter line and MegatronProgressBar's (or
	// Lightning's) bar with TimingCallback's metric.
	nemoLine = regexp.MustCompile(`(?:^|[^A-Za-z_])Training epoch (\d{1,18}), iteration (\d{1,18})/-?\d{1,18}((?: \| [^|]*)*)$`)
	nemoBar  = regexp.MustCompile(`(?:^|[^A-Za-z_])Epoch (\d{1,18}):[^|]{0,40}\|[^|]*\|\s*(\d{1,18})/(?:\d{1,18}|\?)\s*\[([^]]*)(?:]|$)`)
)

// NeMo's metric names (TimingCallback, MegatronStrategy.training_step).
const (
	nemoTiming   = "train_step_timing in s"
	nemoStep     = "global_step"
	nemoReserved = "max_memory_reserved"
)

// Format names in errors.
var trainLogLine = map[string]string{
	TrainLogTorchtitan: "torchtitan step",
	TrainLogMegatron:   "Megatron-LM iteration",
	TrainLogComposer:   "Composer batch",
	TrainLogNeMo:       "NeMo train_step_timing",
}

// composerBlock is a Composer console block being read.
type composerBlock struct {
	st        TrainLogStep
	head      string // the header as printed
	byBatch   bool   // the header counts batches (no epoch prefix)
	timeBatch int64
	hasTime   bool // it prints Train time/batch
	// samplesPerSec and batchesPerSec are SpeedMonitor's throughput/
	// samples_per_sec and throughput/batches_per_sec (0: not printed).
	samplesPerSec, batchesPerSec float64
}

// hfBarLine is one tqdm bar of a Hugging Face Trainer log.
type hfBarLine struct {
	st    TrainLogStep
	total int64
}

// ParseTrainLog reads a torchtitan, Megatron-LM, Hugging Face Trainer,
// Composer, DeepSpeed or NeMo training log. Its errors are one line naming the
// file (and the line) and the fix.
func ParseTrainLog(name string, data []byte) (*TrainLog, error) {
	name = strconv.Quote(name)
	name = name[1 : len(name)-1]
	l := &TrainLog{File: name}
	seen := map[int64]int{} // step → index in l.Steps
	count := map[string]int{}
	first := map[string]int{}
	// add records a step of format f read at line at: formats do not mix,
	// another rank's line of a step counts once, steps go forward.
	add := func(f string, st TrainLogStep) error {
		if count[f] == 0 {
			first[f] = st.Line
		}
		count[f]++
		for _, g := range []string{TrainLogTorchtitan, TrainLogMegatron, TrainLogComposer, TrainLogNeMo} {
			if g != f && count[g] > 0 {
				return fmt.Errorf("%s:%d: a %s line in a log of %s lines (line %d): give the log of one run", name, st.Line, trainLogLine[f], trainLogLine[g], first[g])
			}
		}
		return l.addStep(st, seen)
	}
	var blk *composerBlock
	endBlock := func() error {
		b := blk
		blk = nil
		if b == nil {
			return nil
		}
		if !b.byBatch {
			if !b.hasTime {
				return fmt.Errorf("%s:%d: Composer block %s prints no Train time/batch to number its batch: give the console log as Composer prints it", name, b.st.Line, b.head)
			}
			b.st.Step = b.timeBatch
		}
		if b.samplesPerSec > 0 && b.batchesPerSec > 0 && l.Run.GlobalBatchWhat != "global batch size" {
			// SpeedMonitor.batch_end (composer/callbacks/speed_monitor.py
			// at mosaicml/composer 003ec03f7c9a69c0bf0dabbe949a6f55daa7a447)
			// divides the window's samples and its batches by the same
			// wall clock, and state.timestamp counts every rank's
			// samples: their ratio is the samples (sequences) of one
			// global batch, averaged over the window. Printed to 4
			// decimals, it is rounded to the whole sequence.
			if g := math.Round(b.samplesPerSec / b.batchesPerSec); g >= 1 && g < 1e15 {
				l.Run.GlobalBatch, l.Run.GlobalBatchLine, l.Run.GlobalBatchWhat = int64(g), b.st.Line, "throughput/samples_per_sec ÷ batches_per_sec"
			}
		}
		return add(TrainLogComposer, b.st)
	}
	var bars []hfBarLine
	var dsSteps []TrainLogStep
	lossLine, dsOldLine, dsStepLine := 0, 0, 0
	nemoPrinter, nemoBars := 0, 0 // the first line of each NeMo printer
	unread := map[string]int{}
	firstUnread := map[string]unreadLine{}
	skip := func(f string, at, col int, why string) {
		if unread[f] == 0 {
			firstUnread[f] = unreadLine{at, col, why}
		}
		unread[f]++
	}
	for n, raw := range bytes.Split(data, []byte("\n")) {
		line := string(raw)
		if bytes.IndexByte(raw, 0x1b) >= 0 {
			line = ansiEscape.ReplaceAllString(line, "")
		}
		line = strings.TrimRight(line, "\r")
		at := n + 1
		l.Run.read(line, at)
		l.readStream(line, at)
		if blk != nil {
			if m := compKV.FindStringSubmatch(line); m != nil {
				if err := blk.set(m[1], strings.TrimSpace(m[2])); err != nil {
					return nil, fmt.Errorf("%s: %v: is the file a Composer console log?", loc(name, at, colAfter(line, "Train "+m[1]+":", strings.TrimSpace(m[2]))), err)
				}
				continue
			}
			if err := endBlock(); err != nil {
				return nil, err
			}
		}
		if m := compHeader(line); m != nil {
			step, err := strconv.ParseInt(m[3], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: batch %q is out of range: is the file a Composer console log?", loc(name, at, colAfter(line, m[2]+"=", m[3])), m[3])
			}
			blk = &composerBlock{st: TrainLogStep{Line: at, Step: step}, head: strings.TrimSuffix(strings.TrimSpace(line), ":"), byBatch: m[1] == "" && m[2] == "batch"}
			continue
		}
		if strings.Contains(line, "memory (MB) |") {
			if m := megaMem.FindStringSubmatch(line); m != nil {
				mb, err := strconv.ParseFloat(m[1], 64)
				if err != nil || mb < 0 || mb > 1e12 {
					return nil, fmt.Errorf("%s: max reserved %q MB is not a size: is the file a Megatron-LM log?", loc(name, at, colAfter(line, "max reserved:", m[1])), m[1])
				}
				if b := int64(math.Round(mb * (1 << 20))); b > l.MaxReserved {
					l.MaxReserved, l.MaxReservedLine = b, at
				}
			}
			continue
		}
		if m := find(dsLine, line, "/global_step=", "epoch="); m != nil {
			epoch, err1 := strconv.ParseInt(m[1], 10, 64)
			micro, err2 := strconv.ParseInt(m[2], 10, 64)
			step, err3 := strconv.ParseInt(m[3], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil {
				return nil, fmt.Errorf("%s: epoch=%s/micro_step=%s/global_step=%s is out of range: is the file a DeepSpeed log?", loc(name, at, colAfter(line, "epoch=", m[1])), m[1], m[2], m[3])
			}
			sps, err := strconv.ParseFloat(m[4], 64)
			if err != nil || !(sps >= 0 && sps <= 1e15) {
				return nil, fmt.Errorf("%s: CurrSamplesPerSec %q is not a rate: is the file a DeepSpeed log?", loc(name, at, colAfter(line, "CurrSamplesPerSec=", m[4])), m[4])
			}
			if mm := dsMaxAlloc.FindStringSubmatch(line); mm != nil {
				gib, err := strconv.ParseFloat(mm[1], 64)
				if err != nil {
					return nil, fmt.Errorf("%s: MaxMemAllocated %qGB is not a size: is the file a DeepSpeed log?", loc(name, at, colAfter(line, "MaxMemAllocated=", mm[1])), mm[1])
				}
				if b := int64(math.Round(gib * (1 << 30))); b > l.MaxAllocated {
					l.MaxAllocated, l.MaxAllocatedLine = b, at
				}
			}
			dsSteps = append(dsSteps, TrainLogStep{Line: at, Step: step, MicroStep: micro, Epoch: epoch, SamplesPerSec: sps})
			continue
		}
		if strings.Contains(line, "/global_step=") && strings.Contains(line, "/micro_step=") {
			// dsLine did not match a throughput line: broken or cut off.
			col, why := unreadField(line, "CurrSamplesPerSec=", "CurrSamplesPerSec")
			skip(TrainLogDeepSpeed, at, col, why)
			continue
		}
		if find(dsOld, line, "SamplesPerSec=", "") != nil {
			if dsOldLine == 0 {
				dsOldLine = at
			}
			continue
		}
		if dsStepLine == 0 && find(dsStep, line, "] step=", "[Rank ") != nil {
			dsStepLine = at
		}
		if m := find(nemoLine, line, "Training epoch ", "Training epoch "); m != nil {
			st, ok, err := nemoPrinterStep(m)
			if err != nil {
				return nil, fmt.Errorf("%s: %v: is the file a NeMo log?", loc(name, at, errColumn(line, err, "Training epoch ", m[1])), err)
			}
			if !ok {
				continue // a ProgressPrinter line without TimingCallback's metric
			}
			st.Line = at
			if nemoBars > 0 {
				return nil, fmt.Errorf("%s:%d: a NeMo ProgressPrinter line in a log of progress bar lines (line %d): give the log of one run", name, at, nemoBars)
			}
			if nemoPrinter == 0 {
				nemoPrinter = at
			}
			if err := add(TrainLogNeMo, st); err != nil {
				return nil, err
			}
			continue
		}
		if m := findIndex(titanLine, line, "step:", "step:"); m != nil && !validateStep(line, m[0]) {
			step, err := strconv.ParseInt(line[m[2]:m[3]], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d:%d: step %q is out of range: is the file a torchtitan log?", name, at, m[2]+1, line[m[2]:m[3]])
			}
			rest := line[m[1]:]
			t := titanTPS.FindStringSubmatch(rest)
			if t == nil {
				// torchtitan's metrics line always prints tps (wps before
				// it was renamed): this one is broken or cut off.
				key := " tps:"
				if !strings.Contains(rest, key) && strings.Contains(rest, " wps:") {
					key = " wps:"
				}
				col, why := unreadField(rest, key, strings.TrimSpace(key[:4]))
				skip(TrainLogTorchtitan, at, m[1]+col, why)
				continue
			}
			tps, err := strconv.ParseFloat(strings.ReplaceAll(t[1], ",", ""), 64)
			if err != nil || tps > 1e15 {
				return nil, fmt.Errorf("%s: tps %q is not a number: is the file a torchtitan log?", loc(name, at, shift(m[1], colAfter(rest, strings.TrimSpace(t[0])[:4], t[1]))), t[1])
			}
			st := TrainLogStep{Line: at, Step: step, TPS: tps}
			if mm := titanMem.FindStringSubmatch(rest); mm != nil {
				gib, err := strconv.ParseFloat(mm[1], 64)
				if err != nil {
					return nil, fmt.Errorf("%s: memory %qGiB is not a size: is the file a torchtitan log?", loc(name, at, shift(m[1], colAfter(rest, "memory:", mm[1]))), mm[1])
				}
				st.Reserved, st.Memory = int64(math.Round(gib*(1<<30))), true
				l.Run.devicePct(gib, mm[2], at)
			}
			if err := add(TrainLogTorchtitan, st); err != nil {
				return nil, err
			}
			continue
		}
		if m := find(megaLine, line, "iteration", "iteration"); m != nil {
			t := megaTime.FindStringSubmatch(line)
			if t == nil {
				// training_log prints the elapsed time on every iteration
				// line: this one is broken or cut off.
				col, why := unreadField(line, "elapsed time per iteration (ms):", "elapsed time per iteration (ms)")
				skip(TrainLogMegatron, at, col, why)
				continue
			}
			step, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: iteration %q is out of range: is the file a Megatron-LM log?", loc(name, at, colAfter(line, "iteration", m[1])), m[1])
			}
			ms, err := strconv.ParseFloat(t[1], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: elapsed time per iteration %q ms is not a number: is the file a Megatron-LM log?", loc(name, at, colAfter(line, "elapsed time per iteration (ms):", t[1])), t[1])
			}
			if g := megaGBS.FindStringSubmatch(line); g != nil {
				if v, err := strconv.ParseInt(g[1], 10, 64); err == nil && v > 0 {
					l.Run.GlobalBatch, l.Run.GlobalBatchLine, l.Run.GlobalBatchWhat = v, at, "global batch size"
				}
			}
			if err := add(TrainLogMegatron, TrainLogStep{Line: at, Step: step, TimeMS: ms}); err != nil {
				return nil, err
			}
			continue
		}
		// The Hugging Face Trainer: tqdm redraws its bar after a carriage
		// return, so one line of the file may hold many.
		next := 0 // the offset in line of the next seg
		for _, seg := range strings.Split(line, "\r") {
			segAt := next
			next += len(seg) + 1
			if m := find(nemoBar, seg, nemoTiming+"=", "Epoch "); m != nil && strings.Contains(m[3], nemoTiming+"=") {
				st, err := nemoBarStep(m)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", loc(name, at, shift(segAt, errColumn(seg, err, "Epoch ", m[1]))), err)
				}
				st.Line = at
				if nemoPrinter > 0 {
					return nil, fmt.Errorf("%s:%d: a NeMo progress bar line in a log of ProgressPrinter lines (line %d): give the log of one run", name, at, nemoPrinter)
				}
				if nemoBars == 0 {
					nemoBars = at
				}
				if err := add(TrainLogNeMo, st); err != nil {
					return nil, err
				}
			} else if m := tqdmBar(seg); m != nil {
				step, err1 := strconv.ParseInt(m[1], 10, 64)
				total, err2 := strconv.ParseInt(m[2], 10, 64)
				rate, err3 := strconv.ParseFloat(m[3], 64)
				if err1 != nil || err2 != nil || err3 != nil {
					return nil, fmt.Errorf("%s: progress bar %s/%s at %s%s is out of range: is the file a Hugging Face Trainer log?", loc(name, at, shift(segAt, colAfter(seg, "", m[1]+"/"+m[2]))), m[1], m[2], m[3], m[4])
				}
				ms := rate * 1e3
				if m[4] == "it/s" {
					ms = 1e3 / rate
				}
				bars = append(bars, hfBarLine{TrainLogStep{Line: at, Step: step, TimeMS: ms}, total})
			} else if m := find(hfSummary, seg, "'train_runtime':", ""); m != nil {
				rt, err1 := strconv.ParseFloat(m[1], 64)
				sps, err2 := strconv.ParseFloat(m[2], 64)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("%s: train_runtime %s, train_steps_per_second %s are not numbers: is the file a Hugging Face Trainer log?", loc(name, at, shift(segAt, colAfter(seg, "'train_runtime':", m[1]))), m[1], m[2])
				}
				l.Summary = &HFTrainSummary{Line: at, Runtime: rt, StepsPerSecond: sps}
			} else if lossLine == 0 && find(hfLoss, seg, "{'loss':", "") != nil {
				lossLine = at
			}
		}
	}
	if err := endBlock(); err != nil {
		return nil, err
	}
	switch {
	case count[TrainLogTorchtitan] > 0:
		l.Format = TrainLogTorchtitan
	case count[TrainLogMegatron] > 0:
		l.Format = TrainLogMegatron
	case count[TrainLogComposer] > 0:
		l.Format = TrainLogComposer
	case count[TrainLogNeMo] > 0:
		// Before DeepSpeed's and the Trainer's bars: NeMo's lines are the
		// trainer's own steps.
		l.Format = TrainLogNeMo
	case len(dsSteps) > 0:
		// DeepSpeed's lines under a trainer that prints its own step
		// lines are skipped (above); over the Trainer's bars they are
		// taken: they time the step on the device, synchronized.
		l.Format = TrainLogDeepSpeed
		for _, st := range dsSteps {
			if err := l.addStep(st, seen); err != nil {
				return nil, err
			}
		}
	case len(bars) > 0 || l.Summary != nil:
		// Bare tqdm bars in another trainer's log are not its steps: the
		// Trainer's format is taken only when no other one is there.
		l.Format = TrainLogHFTrainer
		total := trainingBar(bars)
		for _, b := range bars {
			if b.total != total {
				continue
			}
			if err := l.addStep(b.st, seen); err != nil {
				return nil, err
			}
		}
		if l.Summary != nil && len(bars) > 0 {
			l.Summary.MaxSteps = total
		}
	case lossLine > 0:
		return nil, fmt.Errorf("%s:%d: Hugging Face Trainer log lines ({'loss': …}) but no progress bar or train_runtime summary: the log lines carry no time, and tqdm writes its bar to stderr; capture both (python train.py 2>&1 | tee train.log)", name, lossLine)
	case dsOldLine > 0:
		return nil, fmt.Errorf("%s:%d: DeepSpeed's throughput line of a version before v0.8.0 (\"0/2000, SamplesPerSec=…\"): it counts and rates micro-batches, not optimizer steps (DeepSpeed issue #2498, fixed in v0.8.0), so it gives no step time; give the log of a run on DeepSpeed v0.8.0 or later", name, dsOldLine)
	case dsStepLine > 0 && unread[TrainLogDeepSpeed] == 0:
		// With throughput lines that cannot be read, the timer is on:
		// they are named below (the advice to enable it was wrong).
		return nil, fmt.Errorf("%s:%d: DeepSpeed step lines (\"[Rank 0] step=…, skipped=…\") but no throughput line (\"epoch=0/micro_step=…/global_step=…, RunningAvgSamplesPerSec=…, CurrSamplesPerSec=…\"), which the same logger prints at the same steps from the third on: enable the throughput timer (ds_config \"timers\": {\"throughput\": {\"enabled\": true}}, the default) and run past step 2", name, dsStepLine)
	case len(unread) > 0:
		for _, f := range []string{TrainLogTorchtitan, TrainLogMegatron, TrainLogDeepSpeed} {
			if u, ok := firstUnread[f]; ok {
				return nil, fmt.Errorf("%s: %s: %d %s line%s, none readable (this is the first): give the log as the trainer printed it", loc(name, u.line, u.col), u.why, unread[f], trainLogName[f], plural(int64(unread[f])))
			}
		}
	default:
		return nil, fmt.Errorf("%s: no training step found: want torchtitan's metrics lines (\"step: 10  loss: …  memory: …GiB(…%%)  tps: …\"), Megatron-LM's (\"iteration 10/ 500000 | … | elapsed time per iteration (ms): … |\"), the Hugging Face Trainer's progress bar (\" 5%%|▌    | 50/1000 [01:40<31:40,  2.00s/it]\", on stderr), Composer's console blocks (\"[batch=10/100]:\" … \"Train throughput/batches_per_sec: …\"), NeMo's (\"Training epoch 0, iteration 9/99 | … | train_step_timing in s: …\", or its progress bar's \"…, train_step_timing in s=…]\", with TimingCallback among the trainer's callbacks) or DeepSpeed's throughput lines (\"epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=…, CurrSamplesPerSec=…\", with steps_per_print set and DeepSpeed's logger at INFO, WARNING by default since v0.17.6: ds_config \"log_level\": \"info\"); give the trainer's stdout and stderr", name)
	}
	if u, ok := firstUnread[l.Format]; ok {
		l.Unread, l.UnreadAt, l.UnreadWhy = unread[l.Format], loc(name, u.line, u.col), u.why
	}
	return l, nil
}

// trainLogName names the formats whose unreadable lines are counted.
var trainLogName = map[string]string{
	TrainLogTorchtitan: "torchtitan step",
	TrainLogMegatron:   "Megatron-LM iteration",
	TrainLogDeepSpeed:  "DeepSpeed throughput",
}

// find is re.FindStringSubmatch(s) when s holds lit, a literal every
// match of re holds, and nil without running re otherwise: most lines of a
// log are none of the formats', and strings.Contains rejects them at
// memory speed where an unanchored pattern tries every start position
// (QA2 finding 9: 96 % of calibrate --train-log's time, 1 MB/s). When
// every match of re begins with start, at most one character (^, \s or a
// non-word character) before it, re runs from just before start's first
// occurrence: no match begins earlier, so the leftmost match is the same.
func find(re *regexp.Regexp, s, lit, start string) []string {
	at, ok := searchFrom(s, lit, start)
	if !ok {
		return nil
	}
	return re.FindStringSubmatch(s[at:])
}

// findIndex is find's FindStringSubmatchIndex, its indexes into s.
func findIndex(re *regexp.Regexp, s, lit, start string) []int {
	at, ok := searchFrom(s, lit, start)
	if !ok {
		return nil
	}
	m := re.FindStringSubmatchIndex(s[at:])
	for i := range m {
		if m[i] >= 0 {
			m[i] += at
		}
	}
	return m
}

// searchFrom is where find runs re in s: 0, or one byte before start's first
// occurrence; ok false when s lacks lit or start.
func searchFrom(s, lit, start string) (int, bool) {
	if !strings.Contains(s, lit) {
		return 0, false
	}
	if start == "" {
		return 0, true
	}
	i := strings.Index(s, start)
	if i < 0 {
		return 0, false
	}
	if i == 0 {
		return 0, true
	}
	// One byte back; a multi-byte rune there ([^A-Za-z_] matches it) is
	// taken whole.
	j := i - 1
	for j > 0 && !utf8.RuneStart(s[j]) {
		j--
	}
	return j, true
}

// compHeader is compHead's match of line: it starts with "[" and ends,
// but for \s, with "]:".
func compHeader(line string) []string {
	if !strings.HasPrefix(line, "[") || !strings.HasSuffix(strings.TrimRight(line, "\t\n\f\r "), "]:") {
		return nil
	}
	return compHead.FindStringSubmatch(line)
}

// tqdmBar is hfBar's match of seg, which holds its rate's unit.
func tqdmBar(seg string) []string {
	if !strings.Contains(seg, "s/it") && !strings.Contains(seg, "it/s") {
		return nil
	}
	return hfBar.FindStringSubmatch(seg)
}

// read records what line states of the run (RunFacts); a figure out of
// range is not a statement and is skipped. Each pattern runs only on lines
// holding its literal.
func (f *RunFacts) read(line string, at int) {
	num := func(v string) int64 {
		n, err := strconv.ParseInt(strings.ReplaceAll(v, ",", ""), 10, 64)
		if err != nil || n <= 0 {
			return 0
		}
		return n
	}
	if strings.Contains(line, " ..") {
		if m := argDump.FindStringSubmatch(line); m != nil {
			// Megatron prints its arguments with 48 − len(name) dots
			// (megatron/training/arguments.py _print_args at NVIDIA/
			// Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553), DeepSpeed its
			// config with 29 − len(name) (deepspeed/runtime/config.py
			// DeepSpeedConfig.print at edaa7221267243c7be7fb49c5d5f5c4fb97b4641): the count tells whose
			// line it is (DeepSpeed's world_size is the data-parallel one).
			key, dots, v := m[1], len(m[2]), num(m[3])
			switch {
			case v == 0:
			case key == "train_batch_size" && dots == 29-len(key):
				f.GlobalBatch, f.GlobalBatchLine, f.GlobalBatchWhat = v, at, "train_batch_size"
			case dots != 48-len(key):
			case key == "global_batch_size" && f.GlobalBatchWhat != "global batch size":
				f.GlobalBatch, f.GlobalBatchLine, f.GlobalBatchWhat = v, at, "global_batch_size"
			case key == "world_size":
				f.WorldSize, f.WorldSizeLine = v, at
			case key == "seq_length":
				f.SeqLen, f.SeqLenLine, f.SeqLenWhat = v, at, "seq_length"
			}
		}
		return
	}
	if strings.Contains(line, "with local batch size ") {
		if m := titanGBS.FindStringSubmatch(line); m != nil && num(m[1]) > 0 {
			f.GlobalBatch, f.GlobalBatchLine, f.GlobalBatchWhat = num(m[1]), at, "global batch size"
		}
		if m := titanSeq.FindStringSubmatch(line); m != nil && num(m[1]) > 0 {
			f.SeqLen, f.SeqLenLine, f.SeqLenWhat = num(m[1]), at, "sequence length"
		}
		return
	}
	if strings.Contains(line, "Total train batch size (w. parallel, distributed & accumulation) = ") {
		if m := hfGBS.FindStringSubmatch(line); m != nil && num(m[1]) > 0 {
			f.GlobalBatch, f.GlobalBatchLine, f.GlobalBatchWhat = num(m[1]), at, "Total train batch size"
		}
		return
	}
	if strings.Contains(line, "global_batch_size") && f.GlobalBatchWhat != "global batch size" {
		// The last line's: NeMo's rampup_batch_size changes it during
		// the run, and the steady state is read from the last lines.
		if m := nemoGBS.FindStringSubmatch(line); m != nil && num(m[1]) > 0 {
			f.GlobalBatch, f.GlobalBatchLine, f.GlobalBatchWhat = num(m[1]), at, "global_batch_size"
		}
	}
	if strings.Contains(line, " total parameters") {
		if m := titanParams.FindStringSubmatch(line); m != nil && num(m[1]) > 0 {
			f.Params, f.ParamsLine = num(m[1]), at
		}
		return
	}
	if strings.Contains(line, "GiB memory") && strings.Contains(line, " capacity: ") {
		if m := titanCap.FindStringSubmatch(line); m != nil {
			if gib, err := strconv.ParseFloat(m[1], 64); err == nil && gib > 0 {
				f.DeviceGiB, f.DeviceLine, f.DeviceWhat = gib, at, "capacity"
			}
		}
	}
}

// devicePct records the device size a torchtitan metrics line implies
// (memory gib at pct percent of it), unless the log's capacity line gave
// it. Below 10 % the two-decimal figures leave it too uncertain.
func (f *RunFacts) devicePct(gib float64, pct string, at int) {
	p, err := strconv.ParseFloat(pct, 64)
	if err != nil || p < 10 || p > 100 || f.DeviceWhat == "capacity" {
		return
	}
	if p > f.pct { // the largest share, the least rounding
		f.DeviceGiB, f.DeviceLine, f.DeviceWhat, f.pct = gib/p*100, at, fmt.Sprintf("memory %.2fGiB is %.2f%% of it", gib, p), p
	}
}

// addStep appends st to l's steps: another rank's line of a step already
// read (or the same line repeated) counts once with the largest memory. A
// step number below the last that the same rank's lines read (its prefix,
// or none) is a second run in the file, refused: a restart, or a resume
// from a checkpoint, which logs the step numbers of the first run again
// (qa20 M5: such a repeat was merged into the first run's steps as
// another rank's line, and the second run's times dropped). So is a step
// number never read before below the last step read.
func (l *TrainLog) addStep(st TrainLogStep, seen map[int64]int) error {
	stream := l.streamAt(st.Line)
	if l.last == nil {
		l.last = map[string]TrainLogStep{}
	}
	if prev, ok := l.last[stream]; ok && st.Step < prev.Step {
		return l.restart(st, prev, stream)
	}
	l.last[stream] = st
	if i, ok := seen[st.Step]; ok {
		l.Steps[i].Reserved = max(l.Steps[i].Reserved, st.Reserved)
		l.Steps[i].Memory = l.Steps[i].Memory || st.Memory
		return nil
	}
	if k := len(l.Steps); k > 0 && st.Step < l.Steps[k-1].Step {
		return l.restart(st, l.Steps[k-1], "")
	}
	seen[st.Step] = len(l.Steps)
	l.Steps = append(l.Steps, st)
	return nil
}

// restart is the error for step st read after prev, a later step, on the
// lines of stream ("" for lines without a rank prefix).
func (l *TrainLog) restart(st, prev TrainLogStep, stream string) error {
	of, ranks := "", ""
	if stream != "" {
		of = " on the " + strings.TrimSuffix(stream, ":") + " lines"
	} else {
		// Unprefixed ranks' logs put one after another (cat rank*.log)
		// read the same (final read R2).
		ranks = "; or it holds several ranks' logs one after another without torchrun's [rankN]: prefixes: give one rank's"
	}
	return fmt.Errorf("%s:%d: step %d after step %d (line %d)%s: the log holds more than one run (a restart, or a resume from a checkpoint, logs its step numbers again); give the lines of one run, e.g. from line %d on for the last%s",
		l.File, st.Line, st.Step, prev.Step, prev.Line, of, st.Line, ranks)
}

// trainingBar is the total of the Trainer's training bar among the bars
// of a log: the one with the most distinct step numbers (evaluation bars
// restart at 1 for every evaluation), the larger total on a tie.
func trainingBar(bars []hfBarLine) int64 {
	steps := map[int64]map[int64]bool{}
	for _, b := range bars {
		if steps[b.total] == nil {
			steps[b.total] = map[int64]bool{}
		}
		steps[b.total][b.st.Step] = true
	}
	var best int64
	for t, s := range steps {
		if len(s) > len(steps[best]) || len(s) == len(steps[best]) && t > best {
			best = t
		}
	}
	return best
}

// nemoPrinterStep reads a NeMo ProgressPrinter line (nemoLine's match
// m): ok false when it prints no train_step_timing (TimingCallback not
// among the callbacks). The step is global_step (the optimizer steps
// before this one, counted across epochs), or the epoch's iteration when
// the line has none.
func nemoPrinterStep(m []string) (st TrainLogStep, ok bool, err error) {
	epoch, err1 := strconv.ParseInt(m[1], 10, 64)
	iter, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		return st, false, fmt.Errorf("epoch %s, iteration %s is out of range", m[1], m[2])
	}
	st.Epoch, st.Step = epoch, iter
	var f nemoFields
	for _, kv := range strings.Split(m[3], " | ") {
		if k, v, found := strings.Cut(kv, ": "); found {
			if err := f.set(k, strings.TrimSpace(v)); err != nil {
				return st, false, err
			}
		}
	}
	if f.hasStep {
		st.Step = f.step
	}
	st.TimeMS, st.Reserved, st.Memory = f.timeMS, f.reserved, f.memory
	return st, f.hasTime, nil
}

// nemoBarStep reads a NeMo progress bar (nemoBar's match m, its postfix
// holding train_step_timing in s): the step is the bar's count of the
// epoch's optimizer steps (its global_step, to 3 or 4 significant digits,
// is not used).
func nemoBarStep(m []string) (st TrainLogStep, err error) {
	epoch, err1 := strconv.ParseInt(m[1], 10, 64)
	n, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("progress bar Epoch %s, %s steps is out of range: is the file a NeMo log?", m[1], m[2])
	}
	if epoch != 0 {
		return st, fmt.Errorf("NeMo progress bar of epoch %d: the bar counts each epoch's steps from 0 again, so its steps after epoch 0 cannot be told from a restart; give the lines of epoch 0, or run with NeMo's ProgressPrinter (MegatronStrategy replace_progress_bar=True, the default), whose lines carry global_step", epoch)
	}
	var f nemoFields
	for _, kv := range strings.Split(m[3], ", ") {
		if k, v, found := strings.Cut(kv, "="); found {
			if err := f.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
				return st, fmt.Errorf("%w: is the file a NeMo log?", err)
			}
		}
	}
	if !f.hasTime {
		return st, &valueError{nemoTiming + "=", "", fmt.Sprintf("the progress bar prints %q with no value: the step has no time; give the log of a run whose bar shows it", nemoTiming+"=")}
	}
	st.Step, st.TimeMS, st.Reserved, st.Memory = n, f.timeMS, f.reserved, f.memory
	return st, nil
}

// nemoFields are the NeMo metrics of one line that ParseTrainLog reads.
type nemoFields struct {
	timeMS           float64
	hasTime, hasStep bool
	step, reserved   int64
	memory           bool
}

// valueError is a metric's value that is not a number of its kind: its
// key and value locate it on the line (errColumn).
type valueError struct {
	key, value, msg string
}

func (e *valueError) Error() string { return e.msg }

// colAfter is the 1-based byte column of value in line after key's first
// occurrence (the field's name), 0 when either is not there: the error
// then names no column (loc), not one it did not find.
func colAfter(line, key, value string) int {
	i := strings.Index(line, key)
	if i < 0 {
		return 0
	}
	j := strings.Index(line[i+len(key):], value)
	if j < 0 {
		return 0
	}
	return i + len(key) + j + 1
}

// shift is col, a column of the part of a line that starts off bytes
// into it, as a column of the line; 0 (unknown) stays 0.
func shift(off, col int) int {
	if col == 0 {
		return 0
	}
	return off + col
}

// loc is file:line:col, or file:line when col is 0 (not located).
func loc(name string, line, col int) string {
	if col == 0 {
		return fmt.Sprintf("%s:%d", name, line)
	}
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

// errColumn is the column of a bad metric's value (a valueError), else of
// the line's first field, value after key.
func errColumn(line string, err error, key, value string) int {
	if ve := (*valueError)(nil); errors.As(err, &ve) {
		return colAfter(line, ve.key, ve.value)
	}
	return colAfter(line, key, value)
}

// set reads one NeMo metric (an empty value, as a bar prints a metric not
// logged yet, is none).
func (f *nemoFields) set(key, value string) error {
	if value == "" {
		return nil
	}
	switch key {
	case nemoTiming:
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || !(v >= 0 && v <= 1e9) {
			return &valueError{key, value, fmt.Sprintf("%s %q is not a time", nemoTiming, value)}
		}
		f.timeMS, f.hasTime = v*1e3, true
	case nemoStep:
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || !(v >= 0 && v <= 1e15) || v != math.Trunc(v) {
			return &valueError{key, value, fmt.Sprintf("global_step %q is not a step count", value)}
		}
		f.step, f.hasStep = int64(v), true
	case nemoReserved:
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || !(v >= 0 && v <= 1e15) {
			return &valueError{key, value, fmt.Sprintf("max_memory_reserved %q B is not a size", value)}
		}
		f.reserved, f.memory = int64(math.Round(v)), true
	}
	return nil
}

// set reads one "Train key: value" line of a Composer block.
func (b *composerBlock) set(key, value string) error {
	switch key {
	case "throughput/batches_per_sec":
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || v < 0 || v > 1e12 {
			return fmt.Errorf("throughput/batches_per_sec %q is not a rate", value)
		}
		if v > 0 {
			b.st.TimeMS = 1e3 / v
		}
		b.batchesPerSec = v
	case "throughput/samples_per_sec":
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || v < 0 || v > 1e15 {
			return fmt.Errorf("throughput/samples_per_sec %q is not a rate", value)
		}
		b.samplesPerSec = v
	case "memory/peak_reserved_mem", "memory/peak_reserved_mem_max":
		gb, err := strconv.ParseFloat(value, 64)
		if err != nil || gb < 0 || gb > 1e9 {
			return fmt.Errorf("%s %q GB is not a size", key, value)
		}
		b.st.Reserved, b.st.Memory = max(b.st.Reserved, int64(math.Round(gb*1e9))), true
	case "time/batch":
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("time/batch %q is not a batch count", value)
		}
		b.timeBatch, b.hasTime = v, true
	}
	return nil
}

// Steady-state rule: the first ⌈n/10⌉ logged lines (at least one) are
// warm-up and skipped: the first holds the first step (compilation, the
// caching allocator's first segments, NCCL's communicators; Megatron logs
// the first iteration on its own line "to document initialization
// overhead": megatron/training/training.py line 3560 at NVIDIA/Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553, since c40b6ea0, 2026-01-16),
// and a tenth more absorbs the learning-rate warm-up's first
// steps and clock ramps. The rule is fixed, not fitted to a log.
// MinSteadySteps lines must remain.
const MinSteadySteps = 3

// WarmupSteps is the number of leading logged lines a log of n lines
// skips.
func WarmupSteps(n int) int { return max(1, (n+9)/10) }

// SteadyState is the steady-state step time of a training log.
type SteadyState struct {
	// Warmup lines skipped, then the steps used: Lines of them, steps
	// First to Last as the log numbers them. Lines 0: the Hugging Face
	// Trainer's train_runtime summary stands in (Note says why).
	Warmup, Lines int
	First, Last   int64
	// Median, the quartiles and the range of the step time over the lines
	// used (each line's mean step over its interval).
	Median, Q1, Q3, Min, Max units.Duration
	// MedianTPS is torchtitan's median tokens per second per GPU, and
	// MedianSamplesPerSec DeepSpeed's median CurrSamplesPerSec (0 for the
	// others).
	MedianTPS, MedianSamplesPerSec float64
	// Reserved is the largest max reserved memory the used lines print
	// (torchtitan, Composer, NeMo) or the log's report_memory (Megatron), bytes;
	// 0: none.
	Reserved     int64
	ReservedLine int
	// Note says what the step time is when it is not the steady state of
	// step lines.
	Note string
}

// StepWork is what one optimizer step of the run trains, from the
// scenario: the figures a log's throughput is divided into.
type StepWork struct {
	// Tokens a GPU's data-parallel rank trains per step over its
	// model-parallel degree (micro_batch × grad_accum × seq_len / cp):
	// torchtitan's step time is Tokens / tps.
	Tokens float64
	// Samples is the global batch, micro_batch × grad_accum × dp
	// (DeepSpeed's train_batch_size): DeepSpeed's step time is Samples /
	// CurrSamplesPerSec.
	Samples float64
	// GradAccum is the scenario's micro-steps per optimizer step, held
	// against DeepSpeed's micro_step / global_step (0: not checked).
	GradAccum int64
}

// Steady is l's steady-state step time; work is used by the formats that
// print a throughput (torchtitan, DeepSpeed), not by those that print a
// time or a rate of steps.
func (l *TrainLog) Steady(work StepWork) (*SteadyState, error) {
	if l.Format == TrainLogDeepSpeed && work.GradAccum > 0 {
		if err := l.checkGradAccum(work.GradAccum); err != nil {
			return nil, err
		}
	}
	steps := l.Steps
	if l.Format == TrainLogComposer {
		steps = nil
		for _, s := range l.Steps {
			if s.TimeMS > 0 {
				steps = append(steps, s)
			}
		}
		if len(steps) == 0 {
			return nil, fmt.Errorf("%s: %d Composer blocks, none with Train throughput/batches_per_sec: add composer's SpeedMonitor callback and log past its window_size batches (100 by default; the rate is printed once the window is full)", l.File, len(l.Steps))
		}
	}
	n := len(steps)
	w := WarmupSteps(n)
	if n-w < MinSteadySteps {
		if l.Format == TrainLogHFTrainer && l.Summary != nil {
			return l.summarySteady(n, w)
		}
		return nil, fmt.Errorf("%s: %d logged steps, %d after skipping %d of warm-up: need at least %d (%d logged lines): %s",
			l.File, n, max(0, n-w), w, MinSteadySteps, MinSteadySteps+WarmupSteps(MinSteadySteps+1), moreSteps[l.Format])
	}
	used := steps[w:]
	secs := make([]float64, len(used))
	var tps, sps []float64
	for i, s := range used {
		switch l.Format {
		case TrainLogTorchtitan:
			if !(s.TPS > 0) {
				return nil, fmt.Errorf("%s:%d: tps 0 at step %d: the step has no throughput to time; give a log of a run that trained", l.File, s.Line, s.Step)
			}
			secs[i] = work.Tokens / s.TPS
			tps = append(tps, s.TPS)
		case TrainLogDeepSpeed:
			if !(s.SamplesPerSec > 0) {
				return nil, fmt.Errorf("%s:%d: CurrSamplesPerSec 0 at global_step %d: the step has no throughput to time; give a log of a run that trained", l.File, s.Line, s.Step)
			}
			secs[i] = work.Samples / s.SamplesPerSec
			sps = append(sps, s.SamplesPerSec)
		default:
			if !(s.TimeMS > 0) {
				return nil, fmt.Errorf("%s:%d: %s at step %d: give a log of a run that trained", l.File, s.Line, zeroTime[l.Format], s.Step)
			}
			secs[i] = s.TimeMS / 1e3
		}
		if !(secs[i] > 0 && secs[i] < 1e6) {
			return nil, fmt.Errorf("%s:%d: a step of %g s at step %d is out of range: check the scenario's micro_batch, grad_accum and seq_len against the run", l.File, s.Line, secs[i], s.Step)
		}
	}
	slices.Sort(secs)
	q := func(p float64) units.Duration { return seconds(stat.Quantile(p, stat.LinInterp, secs, nil)) }
	ss := &SteadyState{Warmup: w, Lines: len(used), First: used[0].Step, Last: used[len(used)-1].Step,
		Median: seconds(median(secs)), Q1: q(0.25), Q3: q(0.75), Min: seconds(secs[0]), Max: seconds(secs[len(secs)-1])}
	if tps != nil {
		slices.Sort(tps)
		ss.MedianTPS = median(tps)
	}
	if sps != nil {
		slices.Sort(sps)
		ss.MedianSamplesPerSec = median(sps)
	}
	switch l.Format {
	case TrainLogTorchtitan, TrainLogComposer, TrainLogNeMo:
		for _, s := range used {
			if s.Reserved > ss.Reserved {
				ss.Reserved, ss.ReservedLine = s.Reserved, s.Line
			}
		}
	case TrainLogMegatron:
		ss.Reserved, ss.ReservedLine = l.MaxReserved, l.MaxReservedLine
	}
	// DeepSpeed's memory is allocated, not reserved: no Reserved.
	return ss, nil
}

// checkGradAccum holds DeepSpeed's micro_step / global_step, the
// engine.step() calls per optimizer step, to the scenario's grad_accum at
// epoch 0 (the counters are never reset by DeepSpeed itself). A trainer
// that runs several forwards per engine.step() (Megatron-DeepSpeed's
// ALCF fork with GAS 8 prints micro_step = global_step) restarts the
// timer at each forward (ThroughputTimer.start sets start_time on every
// call, engine.forward calls it), so the line times only the last
// micro-batch and the step: refused either way.
func (l *TrainLog) checkGradAccum(ga int64) error {
	for _, s := range l.Steps {
		if s.Epoch != 0 || s.Step <= 0 {
			continue
		}
		if s.MicroStep%ga != 0 || s.MicroStep/ga != s.Step {
			return fmt.Errorf("%s:%d: micro_step %d at global_step %d: %s engine.step() calls per optimizer step, the scenario's grad_accum is %d: set it to the run's (--set training.grad_accum=N); if the run accumulated more micro-batches than that (a trainer running several forwards per engine.step(), as Megatron-DeepSpeed does), the timer covers only the last and the log gives no step time",
				l.File, s.Line, s.MicroStep, s.Step, strconv.FormatFloat(float64(s.MicroStep)/float64(s.Step), 'g', 4, 64), ga)
		}
	}
	return nil
}

// summarySteady is the Hugging Face Trainer's mean step over the whole of
// train(), for a log whose bars are too few (n, w skipped).
func (l *TrainLog) summarySteady(n, w int) (*SteadyState, error) {
	s := l.Summary
	step, how := 0.0, ""
	switch {
	case s.MaxSteps > 0 && s.Runtime > 0:
		step, how = s.Runtime/float64(s.MaxSteps), fmt.Sprintf("train_runtime %g s over the bar's %d steps", s.Runtime, s.MaxSteps)
	case s.StepsPerSecond > 0:
		step, how = 1/s.StepsPerSecond, fmt.Sprintf("1 / train_steps_per_second %g", s.StepsPerSecond)
	}
	if !(step > 0 && step < 1e6) {
		return nil, fmt.Errorf("%s:%d: train_runtime %g s, train_steps_per_second %g: no step time to fit; give a log of a run that trained", l.File, s.Line, s.Runtime, s.StepsPerSecond)
	}
	d := seconds(step)
	bars := fmt.Sprintf("%d progress bar steps, %d after %d of warm-up, too few for a steady state", n, max(0, n-w), w)
	if n == 0 {
		bars = "no progress bar lines (tqdm writes them to stderr: capture 2>&1)"
	}
	note := fmt.Sprintf("%s; the summary at line %d gives the mean step of the whole run (%s), warm-up, evaluation and checkpoint saves included: an upper bound of the step", bars, s.Line, how)
	return &SteadyState{Median: d, Q1: d, Q3: d, Min: d, Max: d, Note: note}, nil
}

// moreSteps is the fix for a log of too few steps, per format.
var moreSteps = map[string]string{
	TrainLogTorchtitan: "log more steps (torchtitan metrics.log_freq, Megatron --log-interval) or run longer",
	TrainLogMegatron:   "log more steps (torchtitan metrics.log_freq, Megatron --log-interval) or run longer",
	TrainLogHFTrainer:  "run longer, and capture the progress bar (tqdm writes it to stderr: 2>&1) with its carriage returns",
	TrainLogComposer:   "log more batches (console_log_interval: 1ba) or run longer past SpeedMonitor's window_size",
	TrainLogDeepSpeed:  "log more steps (DeepSpeed's steps_per_print) or run longer",
	TrainLogNeMo:       "log more steps (MegatronStrategy progress_interval, 1 by default) or run longer",
}

// zeroTime names a step without time, per format.
var zeroTime = map[string]string{
	TrainLogMegatron:  "elapsed time per iteration 0 ms",
	TrainLogHFTrainer: "a progress bar rate of 0 steps per second",
	TrainLogComposer:  "throughput/batches_per_sec 0",
	TrainLogNeMo:      "train_step_timing in s 0",
}

// seconds is s seconds as a Duration.
func seconds(s float64) units.Duration { return units.Duration(math.Round(s * float64(units.Second))) }

// validateStep tells whether the step line matched at i is torchtitan's
// "validate step:" (log_validation), not a training step.
func validateStep(line string, i int) bool {
	k := i + strings.Index(line[i:], "step:")
	return strings.HasSuffix(strings.TrimRight(line[:k], " \t"), "validate")
}

// median of sorted xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
