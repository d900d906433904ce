//go:build cuda

package nccl

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/nccl/ranktest"
)

// The GPU tests: one rank (any GPU machine), the GPUs of one process
// through CommInitAll, and one process a GPU through the TCP bootstrap
// (with NCCL's default transports, and with the socket transport that
// ranks on different hosts use). They skip when libnccl is missing and,
// those of several GPUs, on a machine of one.

// TestMain keeps NCCL's NVLink multicast (NVLS) off unless the
// environment says otherwise: the tests do not need it, and on shared
// NVSwitch hosts it can take the GPUs out of service. The ranks that
// TestMultiProcess starts inherit the setting.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("NCCL_NVLS_ENABLE"); !ok {
		_ = os.Setenv("NCCL_NVLS_ENABLE", "0")
	}
	os.Exit(m.Run())
}

// loadOrSkip loads libnccl or skips the test.
func loadOrSkip(t *testing.T) *Lib {
	t.Helper()
	lib, err := Load()
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("the NCCL tests need libnccl (libnccl.so.2 where the loader finds it, or %s=path): %v", LibVar, err)
	}
	require.NoError(t, err)
	t.Logf("NCCL %v from %s", lib.Version(), lib.Path())
	return lib
}

// gpusOrSkip returns the number of GPUs, skipping with fewer than two.
func gpusOrSkip(t *testing.T) int {
	t.Helper()
	n, err := cuda.Count()
	require.NoError(t, err)
	if n < 2 {
		t.Skipf("needs at least 2 GPUs, this machine has %d", n)
	}
	return min(n, 8)
}

// newID returns the id maker of rank 0 on dev.
func newID(lib *Lib, dev *cuda.Device) func() (UniqueID, error) {
	return func() (UniqueID, error) {
		var id UniqueID
		err := dev.Enqueue(func() error {
			var err error
			id, err = lib.GetUniqueID()
			return err
		})
		return id, err
	}
}

// rankValues returns rank r's n elements, r·1000 + i + 0.25: exact in
// float32, as are their sums over a few ranks.
func rankValues[T Float](r, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(r*1000+i) + 0.25
	}
	return v
}

