package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/units"
	"github.com/zerosim/zerosim/zero"
)

// loadScenario reads and loads the scenario a command was given (see
// scenarios.ReadInput: "" is the default example, "-" standard input, then a
// file or an embedded example) with the --set overrides, and holds the
// scenario's warnings (app.pending) until the command's checks pass. An NCCL pin that leaves a collective of the step no
// algorithm is refused at its key before them (zero.CheckPins). Errors are
// input errors (exit code 2).
func (a *app) loadScenario(arg string) (*scenarios.Scenario, error) {
	return a.load(arg, true)
}

// loadScenarioNoStep is loadScenario for a command that never replays the
// step (collective, whose --algo and --proto replace the pins; memory;
// calibrate's nccl-tests fit), which the step's pins do not concern
// (rev24: collective --set communication.nccl_algo=PAT --algo ring was
// refused).
func (a *app) loadScenarioNoStep(arg string) (*scenarios.Scenario, error) {
	return a.load(arg, false)
}

// load is loadScenario, with the pin check when pins is set.
func (a *app) load(arg string, pins bool) (*scenarios.Scenario, error) {
	in, err := scenarios.ReadInput(arg, a.in)
	if err != nil {
		return nil, inputError{err}
	}
	a.file, a.input = in.File, in
	s, err := in.Load(a.sets)
	if err == nil && pins {
		err = in.Place(a.sets, zero.CheckPins(s))
	}
	if err != nil {
		return nil, inputError{err}
	}
	a.loaded = s
	a.pending = append(a.pending, s.Warnings...)
	return s, nil
}

// atStage is the loaded scenario at ZeRO stage st as the loader reads it,
// the file and --set with parallelism.zero_stage=st after them: a stack
// preset's stage-dependent keys are filled in for that stage (torchtitan's
// DDP, fp32 parameters under bf16 autocast and 100 MiB buckets, at stage
// 0; qauser32 L2: zerosim memory showed its stage 0 as bf16 parameters
// beside an fp32 master). nil when that does not load, or loads with
// another layout than the loaded scenario's but for its stage: the
// per-stage tables then change the stage alone (memory.AtStage). Its
// warnings are not repeated.
func (a *app) atStage(st int) *scenarios.Scenario {
	if a.loaded == nil || a.input.Data == nil && a.input.File == "" {
		return nil
	}
	s, err := a.input.Load(append(slices.Clone(a.sets), "parallelism.zero_stage="+strconv.Itoa(st)))
	if err != nil || s.Parallelism.Stage != st {
		return nil
	}
	p, q := s.Parallelism, a.loaded.Parallelism
	p.Stage = q.Stage
	if p != q {
		return nil
	}
	return s
}

// replayError is a replay's refusal of the scenario as the loader's errors
// read (checkError).
func (a *app) replayError(err error) error {
	return inputError{checkError(a.input, a.sets, a.loaded, err)}
}

