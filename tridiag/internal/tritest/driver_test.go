package tritest

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bandsolve/bandsolve/tridiag/internal/tri"
)

// recorder is a testing.TB that records failures instead of reporting
// them, so that a check can be run on a broken solver and seen to fail.
// FailNow ends the calling goroutine, as testing.T's does.
type recorder struct {
	testing.TB
	failed bool
	first  string
}

func (r *recorder) Helper() {}

func (r *recorder) Log(...any) {}

func (r *recorder) Logf(string, ...any) {}

func (r *recorder) Fail() { r.failed = true }

func (r *recorder) Failed() bool { return r.failed }

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *recorder) Errorf(format string, args ...any) {
	if !r.failed {
		r.first = fmt.Sprintf(format, args...)
	}
	r.failed = true
}

func (r *recorder) FailNow() {
	r.failed = true
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) { r.Error(args...); r.FailNow() }

func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }

// failing runs the checks named (every check when none is) on s and
// returns the names of those that failed, sorted.
func failing[T tri.Float, W any](t *testing.T, s Solver[T, W], names ...string) []string {
	var out []string
	for _, c := range checks[T, W]() {
		if len(names) > 0 && !slices.Contains(names, c.name) {
			continue
		}
		rec := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.run(rec, s)
		}()
		<-done
		if rec.failed {
			out = append(out, c.name)
			t.Logf("%s: %s", c.name, firstLine(rec.first))
		}
	}
	slices.Sort(out)
	return out
}

// firstLine returns testify's "Error:" line of a failure message, or its
// first line.
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Error:") {
			return l
		}
	}
	return lines[0]
}

// scratch is the workspace of the test solvers: the Thomas algorithm's
// scratch and a solution buffer.
type scratch[T tri.Float] struct {
	n       int
	work, y []T
	used    bool
}

func newScratch[T tri.Float](n int) *scratch[T] {
	return &scratch[T]{n: n, work: make([]T, n), y: make([]T, n)}
}

// mutation is how a test solver departs from a correct one.
type mutation int

const (
	correct        mutation = iota
	wrongSign               // c enters with the wrong sign
	writesOnError           // x holds a partial solution after a breakdown
	readsA0                 // a[0] takes part
	modifiesInput           // d is overwritten
	allocates               // the workspace is ignored
	wrongRow                // the breakdown names the next row
	noPivotCheck            // zero and non-finite pivots go unreported
	takesSmallWS            // a workspace too small is replaced instead of refused
	dependsOnWS             // a reused workspace changes the last bit
	breaksAliasing          // x is scratch before d is read
	inaccurate              // the unknowns off by ±16 unit roundoffs, alternately
	shortSlices             // slices of different lengths are accepted
)

