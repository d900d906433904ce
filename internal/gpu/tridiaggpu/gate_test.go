//go:build cuda

package tridiaggpu

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/gpuclock"
	"github.com/bandsolve/bandsolve/tridiag"
)

// Gated and host-paced timing leave in x the plan's own solve of the
// batch, bit for bit, and report positive times.
func TestTimeGated(t *testing.T) {
	defer clk.SetHostPaced(false)
	r := rand.New(rand.NewPCG(7, 8))
	for _, paced := range []bool{false, true} {
		clk.SetHostPaced(paced)
		for _, n := range []int{100, 3000} {
			shape := tridiag.Shape{N: n, G: 7}
			bt := newBatch[float64](r, shape, 4)
			p, err := NewPlan[float64](dev, shape, tridiag.Options{})
			require.NoError(t, err)
			want := make([]float64, len(bt.d))
			require.NoError(t, p.Solve(context.Background(), bt.a, bt.b, bt.c, bt.d, want))
			bufs := make([]*cuda.Buffer[float64], 6)
			for i, h := range [][]float64{bt.a, bt.b, bt.c, bt.d, bt.d, bt.d} {
				bufs[i], err = cuda.Upload(dev, h)
				require.NoError(t, err)
			}
			reps := 5
			if n == 100 {
				reps = gpuclock.GateMaxReps + 6 // beyond the gate's repetitions: timed host-paced
			}
			times, err := p.Time(context.Background(), clk.Timer(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], 1, reps)
			require.NoError(t, err, "host-paced %v, N=%d", paced, n)
			require.Len(t, times, reps)
			for _, tm := range times {
				assert.Greater(t, tm, time.Duration(0))
			}
			got := make([]float64, len(want))
			require.NoError(t, bufs[4].CopyTo(got))
			assert.Equal(t, want, got, "host-paced %v, N=%d: x after timing", paced, n)
			for _, b := range bufs {
				require.NoError(t, b.Free())
			}
			require.NoError(t, p.Close())
		}
	}
}
