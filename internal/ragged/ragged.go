// Package ragged holds what the ragged batches of packages tridiag and
// banded share: the offsets of systems of different lengths stored one
// after another, and a schedule that spreads their rows evenly over a
// pool of goroutines.
package ragged

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
)

// Offsets returns the prefix sums of lengths: off[g] is the first row of
// system g and off[len(lengths)] the rows of all the systems. Every length
// must be at least minLen and the total must stay below limit; otherwise
// ok is false and bad is the first system that breaks a rule (its length
// is below minLen, or the rows of systems 0…bad reach limit).
func Offsets(lengths []int, minLen, limit int) (off []int, bad int, ok bool) {
	off = make([]int, len(lengths)+1)
	for g, n := range lengths {
		if n < minLen || n >= limit-off[g] {
			return nil, g, false
		}
		off[g+1] = off[g] + n
	}
	return off, -1, true
}

// Locate returns the system g and its row i of the row k of a batch with
// offsets off (0 ≤ k < off[len(off)−1]).
func Locate(off []int, k int) (g, i int) {
	g = sort.Search(len(off)-1, func(g int) bool { return off[g+1] > k })
	return g, k - off[g]
}

// Longest returns the largest length of the batch with offsets off (0 for
// no systems).
func Longest(off []int) int {
	m := 0
	for g := 1; g < len(off); g++ {
		m = max(m, off[g]-off[g-1])
	}
	return m
}

// Schedule cuts a batch into tasks of consecutive systems with about the
// same number of rows, and hands them out to goroutines, the tasks of the
// most rows first, so that long and short systems mixed keep every
// goroutine busy to the end.
type Schedule struct {
	cut   []int // task t holds systems cut[t] … cut[t+1]−1
	order []int // the tasks, most rows first
}

// NewSchedule cuts the systems of a batch with offsets off into tasks:
// each task takes systems in order until it holds at least rows rows (a
// system longer than that is a task of its own, and the last task may
// hold fewer).
func NewSchedule(off []int, rows int) Schedule {
	rows = max(rows, 1)
	G := len(off) - 1
	cut := []int{0}
	for g := 0; g < G; {
		start := off[g]
		for g < G && off[g]-start < rows {
			g++
		}
		cut = append(cut, g)
	}
	if G == 0 {
		cut = cut[:1]
	}
	order := make([]int, len(cut)-1)
	for t := range order {
		order[t] = t
	}
	size := func(t int) int { return off[cut[t+1]] - off[cut[t]] }
	sort.SliceStable(order, func(i, j int) bool { return size(order[i]) > size(order[j]) })
	return Schedule{cut: cut, order: order}
}

// Tasks returns the number of tasks.
func (s Schedule) Tasks() int { return len(s.order) }

// Task returns the systems of task t, lo … hi−1, and where the task goes
// in the order the goroutines take them (0 first).
func (s Schedule) Task(t int) (lo, hi, rank int) {
	for r, u := range s.order {
		if u == t {
			rank = r
			break
		}
	}
	return s.cut[t], s.cut[t+1], rank
}

// Run calls solve(w, g) once for every system g of the batch on workers
// goroutines (w, from 0 to workers−1, says which one: its scratch), the
// systems of one task in increasing order on one goroutine. It stops
// handing out tasks once ctx is done, and returns when every goroutine
// has.
func (s Schedule) Run(ctx context.Context, workers int, solve func(w, g int)) {
	workers = max(1, min(workers, len(s.order)))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				r := int(next.Add(1)) - 1
				if r >= len(s.order) {
					return
				}
				t := s.order[r]
				for g := s.cut[t]; g < s.cut[t+1]; g++ {
					solve(w, g)
				}
			}
		}()
	}
	wg.Wait()
}
