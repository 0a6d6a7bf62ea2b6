package sweep

import (
	"context"
	"errors"
	"iter"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// RunConfig configures Run.
type RunConfig struct {
	// Indices are the points to run, in the order their rows are emitted.
	Indices iter.Seq[int]
	// Jobs is how many points run at once (≤ 0: runtime.GOMAXPROCS(0); at most
	// MaxJobs).
	Jobs int
	// Eval computes one point; it is called from several goroutines at once.
	Eval func(index int) Row
	// Emit receives every row in Indices order, from one goroutine, as soon
	// as the rows before it are done (a reorder buffer holds the rest). An
	// error stops the run.
	Emit func(Row) error
}

// MaxJobs bounds how many points or replays run at once (Jobs above it
// count as MaxJobs): the reorder window and its channels are sized by Jobs,
// so -j 99999999999 allocated them until the process ran out of memory.
const MaxJobs = 1024

// DefaultJobs is how many points or replays run at once when the options
// do not say (Jobs ≤ 0; -j's default): runtime.GOMAXPROCS(0), which since
// Go 1.25 follows the cgroup CPU limit of a container (golang/go#73193,
// go.dev/blog/container-aware-gomaxprocs), where runtime.NumCPU() is the
// node's CPUs: a pod limited to 4 CPUs on a 64-core node ran 64 replays
// at once (QA25 M5). It is at most MaxJobs: a GOMAXPROCS above it (the
// variable set to 5000, a host of more CPUs) sized the reorder window and
// its channels past the bound, and made -j's default one the command
// refused.
func DefaultJobs() int { return min(runtime.GOMAXPROCS(0), MaxJobs) }

// Run evaluates the points on Jobs goroutines and emits their rows in order.
// At most a small window of points (4·Jobs+16) runs ahead of the oldest
// point not yet emitted, so memory stays bounded however slow one point is.
// It returns the first Emit error, or ctx's error if ctx ends first.
func Run(ctx context.Context, c RunConfig) error {
	jobs := jobs(c.Jobs)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type item struct {
		pos int
		row Row
	}
	results := make(chan item, jobs)
	window := make(chan struct{}, 4*jobs+16)
	emitted := make(chan error, 1)
	go func() {
		pending := map[int]Row{}
		next := 0
		var err error
		for it := range results {
			if err != nil {
				continue // drain so workers never block
			}
			pending[it.pos] = it.row
			for {
				r, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				<-window
				if err = c.Emit(r); err != nil {
					cancel(err)
					break
				}
			}
		}
		emitted <- err
	}()
	g := new(errgroup.Group)
	g.SetLimit(jobs)
	next := 0
feed:
	for idx := range c.Indices {
		pos := next
		next++
		select {
		case window <- struct{}{}:
		case <-ctx.Done():
			break feed
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			r := c.Eval(idx)
			select {
			case results <- item{pos, r}:
			case <-ctx.Done():
			}
			return nil
		})
	}
	_ = g.Wait()
	close(results)
	if err := <-emitted; err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}
