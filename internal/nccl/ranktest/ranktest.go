// Package ranktest starts the ranks of a multi-process test: copies of the
// running test binary, each running one test as rank r of n, joined
// through the environment that nccl.FromEnv reads (BANDSOLVE_RANK,
// BANDSOLVE_NRANKS, BANDSOLVE_LOCAL_RANK = r, BANDSOLVE_ADDR a free
// loopback address for nccl.Bootstrap).
package ranktest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Run starts n processes of the running test binary, process r running
// test (an exact test name) as rank r on GPU r, with marker=1 (what the
// test checks to know it is a rank) and env added to the environment, and
// returns each one's combined output and error once all have ended or
// ctx has.
func Run(ctx context.Context, n int, test, marker string, env []string) ([]string, []error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("ranktest: a free loopback port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return nil, nil, err
	}
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1", "-test.timeout=110s")
		cmd.Env = append(os.Environ(), env...)
		cmd.Env = append(cmd.Env, marker+"=1", fmt.Sprintf("BANDSOLVE_RANK=%d", r), fmt.Sprintf("BANDSOLVE_NRANKS=%d", n),
			fmt.Sprintf("BANDSOLVE_LOCAL_RANK=%d", r), "BANDSOLVE_ADDR="+addr)
		cmd.WaitDelay = 5 * time.Second
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := cmd.CombinedOutput()
			outs[r], errs[r] = string(out), err
		}()
	}
	wg.Wait()
	return outs, errs, nil
}
