package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/zerosim/zerosim/reports"
	"golang.org/x/term"
)

// interruptible is cmd's context, cancelled on SIGINT or SIGTERM: long work
// (sweep, plan) stops between points and leaves no partial file.
func interruptible(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// isTerminal reports whether w is a terminal: progress shows there and is
// quiet when piped. Standard output is seen through the writers execute
// wraps it in (warnFirst over reports.ErrWriter).
func isTerminal(w io.Writer) bool {
	for {
		switch v := w.(type) {
		case warnFirst:
			w = v.w
		case *reports.ErrWriter:
			w = v.W
		case *os.File:
			return term.IsTerminal(int(v.Fd()))
		default:
			return false
		}
	}
}

// replayProgress is a zero.Options.Progress that shows a bar of the task
// instances replayed on errOut when it is a terminal and the replay has
// run for half a second (a short one shows nothing), and done, which
// clears it. Piped, both do nothing.
func replayProgress(errOut io.Writer, what string) (progress func(done, total int64), done func()) {
	if !isTerminal(errOut) {
		return nil, func() {}
	}
	return delayedBar(errOut, what)
}

// delayedBar is a bar on errOut (a terminal) that set draws from half a
// second after delayedBar was called, so that short work shows nothing,
// and done, which clears it. The total may grow between calls (compare
// learns how many replays it needs from the first ones).
func delayedBar(errOut io.Writer, what string) (set func(done, total int64), done func()) {
	start := time.Now()
	var bar *progressbar.ProgressBar // made at the first report after the delay
	set = func(d, total int64) {
		if time.Since(start) < 500*time.Millisecond {
			return
		}
		if bar == nil {
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(errOut), progressbar.OptionSetDescription(what),
				progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		} else if total != bar.GetMax64() {
			bar.ChangeMax64(total)
		}
		_ = bar.Set64(d)
	}
	done = func() {
		if bar != nil {
			_ = bar.Finish()
		}
	}
	return set, done
}