// thomas returns Thomas's algorithm as a Solver, with mutation m. Its
// option is ignored; options 0 and 1 are run.
func thomas[T tri.Float](m mutation) Solver[T, *scratch[T]] {
	solve := func(a, b, c, d, x []T, _ int, ws *scratch[T]) error {
		n := len(b)
		if m != shortSlices && (len(a) != n || len(c) != n || len(d) != n || len(x) != n) {
			panic("lengths differ")
		}
		if m == shortSlices {
			n = min(len(a), len(b), len(c), len(d), len(x))
			a, b, c, d, x = a[:n], b[:n], c[:n], d[:n], x[:n]
		}
		switch {
		case ws == nil || m == allocates:
			ws = newScratch[T](n)
		case n > ws.n && m == takesSmallWS:
			ws = newScratch[T](n)
		case n > ws.n:
			panic("workspace too small")
		}
		if n == 0 {
			return nil
		}
		y := ws.y[:n]
		if m == writesOnError || m == breaksAliasing {
			y = x[:n]
		}
		if m == breaksAliasing {
			copy(y, b)
		}
		cc := c
		switch m {
		case wrongSign:
			cc = Clone(c)
			for i := range cc {
				cc[i] = -cc[i]
			}
		case readsA0:
			cc = Clone(c)
			cc[0] += a[0]
		}
		var err error
		if m == noPivotCheck {
			unchecked(a, b, cc, d, y, ws.work[:n])
		} else {
			err = tri.Thomas(a, b, cc, d, y, ws.work[:n])
		}
		if err != nil {
			if m == wrongRow {
				err.(*tri.PivotError).Row++
			}
			return err
		}
		copy(x, y)
		switch m {
		case modifiesInput:
			copy(d, x)
		case dependsOnWS:
			if ws.used {
				x[0] = T(math.Nextafter(float64(x[0]), math.Inf(1)))
			}
		case inaccurate:
			e := 16 * UnitRoundoff[T]()
			for i := range x {
				x[i] = T(float64(x[i]) * (1 + e))
				e = -e
			}
		}
		ws.used = true
		return nil
	}
	return Solver[T, *scratch[T]]{
		Solve:        solve,
		NewWorkspace: func(n, _ int) *scratch[T] { return newScratch[T](n) },
		Opts:         func(int) []int { return []int{0, 1} },
		Tol:          ByPrecision[T](1e-5, 1e-12),
		Stable:       true,
	}
}

// unchecked is Thomas's algorithm without the pivot checks.
func unchecked[T tri.Float](a, b, c, d, x, cp []T) {
	n := len(b)
	cp[0], x[0] = c[0]/b[0], d[0]/b[0]
	for i := 1; i < n; i++ {
		piv := b[i] - T(a[i]*cp[i-1])
		cp[i] = c[i] / piv
		x[i] = (d[i] - T(a[i]*x[i-1])) / piv
	}
	for i := n - 2; i >= 0; i-- {
		x[i] -= T(cp[i] * x[i+1])
	}
}

// TestDriverPasses: Thomas's algorithm passes every check, in both
// precisions, with a growing workspace too.
func TestDriverPasses(t *testing.T) {
	Both(t, thomas[float32](correct), thomas[float64](correct))
	grows := thomas[float64](correct)
	inner := grows.Solve
	grows.Grows = true
	grows.Solve = func(a, b, c, d, x []float64, opt int, ws *scratch[float64]) error {
		if ws != nil && len(b) > ws.n {
			*ws = *newScratch[float64](len(b))
		}
		return inner(a, b, c, d, x, opt, ws)
	}
	t.Run("grows", func(t *testing.T) { Test(t, grows) })
}

// TestDriverFails: each broken solver fails the checks meant to catch it.
func TestDriverFails(t *testing.T) {
	for _, c := range []struct {
		m    mutation
		name string
		want []string
	}{
		{wrongSign, "wrong sign", []string{"BackwardStable", "RandomSizes", "Solve"}},
		{writesOnError, "writes x on error", []string{"Breakdown", "NeverSilentNaN"}},
		{readsA0, "reads a[0]", []string{"IgnoredEntries", "Solve"}},
		{modifiesInput, "modifies d", []string{"Solve"}},
		{allocates, "allocates", []string{"NoAllocation"}},
		{wrongRow, "names the wrong row", []string{"Breakdown"}},
		{noPivotCheck, "no pivot check", []string{"Breakdown", "NeverSilentNaN"}},
		{takesSmallWS, "takes a small workspace", []string{"Lengths"}},
		{dependsOnWS, "depends on the workspace", []string{"Solve", "Workspace"}},
		{breaksAliasing, "breaks aliasing", []string{"Breakdown", "NeverSilentNaN", "Solve"}},
		{inaccurate, "16 unit roundoffs off", []string{"BackwardStable"}},
		{shortSlices, "accepts short slices", []string{"Lengths"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, failing(t, thomas[float64](c.m), c.want...))
		})
	}
	assert.Empty(t, failing(t, thomas[float32](correct)))
}
