//go:build cuda

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/internal/gpu/tridiaggpu"
	"github.com/bandsolve/bandsolve/tridiag"
)

// runFactorGPU times one case of a factor grid in precision prec (F32 or
// F64): the one-shot solves, then for Thomas, GTSV and LDLT the
// factorization and the factored solves of factorNRHS columns, then,
// with peer, cuSPARSE.
func runFactorGPU(g gpuBackend, c FactorCase, prec string, warmup, reps int, peer bool, seed uint64) []FactorResult {
	be := g.(*cudaBackend)
	if prec == F32 {
		return factorGPU[float32](be, c, prec, warmup, reps, peer, seed)
	}
	return factorGPU[float64](be, c, prec, warmup, reps, peer, seed)
}

func factorGPU[T tridiag.Float](be *cudaBackend, c FactorCase, prec string, warmup, reps int, peer bool, seed uint64) []FactorResult {
	var elem T
	eb := int(sizeOf(elem))
	shape := tridiag.Shape{N: c.N, G: c.G, Layout: tridiag.Contiguous(c.N)}
	if c.Layout == Interleaved {
		shape.Layout = tridiag.Interleaved(c.G)
	}
	L := shape.Normalize().Len()
	maxNRHS := factorNRHS[len(factorNRHS)-1]
	res := func(solver string, nrhs int, values float64) FactorResult {
		return FactorResult{Case: c, Precision: prec, Solver: solver, NRHS: nrhs, Values: values, ElemBytes: eb, Bandwidth: be.bw}
	}
	var out []FactorResult
	add := func(r FactorResult, times []time.Duration, err error) {
		if err != nil {
			r.Err = shortErr(err)
		} else if len(times) > 0 {
			r.Time, r.Lo, r.Hi = summarize(times)
		}
		out = append(out, r)
	}

	// a, b, c: diagonally dominant; b and c alone (LDLT's symmetric
	// matrix) positive definite. d and x: maxNRHS columns; saved: d.
	r := rand.New(rand.NewPCG(seed, 29))
	host := make([][]T, 4)
	for i, n := range []int{L, L, L, maxNRHS * L} {
		host[i] = make([]T, n)
		for k := range host[i] {
			host[i][k] = T(r.Float64()*2 - 1)
			if i == 1 {
				host[i][k] += 4
			}
		}
	}
	var bufs []*cuda.Buffer[T]
	defer func() {
		for _, b := range bufs {
			_ = b.Free()
		}
	}()
	upload := func(v []T) *cuda.Buffer[T] {
		b, err := cuda.Upload(be.dev, v)
		if err != nil {
			return nil
		}
		bufs = append(bufs, b)
		return b
	}
	da, db, dc, dd := upload(host[0]), upload(host[1]), upload(host[2]), upload(host[3])
	dx, err := cuda.Alloc[T](be.dev, maxNRHS*L)
	if err == nil {
		bufs = append(bufs, dx)
	}
	if da == nil || db == nil || dc == nil || dd == nil || dx == nil {
		fail := res("data", 0, 0)
		fail.Err = fmt.Sprintf("uploading %d columns of %d values: out of device memory?", maxNRHS, L)
		return []FactorResult{fail}
	}
	col := func(b *cuda.Buffer[T], j int) *cuda.Buffer[T] {
		v, err := b.Slice(j*L, L)
		if err != nil {
			panic(err) // within the allocation by construction
		}
		return v
	}

	// The one-shot solves of one right-hand side.
	for _, o := range []struct {
		name   string
		opts   tridiag.Options
		values float64
	}{{factorOneShot, tridiag.Options{}, 5}, {factorSPDOneShot, tridiag.Options{Algorithm: tridiag.LDLT}, 4}} {
		rr := res(o.name, 1, o.values)
		p, err := tridiaggpu.NewPlan[T](be.dev, shape, o.opts)
		if err != nil {
			add(rr, nil, err)
			continue
		}
		rr.Note = p.Describe()
		times, paced, err := be.timeGated(func() ([]time.Duration, error) {
			return p.Time(context.Background(), be.clock.Timer(), da, db, dc, col(dd, 0), col(dx, 0), col(dd, 1), warmup, reps)
		})
		rr.Note = joinNote(rr.Note, paced)
		add(rr, times, err)
		_ = p.Close()
	}

	// The stored factorizations: factor, then solve NRHS columns.
	for _, m := range []struct {
		name string
		alg  tridiag.Algorithm
		coef float64
	}{{"thomas", tridiag.Thomas, 3}, {"gtsv", tridiag.GTSV, 3}, {"ldlt", tridiag.LDLT, 2}} {
		ft, err := tridiaggpu.NewFactorTiming[T](be.dev, shape, tridiag.Options{Algorithm: m.alg}, da, db, dc)
		if err != nil {
			add(res("gpu:"+m.name+"/factor", 0, 0), nil, err)
			continue
		}
		fv := ft.FactorValues()
		rr := res("gpu:"+m.name+"/factor", 0, m.coef+fv)
		rr.Note = ft.Describe()
		times, paced, err := be.timeGated(func() ([]time.Duration, error) { return ft.Factor(be.clock.Timer(), warmup, reps) })
		rr.Note = joinNote(rr.Note, paced)
		add(rr, times, err)
		for _, nrhs := range factorNRHS {
			rr := res("gpu:"+m.name+"/solve", nrhs, 2*float64(nrhs)+fv)
			times, paced, err := be.timeGated(func() ([]time.Duration, error) {
				return ft.Solve(be.clock.Timer(), nrhs, dd, dx, warmup, reps)
			})
			rr.Note = paced
			add(rr, times, err)
		}
		// Rows adjacent: each solve kernel forced too, the staged kernels
		// (tiles of rows transposed through shared memory) and the row
		// kernels (a thread a system).
		if ft.SetStaged(true) {
			for _, kind := range []struct {
				name   string
				staged bool
			}{{"staged", true}, {"rows", false}} {
				ft.SetStaged(kind.staged)
				for _, nrhs := range factorNRHS {
					rr := res("gpu:"+m.name+"/"+kind.name, nrhs, 2*float64(nrhs)+fv)
					times, paced, err := be.timeGated(func() ([]time.Duration, error) {
						return ft.Solve(be.clock.Timer(), nrhs, dd, dx, warmup, reps)
					})
					rr.Note = paced
					add(rr, times, err)
				}
			}
		}
		_ = ft.Close()
	}

	if !peer {
		return out
	}
	if be.peer == nil {
		rr := res("cusparse", 0, 0)
		rr.Err = errNoCusparse.Error()
		if be.peerErr != nil {
			rr.Err = shortErr(be.peerErr)
		}
		return append(out, rr)
	}
	// cuSPARSE solves in place in x, restored from d outside the timed
	// region: gtsv2 with NRHS columns (one system: G = 1), or
	// gtsv2StridedBatch once per column (its own contiguous layout).
	note := "cuSPARSE " + be.peer.versionString()
	base := csCall{prec: csPrec(prec), dl: da.Ptr(), d: db.Ptr(), du: dc.Ptr(), m: c.N, batch: c.G, stride: c.N}
	for _, nrhs := range factorNRHS {
		restores := []devCopy{{dst: dx.Ptr(), src: dd.Ptr(), bytes: int64(nrhs) * int64(L) * int64(eb)}}
		var calls []csCall
		name := "cusparse:gtsv2StridedBatch"
		values := 5 * float64(nrhs)
		if c.G == 1 {
			name, values = "cusparse:gtsv2", 3+2*float64(nrhs)
			call := base
			call.kind, call.x, call.cols = csGtsv2, dx.Ptr(), nrhs
			calls = append(calls, call)
		} else {
			for j := range nrhs {
				call := base
				call.kind, call.x = csStridedBatch, col(dx, j).Ptr()
				calls = append(calls, call)
			}
		}
		rr := res(name, nrhs, values)
		times, paced, err := be.timeGated(func() ([]time.Duration, error) {
			return be.peer.timeSeq(calls, restores, be.clock.Timer(), warmup, reps)
		})
		rr.Note = joinNote(note, paced)
		add(rr, times, err)
	}
	return out
}

// sizeOf is the bytes of a value of T.
func sizeOf[T tridiag.Float](v T) int64 {
	switch any(v).(type) {
	case float32:
		return 4
	}
	return 8
}
