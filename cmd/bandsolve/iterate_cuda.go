//go:build cuda

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/bandsolve/bandsolve/cuda"
	"github.com/bandsolve/bandsolve/gpu"
	"github.com/bandsolve/bandsolve/krylov"
)

// iterateCUDA solves with every vector on the GPU named device: CSR
// products, the incomplete factorization (analysed on the host) and its
// triangular solves on the device (gpu.FactorILU).
func iterateCUDA(device string, st *iterateSetup, x []float64, rep *iterateReport) error {
	if st.precond == "jacobi" {
		return usageErrorf("-precond jacobi runs on the CPU only; on %s use ic0, ilu0 or none", device)
	}
	_, idx, err := parseDeviceName(device)
	if err != nil {
		return err
	}
	d, err := cuda.Open(idx)
	if err != nil {
		return fmt.Errorf("device %q: %w", device, err)
	}
	defer func() { _ = d.Close() }()
	rep.device = d.Name()
	start := time.Now()
	sp, err := gpu.NewSpace(d, st.a.N)
	if err != nil {
		return err
	}
	defer sp.Close()
	csr, err := gpu.UploadSparse(d, st.a)
	if err != nil {
		return err
	}
	defer csr.Close()
	op, err := sp.Operator(csr)
	if err != nil {
		return err
	}
	var m krylov.Preconditioner[*cuda.Buffer[float64]]
	rep.precond = st.precond
	if st.precond != "none" {
		p, err := gpu.FactorILU(d, st.a, st.kind(), st.factorOptions(), gpu.TrsvOptions{Algorithm: st.trsv})
		if err != nil {
			return err
		}
		defer p.Close()
		lo, up := p.Algorithms()
		rep.precond = describePrecond(st, lo, up)
		m = p
	}
	db, err := cuda.Upload(d, st.b)
	if err != nil {
		return err
	}
	defer db.Free()
	dx, err := cuda.Upload(d, x) // x = 0
	if err != nil {
		return err
	}
	defer dx.Free()
	rep.setup = time.Since(start)
	start = time.Now()
	rep.res, err = krylovMethod[*cuda.Buffer[float64]](st.method)(context.Background(), sp, op, m, db, dx,
		krylov.Options{Tol: st.tol, MaxIter: st.maxIter})
	rep.solve = time.Since(start)
	if cerr := dx.CopyTo(x); err == nil {
		err = cerr
	}
	return err
}
