package sptrsv

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// tickets runs the workers of a synchronization-free solve: they take the
// logical rows k = 0 … n−1 from a counter, in the order of the
// dependencies, and wait (yielding) on the rows they depend on. A done
// context stops them.
type tickets struct {
	next atomic.Int64
	stop atomic.Bool
	done <-chan struct{}
}

// canceled reports whether the context is done, and stops the workers if
// it is.
func (t *tickets) canceled() bool {
	if t.done == nil {
		return false
	}
	select {
	case <-t.done:
		t.stop.Store(true)
		return true
	default:
		return false
	}
}

// wait yields until ready reports true; it returns false when the workers
// are stopped first.
func (t *tickets) wait(ready func() bool) bool {
	for spin := 0; !ready(); spin++ {
		if t.stop.Load() || spin%64 == 63 && t.canceled() {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// runTickets solves the n logical rows of an with its workers: solve(i)
// solves row i (i = k for a lower triangle, n−1−k for an upper one) and
// returns false when it was stopped. It reports whether every row was
// solved.
func runTickets(ctx context.Context, an *Analysis, t *tickets, solve func(i int) bool) bool {
	n := an.n
	t.done = ctx.Done()
	var wg sync.WaitGroup
	w := max(1, min(an.workers, n))
	wg.Add(w)
	for range w {
		go func() {
			defer wg.Done()
			for !t.stop.Load() {
				k := int(t.next.Add(1) - 1)
				if k >= n {
					return
				}
				i := k
				if an.triangle == Upper {
					i = n - 1 - k
				}
				if !solve(i) {
					return
				}
			}
		}()
	}
	wg.Wait()
	return !t.stop.Load()
}

// helpers are the w − 1 goroutines that join the calling one on the wide
// levels of a solve, started at the first: run(do) runs do(k) on helper k
// = 1 … w−1 and on the caller as 0, and returns when all have returned.
// do takes its work from a shared counter, so a helper that runs it twice
// finds nothing left. close ends the helpers.
type helpers struct {
	w     int
	tasks chan func(worker int)
	wg    sync.WaitGroup
}

func (h *helpers) run(do func(worker int)) {
	if h.tasks == nil {
		h.tasks = make(chan func(int))
		for k := 1; k < h.w; k++ {
			go func() {
				for f := range h.tasks {
					f(k)
					h.wg.Done()
				}
			}()
		}
	}
	h.wg.Add(h.w - 1)
	for range h.w - 1 {
		h.tasks <- do
	}
	do(0)
	h.wg.Wait()
}

func (h *helpers) close() {
	if h.tasks != nil {
		close(h.tasks)
	}
}
