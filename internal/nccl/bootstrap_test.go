package nccl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testID is an id with every byte set from seed.
func testID(seed byte) UniqueID {
	var id UniqueID
	for i := range id {
		id[i] = seed + byte(i)
	}
	return id
}

// listen opens a loopback listener on a free port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln := listen(t)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// joinResult is what one rank's Join returned.
type joinResult struct {
	id  UniqueID
	err error
}

// joinAsync runs Join in a goroutine; the channel gets its result.
func joinAsync(ctx context.Context, addr string, rank, nranks int) <-chan joinResult {
	ch := make(chan joinResult, 1)
	go func() {
		id, err := Join(ctx, addr, rank, nranks)
		ch <- joinResult{id, err}
	}()
	return ch
}

// joined installs onJoin for the test and returns a channel of the ranks
// Serve accepts.
func joined(t *testing.T) <-chan int {
	ch := make(chan int, 16)
	onJoin = func(r int) { ch <- r }
	t.Cleanup(func() { onJoin = nil })
	return ch
}

func TestBootstrapServesEveryRank(t *testing.T) {
	for _, n := range []int{2, 3, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ln := listen(t)
			id := testID(byte(n))
			served := make(chan error, 1)
			go func() { served <- Serve(ctx, ln, n, id) }()
			var wg sync.WaitGroup
			got := make([]joinResult, n)
			for r := 1; r < n; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Bootstrap of a rank other than 0 is Join; newID is not called.
					got[r].id, got[r].err = Bootstrap(ctx, ln.Addr().String(), r, n, nil)
				}()
			}
			wg.Wait()
			require.NoError(t, <-served)
			for r := 1; r < n; r++ {
				require.NoError(t, got[r].err, "rank %d", r)
				assert.Equal(t, id, got[r].id, "rank %d", r)
			}
		})
	}
}

// TestBootstrapRanksBeforeRankZero: the other ranks start first and
// retry until rank 0 listens; newID runs once, on rank 0.
func TestBootstrapRanksBeforeRankZero(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addr := freeAddr(t)
	const n = 4
	var calls atomic.Int32
	newID := func() (UniqueID, error) {
		calls.Add(1)
		return testID(7), nil
	}
	ids := make([]UniqueID, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := n - 1; r >= 0; r-- {
		if r == 0 {
			time.Sleep(150 * time.Millisecond)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[r], errs[r] = Bootstrap(ctx, addr, r, n, newID)
		}()
	}
	wg.Wait()
	for r := range n {
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, testID(7), ids[r], "rank %d", r)
	}
	assert.EqualValues(t, 1, calls.Load())
}

func TestBootstrapSingleRank(t *testing.T) {
	id, err := Bootstrap(context.Background(), "", 0, 1, func() (UniqueID, error) { return testID(3), nil })
	require.NoError(t, err)
	assert.Equal(t, testID(3), id)

	boom := errors.New("no GPU")
	_, err = Bootstrap(context.Background(), "", 0, 1, func() (UniqueID, error) { return UniqueID{}, boom })
	assert.ErrorIs(t, err, boom)
}

// TestBootstrapNewIDFails: rank 0's failure to make the id is its error,
// and it listens no more.
func TestBootstrapNewIDFails(t *testing.T) {
	addr := freeAddr(t)
	boom := errors.New("ncclGetUniqueId failed")
	_, err := Bootstrap(context.Background(), addr, 0, 2, func() (UniqueID, error) { return UniqueID{}, boom })
	require.ErrorIs(t, err, boom)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port is free again")
	_ = ln.Close()
}

func TestBootstrapArguments(t *testing.T) {
	ctx := context.Background()
	_, err := Bootstrap(ctx, "127.0.0.1:1", 2, 2, nil)
	assert.ErrorContains(t, err, "rank 2 out of range for 2 ranks")
	_, err = Bootstrap(ctx, "127.0.0.1:1", 0, 0, nil)
	assert.ErrorContains(t, err, "at least one rank")
	_, err = Join(ctx, "127.0.0.1:1", 0, 2)
	assert.ErrorContains(t, err, "rank 0 makes the id")
	_, err = Join(ctx, "localhost", 1, 2)
	assert.ErrorContains(t, err, `rank 0's address "localhost"`)
	_, err = Bootstrap(ctx, "256.0.0.1:99999", 0, 2, nil)
	assert.ErrorContains(t, err, "rank 0 listening on 256.0.0.1:99999")
	assert.ErrorContains(t, Serve(ctx, listen(t), 0, UniqueID{}), "at least one rank")
}

// TestBootstrapMismatchedRanks: a rank that counts another number of
// ranks stops the job: rank 0, the rank and the rank that had joined
// all get errors wrapping ErrRefused that say why.
func TestBootstrapMismatchedRanks(t *testing.T) {
	accepted := joined(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln := listen(t)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, 3, testID(1)) }()
	first := joinAsync(ctx, ln.Addr().String(), 1, 3)
	assert.Equal(t, 1, <-accepted)
	second := joinAsync(ctx, ln.Addr().String(), 2, 4)

	err := <-served
	require.ErrorIs(t, err, ErrRefused)
	assert.ErrorContains(t, err, "rank 2 (from 127.0.0.1:")
	assert.ErrorContains(t, err, "counts 4 ranks, rank 0 counts 3")
	for _, ch := range []<-chan joinResult{first, second} {
		r := <-ch
		require.ErrorIs(t, r.err, ErrRefused)
		assert.ErrorContains(t, r.err, "refused the job")
		assert.ErrorContains(t, r.err, "counts 4 ranks, rank 0 counts 3")
	}
}

