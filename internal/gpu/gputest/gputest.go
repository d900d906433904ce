//go:build cuda

// Package gputest holds what the test binaries of the GPU packages share:
// the TestMain steps that open the device, run the tests on it and close
// it. It is built only with the cuda tag, and only tests import it.
//
// A test binary built with the cuda tag is meant for a machine with a GPU:
// without one it fails (status 1) rather than skipping, so that a missing
// or broken device never passes for a green run.
package gputest

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/bandsolve/bandsolve/cuda"
)

// Open opens GPU 0 for the tests of package pkg. Without a device it
// prints "<pkg> tests need a GPU: <reason>" on stderr and exits with
// status 1.
func Open(pkg string) *cuda.Device {
	dev, err := cuda.Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, pkg, "tests need a GPU:", err)
		os.Exit(1)
	}
	return dev
}

// Abort is for a TestMain whose setup failed on an open device: it prints
// err on stderr, closes dev and exits with status 1.
func Abort(dev *cuda.Device, err error) {
	fmt.Fprintln(os.Stderr, err)
	_ = dev.Close()
	os.Exit(1)
}

// Run names dev on stderr, runs the tests of m, closes closers in their
// order and then dev, and exits with the tests' status.
func Run(m *testing.M, dev *cuda.Device, closers ...io.Closer) {
	fmt.Fprintln(os.Stderr, "testing on", dev.Name())
	code := m.Run()
	for _, c := range closers {
		_ = c.Close()
	}
	_ = dev.Close()
	os.Exit(code)
}