// exercise runs the collectives on comms, the ranks this process drives
// (each on its own device), in groups so that one goroutine drives them
// all, and checks each rank's results: an all-gather, an all-reduce sum,
// an in-place all-reduce max, and a ring of sends and receives (to
// itself with one rank). Every rank of the job runs the same sequence.
func exercise[T Float](t *testing.T, lib *Lib, comms []*Comm) {
	const count = 4099
	dt := TypeOf[T]()
	nranks := comms[0].NRanks()
	type rankState struct {
		s                            *cuda.Stream
		send, gather, sum, max, ring *cuda.Buffer[T]
	}
	st := make([]rankState, len(comms))
	for i, c := range comms {
		dev := c.Device()
		var err error
		st[i].s, err = dev.NewStream()
		require.NoError(t, err)
		defer st[i].s.Close()
		st[i].send, err = cuda.Upload(dev, rankValues[T](c.Rank(), count))
		require.NoError(t, err)
		st[i].max, err = cuda.Upload(dev, rankValues[T](c.Rank(), count))
		require.NoError(t, err)
		st[i].gather, err = cuda.Alloc[T](dev, count*nranks)
		require.NoError(t, err)
		st[i].sum, err = cuda.Alloc[T](dev, count)
		require.NoError(t, err)
		st[i].ring, err = cuda.Alloc[T](dev, count)
		require.NoError(t, err)
		for _, b := range []*cuda.Buffer[T]{st[i].send, st[i].max, st[i].gather, st[i].sum, st[i].ring} {
			defer b.Free()
		}
	}
	// each runs f for every rank in one group. The collectives and the
	// sends and receives go in groups of their own.
	each := func(f func(i int, c *Comm, h cu.Stream) error) {
		require.NoError(t, lib.Group(func() error {
			for i, c := range comms {
				if err := f(i, c, st[i].s.Handle()); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	each(func(i int, c *Comm, h cu.Stream) error {
		return c.AllGather(st[i].send.Ptr(), st[i].gather.Ptr(), count, dt, h)
	})
	each(func(i int, c *Comm, h cu.Stream) error {
		return c.AllReduce(st[i].send.Ptr(), st[i].sum.Ptr(), count, dt, Sum, h)
	})
	each(func(i int, c *Comm, h cu.Stream) error {
		return c.AllReduce(st[i].max.Ptr(), st[i].max.Ptr(), count, dt, Max, h)
	})
	each(func(i int, c *Comm, h cu.Stream) error {
		r := c.Rank()
		if err := c.Send(st[i].send.Ptr(), count, dt, (r+1)%nranks, h); err != nil {
			return err
		}
		return c.Recv(st[i].ring.Ptr(), count, dt, (r+nranks-1)%nranks, h)
	})

	wantGather := make([]T, 0, count*nranks)
	for r := range nranks {
		wantGather = append(wantGather, rankValues[T](r, count)...)
	}
	wantSum := make([]T, count)
	for i := range wantSum {
		wantSum[i] = T(1000*nranks*(nranks-1)/2+nranks*i) + T(nranks)*0.25
	}
	for i, c := range comms {
		require.NoError(t, st[i].s.Synchronize(), "rank %d", c.Rank())
		require.NoError(t, c.AsyncError(), "rank %d", c.Rank())
		got := make([]T, count*nranks)
		require.NoError(t, st[i].gather.CopyTo(got))
		assert.Equal(t, wantGather, got, "all-gather %v on rank %d of %d", dt, c.Rank(), nranks)
		got = got[:count]
		require.NoError(t, st[i].sum.CopyTo(got))
		assert.Equal(t, wantSum, got, "all-reduce sum %v on rank %d of %d", dt, c.Rank(), nranks)
		require.NoError(t, st[i].max.CopyTo(got))
		assert.Equal(t, rankValues[T](nranks-1, count), got, "in-place all-reduce max %v on rank %d of %d", dt, c.Rank(), nranks)
		require.NoError(t, st[i].ring.CopyTo(got))
		assert.Equal(t, rankValues[T]((c.Rank()+nranks-1)%nranks, count), got, "ring receive %v on rank %d of %d", dt, c.Rank(), nranks)
	}
}

// TestLoad: a path that does not load gives ErrUnavailable naming it.
func TestLoad(t *testing.T) {
	_, err := loadFrom([]string{"/nonexistent/libnccl.so.2"})
	require.ErrorIs(t, err, ErrUnavailable)
	assert.ErrorContains(t, err, "/nonexistent/libnccl.so.2")
	lib := loadOrSkip(t)
	assert.GreaterOrEqual(t, lib.Version().Major, 2)
	again, err := Load()
	require.NoError(t, err)
	assert.Same(t, lib, again)
}

// TestSingleRank: a job of one rank on GPU 0, through Bootstrap's
// single-rank path: the collectives of float32 and float64 data, a send
// to itself, and the errors of bad calls.
func TestSingleRank(t *testing.T) {
	lib := loadOrSkip(t)
	dev, err := cuda.Open(0)
	require.NoError(t, err)
	defer dev.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := Bootstrap(ctx, "", 0, 1, newID(lib, dev))
	require.NoError(t, err)
	comm, err := lib.CommInitRank(dev, 1, id, 0)
	require.NoError(t, err)
	n, err := comm.Count()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	r, err := comm.UserRank()
	require.NoError(t, err)
	assert.Equal(t, 0, r)
	d, err := comm.CuDevice()
	require.NoError(t, err)
	assert.Equal(t, 0, d)

	exercise[float32](t, lib, []*Comm{comm})
	exercise[float64](t, lib, []*Comm{comm})

	buf, err := cuda.Alloc[float64](dev, 8)
	require.NoError(t, err)
	defer buf.Free()
	assert.ErrorContains(t, comm.AllGather(buf.Ptr(), buf.Ptr(), -1, Float64, cu.Stream{}), "of -1 elements")
	assert.ErrorContains(t, comm.AllReduce(buf.Ptr(), buf.Ptr(), 8, DataType(2), Sum, cu.Stream{}), "the package moves ncclFloat32 and ncclFloat64")
	assert.ErrorContains(t, comm.Send(0, 8, Float64, 0, cu.Stream{}), "null device pointer")
	// NCCL's own check: a peer out of range.
	err = comm.Send(buf.Ptr(), 8, Float64, 5, cu.Stream{})
	var ne *Error
	if assert.ErrorAs(t, err, &ne) {
		t.Logf("a send to rank 5 of 1: %v", err)
		assert.Equal(t, "ncclSend", ne.Op)
		assert.Equal(t, InvalidArgument, ne.Result)
	}
	assert.ErrorContains(t, err, "rank 0 of 1 on cuda:0")

	require.NoError(t, comm.Destroy())
	require.NoError(t, comm.Destroy())
	assert.ErrorIs(t, comm.AllGather(buf.Ptr(), buf.Ptr(), 8, Float64, cu.Stream{}), ErrDestroyed)
	_, err = comm.Count()
	assert.ErrorIs(t, err, ErrDestroyed)
}

// TestCommInitAll: every GPU of the machine (up to 8) a rank of one
// process, driven by one goroutine in groups.
func TestCommInitAll(t *testing.T) {
	n := gpusOrSkip(t)
	lib := loadOrSkip(t)
	ordinals := make([]int, n)
	for i := range ordinals {
		ordinals[i] = i
	}
	g, err := cuda.OpenGroup(ordinals...)
	require.NoError(t, err)
	defer g.Close()
	_, err = lib.CommInitAll(g.Device(0), g.Device(0))
	assert.ErrorContains(t, err, "GPU 0 named twice")

	comms, err := lib.CommInitAll(g.Devices()...)
	require.NoError(t, err)
	defer func() { require.NoError(t, DestroyAll(comms)) }()
	for i, c := range comms {
		r, err := c.UserRank()
		require.NoError(t, err)
		assert.Equal(t, i, r)
		k, err := c.Count()
		require.NoError(t, err)
		assert.Equal(t, n, k)
		d, err := c.CuDevice()
		require.NoError(t, err)
		assert.Equal(t, g.Device(i).Ordinal(), d)
	}
	exercise[float32](t, lib, comms)
	exercise[float64](t, lib, comms)
	t.Logf("%d ranks on %s", n, g.Name())
}

// childVar marks a process TestMultiProcess started as one of its ranks.
const childVar = "BANDSOLVE_NCCL_TEST_RANK_PROCESS"

// TestMultiProcess: one process a GPU, each this test binary running
// TestRankProcess, joined through the TCP bootstrap on the loopback
// interface: with NCCL's default transports (P2P or shared memory
// between processes of one host), and with those two disabled and the
// socket network forced, the transport of ranks on different hosts.
func TestMultiProcess(t *testing.T) {
	n := gpusOrSkip(t)
	loadOrSkip(t)
	for _, tc := range []struct {
		name string
		env  []string
		want string // in every rank's output (NCCL_DEBUG=INFO)
	}{
		{"default", nil, ""},
		{"sockets", []string{"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_IB_DISABLE=1", "NCCL_NET=Socket"}, "NET/Socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runRanks(t, n, tc.env, tc.want)
		})
	}
}

// runRanks starts n processes, rank r on GPU r, and checks that each
// passed TestRankProcess.
func runRanks(t *testing.T, n int, env []string, want string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// NCCL settings the caller did not make: its log of initialization
	// and networks (which shows the transports), and the loopback
	// interface for its own sockets.
	var defaults []string
	for k, v := range map[string]string{"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET", "NCCL_SOCKET_IFNAME": "lo"} {
		if _, ok := os.LookupEnv(k); !ok {
			defaults = append(defaults, k+"="+v)
		}
	}
	outs, errs, err := ranktest.Run(ctx, n, "TestRankProcess", childVar, append(defaults, env...))
	require.NoError(t, err)
	for r := range n {
		ok := assert.NoError(t, errs[r], "rank %d", r) &&
			assert.Contains(t, outs[r], "--- PASS: TestRankProcess", "rank %d", r)
		if want != "" {
			ok = assert.Contains(t, outs[r], want, "rank %d: NCCL's log should show %s", r, want) && ok
		}
		if !ok {
			t.Logf("rank %d's output:\n%s", r, tail(outs[r], 150))
			continue
		}
		for _, l := range matching(outs[r], []string{" via ", "NET/", "rank "}, 12) {
			t.Logf("rank %d: %s", r, l)
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// matching returns up to n lines of s that contain one of subs.
func matching(s string, subs []string, n int) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() && len(out) < n {
		for _, sub := range subs {
			if strings.Contains(sc.Text(), sub) {
				out = append(out, strings.TrimSpace(sc.Text()))
				break
			}
		}
	}
	return out
}

// TestRankProcess is one rank of TestMultiProcess, in a process of its
// own: its place from the environment (FromEnv), its GPU the local rank,
// the id through Bootstrap, then the collectives checked as in one
// process.
func TestRankProcess(t *testing.T) {
	if os.Getenv(childVar) == "" {
		t.Skip("a rank of TestMultiProcess: runs in the processes that test starts")
	}
	env, err := FromEnv()
	require.NoError(t, err)
	lib, err := Load()
	require.NoError(t, err)
	dev, err := cuda.Open(env.LocalRank)
	require.NoError(t, err)
	defer dev.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := Bootstrap(ctx, env.Addr, env.Rank, env.NRanks, newID(lib, dev))
	require.NoError(t, err)
	comm, err := lib.CommInitRank(dev, env.NRanks, id, env.Rank)
	require.NoError(t, err)
	n, err := comm.Count()
	require.NoError(t, err)
	require.Equal(t, env.NRanks, n)
	r, err := comm.UserRank()
	require.NoError(t, err)
	require.Equal(t, env.Rank, r)
	exercise[float32](t, lib, []*Comm{comm})
	exercise[float64](t, lib, []*Comm{comm})
	if t.Failed() {
		// The others may wait for this rank: end at once.
		_ = comm.Abort()
		return
	}
	require.NoError(t, comm.Destroy())
	t.Logf("rank %d of %d on %s: all-gather, all-reduce and ring checked", env.Rank, env.NRanks, dev.Name())
}
