// Command bandsolve solves batches of tridiagonal systems on the CPU or an
// NVIDIA GPU, solves banded and reordered sparse systems with truncated
// SPIKE, solves sparse triangular systems, and prints the
// numerical-stability tables of the TPR paper.
//
// Usage:
//
//	bandsolve <command> [flags]
//
// Commands:
//
//	stability  error of every algorithm on the stability matrix suite
//	solve      solve systems read from .npy files, write x as .npy
//	banded     solve a banded or Matrix Market system with truncated SPIKE
//	trsv       solve a sparse triangular system (Matrix Market) on the CPU
//	devices    list the CPU and the CUDA devices
//	bench      time every algorithm against cuSPARSE and the CPU peers
//	help       show help for a command
//
// Run "bandsolve help <command>" or "bandsolve <command> -h" for the flags
// and examples of each command. The default build is pure Go and solves on
// the CPU; build with -tags cuda to solve on NVIDIA GPUs.
package main

import (
	"io"
	"os"

	"github.com/bandsolve/bandsolve/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args (without the program name) and
// returns the exit status: 0 on success, 1 on failure, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeMainUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return runHelp(rest, stdout, stderr)
	case "bench":
		// The benchmark instrument parses its own flags (bench.Main).
		return bench.Main(rest, stdout, stderr)
	}
	cmd := findCommand(name)
	if cmd == nil {
		return report(stderr, "", usageErrorf("unknown command %q (commands: %s)", name, commandNames()))
	}
	return report(stderr, cmd.name, cmd.run(cmd, rest, stdout, stderr))
}