// checkError is err, a refusal of s (read from in with the --set sets) by
// zero.Check or a replay, as the loader's errors read: at the key's line
// and column, or its --set, with the fix, when err names a key or is an
// overflow of int64 (put at training.micro_batch, or model.seq_len when
// the micro-batch is 1); else the file first, then the message without
// the package's prefix ("default.yaml: communication.bucket_size 1 B cuts
// group …"). validate and run refuse alike (qa22 M3: the overflow said
// "mb.yaml: FLOPs per micro-step overflow …" with no position).
func checkError(in scenarios.Input, sets []string, s *scenarios.Scenario, err error) error {
	msg := plain(err)
	var se *scenarios.Error
	switch {
	case in.Data == nil:
	case errors.As(err, &se) && se.File == "" && se.Path != "":
		return in.Place(sets, se)
	case errors.Is(err, units.ErrOverflow) && !strings.Contains(msg, "(") && s != nil:
		// "block matmul FLOPs overflow: value does not fit in 64 bits"
		// (training.micro_batch 1048576, in its range) named nothing to
		// change.
		key := "training.micro_batch"
		if s.Training.MicroBatch <= 1 {
			key = "model.seq_len"
		}
		if at := s.ActivationsKey(); at != "" {
			// A model sized by its parameter count alone: the count is a
			// factor too (qauser s28 L2: it blamed micro_batch 1 ×
			// seq_len 0).
			msg = fmt.Sprintf("params %d × micro_batch %d × seq_len %d: %s (the step's FLOPs or bytes do not fit in int64 at this size: lower %s, training.micro_batch or model.seq_len)", s.Model.TotalParams(), s.Training.MicroBatch, s.Model.SeqLen, msg, at)
			return in.Place(sets, &scenarios.Error{Path: at, Msg: msg})
		}
		// qauser33 L5: context parallelism splits each sequence over cp
		// ranks (a 1M-token step ran at cp 64), so it is a fix too.
		msg = fmt.Sprintf("micro_batch %d × seq_len %d: %s (the step's FLOPs or bytes do not fit in int64 at this size: lower training.micro_batch or model.seq_len, or raise parallelism.cp)", s.Training.MicroBatch, s.Model.SeqLen, msg)
		return in.Place(sets, &scenarios.Error{Path: key, Msg: msg})
	case errors.As(err, new(*memory.TooManyBucketsError)):
		// At the key's line, or the --set that gave it (final read R2:
		// "default.yaml: communication.bucket_size 1 B …" for a --set).
		return in.Place(sets, &scenarios.Error{Path: "communication.bucket_size", Msg: msg})
	}
	if errors.Is(err, units.ErrOverflow) && !strings.Contains(msg, "(") {
		msg += " (the step's FLOPs or bytes do not fit in int64 at this size: lower training.micro_batch or model.seq_len, or raise parallelism.cp)"
	}
	return fmt.Errorf("%s: %s", in.File, msg)
}

// plain is an error's message without the prefixes of the packages that
// made it ("zero: ", "memory: ", "collectives: ", "sweep: ", "numerics: "
// …): the user meets a key or a flag, never a Go package. A prefix goes
// where it starts an error's own text: the message's start, and the start
// of each error it wraps (numerics wraps its own: "drift K 1: numerics:
// qwZ/qgZ …"), found through errors.Unwrap, so text a user gave ("--set
// model.name=a: memory: b") is never edited. Main prints every error
// through it.
func plain(err error) string {
	msg := err.Error()
	tail := ""
	if inner := errors.Unwrap(err); inner != nil {
		if in := inner.Error(); strings.HasSuffix(msg, in) {
			msg, tail = strings.TrimSuffix(msg, in), plain(inner)
		}
	}
	for _, p := range []string{"zero: ", "memory: ", "collectives: ", "sweep: ", "numerics: ", "sim: ", "units: ", "scenarios: ", "reports: ", "topology: "} {
		if m, ok := strings.CutPrefix(msg, p); ok {
			msg = m
			break
		}
	}
	return msg + tail
}

// fileArg is the scenario argument of a command taking [FILE]: "" (the
// default example) when none was given.
func fileArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return ""
}

// stdinOnce rejects "-" (standard input) given more than once: the second
// read found it empty and said "<stdin>: empty file".
func stdinOnce(files []string) error {
	if n := slices.Index(files, "-"); n >= 0 && slices.Contains(files[n+1:], "-") {
		return inputError{errors.New(`"-" (standard input) is given more than once: it can be read once (save the scenario to a file for the others)`)}
	}
	return nil
}

// noStdin rejects "-" where a command reads a named file only (nccl-tests
// logs, sweep shards, a config.json, a trace, a calibration): it said
// "open -: no such file or directory". what names the flag or argument.
func noStdin(what, path string) error {
	if path != "-" {
		return nil
	}
	return inputError{fmt.Errorf("%s -: standard input is not read here (save it to a file and give its name)", what)}
}
