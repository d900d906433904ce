//go:build cuda

package groupgpu

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/nccl"
	"github.com/bandsolve/bandsolve/internal/nccl/ranktest"
	"github.com/bandsolve/bandsolve/tridiag"
)

// rankRows splits n rows over p ranks, the first 7 rows short of an even
// share, the last 7 over.
func rankRows(n, p int) []int {
	rows := make([]int, p)
	for k := range p {
		rows[k] = n*(k+1)/p - n*k/p
	}
	if p > 1 {
		rows[0] -= 7
		rows[p-1] += 7
	}
	return rows
}

// rankPart is rank r's arrays of w (interleaved), uploaded to dev: a, b,
// c, d and x.
func rankPart(t *testing.T, dev *cuda.Device, w whole, rows []int, r int) (tridiag.Shape, [5]*cuda.Buffer[float64]) {
	start := 0
	for k := range r {
		start += rows[k]
	}
	sh := tridiag.Shape{N: rows[r], G: w.g, Layout: tridiag.Interleaved(w.g)}
	var bufs [5]*cuda.Buffer[float64]
	for i, src := range [][]float64{w.a, w.b, w.c, w.d, nil} {
		host := make([]float64, sh.Len())
		if src != nil {
			copy(host, src[start*w.g:(start+rows[r])*w.g])
		}
		var err error
		bufs[i], err = cuda.Upload(dev, host)
		require.NoError(t, err)
	}
	return sh, bufs
}

// rankErr is the largest |x − x_ref| / max|x_ref| over rank r's rows.
func rankErr(t *testing.T, w whole, want []float64, rows []int, r int, x *cuda.Buffer[float64]) float64 {
	start := 0
	for k := range r {
		start += rows[k]
	}
	host := make([]float64, x.Len())
	require.NoError(t, x.CopyTo(host))
	worst, scale := 0.0, 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i, v := range host {
		worst = math.Max(worst, math.Abs(v-want[start*w.g+i]))
	}
	return worst / scale
}

// TestRankSplitInProcess: every GPU of the host a rank of one process
// (ncclCommInitAll), one goroutine a rank; each rank's rows against
// Thomas in float64 and, bit for bit, against SplitPlan on the same GPUs.
func TestRankSplitInProcess(t *testing.T) {
	lib, err := nccl.Load()
	if err != nil {
		t.Skipf("NCCL: %v", err)
	}
	P := all.Len()
	comms, err := lib.CommInitAll(all.Devices()...)
	require.NoError(t, err)
	defer nccl.DestroyAll(comms)
	w := newWhole(rand.New(rand.NewPCG(5, 5)), 3001*P, 33)
	rows := rankRows(w.n, P)
	want := w.solve()

	shapes := make([]tridiag.Shape, P)
	for k := range P {
		shapes[k] = tridiag.Shape{N: rows[k], G: w.g, Layout: tridiag.Interleaved(w.g)}
	}
	c := splitCase{rows: rows, layouts: strings.Repeat("i", P), g: w.g}
	ref, err := solveSplit[float64](t, all.Devices(), c, w)
	require.NoError(t, err)

	xs := make([]*cuda.Buffer[float64], P)
	errs := make([]error, P)
	var wg sync.WaitGroup
	for k := range P {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh, bufs := rankPart(t, all.Device(k), w, rows, k)
			for _, b := range bufs[:4] {
				defer b.Free()
			}
			p, err := NewRankSplitPlan[float64](comms[k], sh, rows)
			if errs[k] = err; err != nil {
				return
			}
			defer p.Close()
			if k == 0 {
				t.Log(p.Describe())
			}
			errs[k] = p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
			xs[k] = bufs[4]
		}()
	}
	wg.Wait()
	start := 0
	for k := range P {
		require.NoError(t, errs[k], "rank %d", k)
		defer xs[k].Free()
		assert.LessOrEqual(t, rankErr(t, w, want, rows, k, xs[k]), 1e-12, "rank %d", k)
		host := make([]float64, xs[k].Len())
		require.NoError(t, xs[k].CopyTo(host))
		for i, v := range host {
			if math.Float64bits(v) != math.Float64bits(ref[start*w.g+i]) {
				require.Failf(t, "ranks differ from the split plan", "rank %d row %d system %d: %v, split plan %v", k, i/w.g, i%w.g, v, ref[start*w.g+i])
			}
		}
		start += rows[k]
	}
}

// rankChild marks the processes TestRankSplitProcesses starts.
const rankChild = "BANDSOLVE_GROUPGPU_RANK_CHILD"

// TestRankSplitProcesses: one process a GPU, joined through the TCP
// bootstrap and NCCL, each solving its rows of one batch (TestRankSplitChild);
// with NCCL's default transports and with its socket transport (as between
// hosts).
func TestRankSplitProcesses(t *testing.T) {
	needGPUs(t, 2)
	if _, err := nccl.Load(); err != nil {
		t.Skipf("NCCL: %v", err)
	}
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"default", nil},
		{"sockets", []string{"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_IB_DISABLE=1", "NCCL_NET=Socket", "NCCL_SOCKET_IFNAME=lo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			n := all.Len()
			outs, errs, err := ranktest.Run(ctx, n, "TestRankSplitChild", rankChild, tc.env)
			require.NoError(t, err)
			for r := range n {
				if !assert.NoError(t, errs[r], "rank %d", r) || !assert.Contains(t, outs[r], "--- PASS: TestRankSplitChild", "rank %d", r) {
					t.Logf("rank %d's output:\n%s", r, outs[r])
				}
			}
		})
	}
}

// TestRankSplitChild is one rank of TestRankSplitProcesses.
func TestRankSplitChild(t *testing.T) {
	if os.Getenv(rankChild) == "" {
		t.Skip("a rank of TestRankSplitProcesses: runs in the processes that test starts")
	}
	env, err := nccl.FromEnv()
	require.NoError(t, err)
	lib, err := nccl.Load()
	require.NoError(t, err)
	dev := all.Device(env.LocalRank)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := nccl.Bootstrap(ctx, env.Addr, env.Rank, env.NRanks, func() (nccl.UniqueID, error) {
		var id nccl.UniqueID
		err := dev.Enqueue(func() (err error) { id, err = lib.GetUniqueID(); return })
		return id, err
	})
	require.NoError(t, err)
	comm, err := lib.CommInitRank(dev, env.NRanks, id, env.Rank)
	require.NoError(t, err)
	w := newWhole(rand.New(rand.NewPCG(9, 9)), 2500*env.NRanks, 65)
	rows := rankRows(w.n, env.NRanks)
	sh, bufs := rankPart(t, dev, w, rows, env.Rank)
	for _, b := range bufs {
		defer b.Free()
	}
	p, err := NewRankSplitPlan[float64](comm, sh, rows)
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, p.SolveDevice(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]))
	// Again, in place.
	require.NoError(t, p.SolveDevice(ctx, bufs[0], bufs[1], bufs[2], bufs[3], bufs[3]))
	want := w.solve()
	e := rankErr(t, w, want, rows, env.Rank, bufs[4])
	assert.LessOrEqual(t, e, 1e-12)
	assert.LessOrEqual(t, rankErr(t, w, want, rows, env.Rank, bufs[3]), 1e-12, "in place")
	if t.Failed() {
		_ = comm.Abort()
		return
	}
	require.NoError(t, comm.Destroy())
	t.Logf("%s: max error %.2e", p.Describe(), e)
}