func TestBootstrapDuplicateRank(t *testing.T) {
	accepted := joined(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln := listen(t)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, 3, testID(1)) }()
	first := joinAsync(ctx, ln.Addr().String(), 1, 3)
	assert.Equal(t, 1, <-accepted)
	second := joinAsync(ctx, ln.Addr().String(), 1, 3)

	err := <-served
	require.ErrorIs(t, err, ErrRefused)
	assert.ErrorContains(t, err, "rank 1 joined twice")
	for _, ch := range []<-chan joinResult{first, second} {
		r := <-ch
		require.ErrorIs(t, r.err, ErrRefused)
		assert.ErrorContains(t, r.err, "rank 1 joined twice")
	}
}

// rawHello sends a hello of the given fields on a new connection and
// returns the connection.
func rawHello(t *testing.T, addr string, version uint32, nranks, rank int32) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	b := []byte(bootMagic)
	b = binary.BigEndian.AppendUint32(b, version)
	b = binary.BigEndian.AppendUint32(b, uint32(nranks))
	b = binary.BigEndian.AppendUint32(b, uint32(rank))
	_, err = c.Write(b)
	require.NoError(t, err)
	return c
}

// TestBootstrapRefusesBadHellos: hellos that Join never sends (another
// version of the handshake, rank 0 or a rank out of range) are refused.
func TestBootstrapRefusesBadHellos(t *testing.T) {
	for _, tc := range []struct {
		name         string
		version      uint32
		nranks, rank int32
		want         string
	}{
		{"version", 2, 2, 1, "speaks version 2 of the handshake, rank 0 version 1"},
		{"rank 0", 1, 2, 0, "rank 0 (from 127.0.0.1:"},
		{"rank too large", 1, 2, 5, "out of range for 2 ranks"},
		{"negative rank", 1, 2, -1, "rank -1 (from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ln := listen(t)
			served := make(chan error, 1)
			go func() { served <- Serve(ctx, ln, 2, testID(1)) }()
			c := rawHello(t, ln.Addr().String(), tc.version, tc.nranks, tc.rank)
			defer c.Close()
			err := <-served
			require.ErrorIs(t, err, ErrRefused)
			assert.ErrorContains(t, err, tc.want)
			var head [len(bootMagic) + 1]byte
			_, err = c.Read(head[:])
			require.NoError(t, err)
			assert.Equal(t, bootMagic, string(head[:len(bootMagic)]))
			assert.EqualValues(t, statusRefuse, head[len(bootMagic)])
		})
	}
}

// TestBootstrapIgnoresStrangers: connections that are not a rank's hello
// (a port probe, garbage) are closed and the job goes on.
func TestBootstrapIgnoresStrangers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln := listen(t)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, 2, testID(9)) }()
	probe, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, probe.Close())
	garbage, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	_, err = garbage.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	require.NoError(t, err)
	defer garbage.Close()

	r := <-joinAsync(ctx, ln.Addr().String(), 1, 2)
	require.NoError(t, r.err)
	assert.Equal(t, testID(9), r.id)
	require.NoError(t, <-served)
}

// TestBootstrapRankZeroNeverComes: a rank gives up at its context's
// deadline, saying whom it could not reach.
func TestBootstrapRankZeroNeverComes(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Join(ctx, addr, 1, 2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "rank 1 could not reach rank 0 at "+addr)
	assert.ErrorContains(t, err, "last attempt")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestBootstrapRankMissing: rank 0 gives up at its deadline, names the
// ranks that never joined and tells those that did.
func TestBootstrapRankMissing(t *testing.T) {
	accepted := joined(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln := listen(t)
	sctx, scancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- Serve(sctx, ln, 4, testID(1)) }()
	first := joinAsync(ctx, ln.Addr().String(), 2, 4)
	assert.Equal(t, 2, <-accepted)
	scancel()

	err := <-served
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "2 of 4 ranks joined, missing [1 3]")
	r := <-first
	require.Error(t, r.err)
	assert.NotErrorIs(t, r.err, ErrRefused)
	assert.ErrorContains(t, r.err, "rank 2: rank 0 at "+ln.Addr().String()+" gave up")
	assert.ErrorContains(t, r.err, "missing [1 3]")
}

// TestBootstrapJoinTimesOutWaiting: a rank that has joined but whose
// context ends before the others join returns ctx's error.
func TestBootstrapJoinTimesOutWaiting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln := listen(t)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, 3, testID(1)) }()
	jctx, jcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer jcancel()
	_, err := Join(jctx, ln.Addr().String(), 1, 3)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "rank 1 waiting for the id from rank 0")
	cancel()
	assert.ErrorIs(t, <-served, context.Canceled)
}
