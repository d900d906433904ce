package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bandsolve/bandsolve/bench"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// command is one subcommand of bandsolve.
type command struct {
	name     string
	summary  string // one line for the command list
	synopsis string // the usage line after "bandsolve "
	about    string // paragraphs shown by -h before the flags
	examples string // shown by -h after the flags
	run      func(c *command, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order "bandsolve help" shows them.
var commands = []*command{stabilityCommand, solveCommand, bandedCommand, trsvCommand, iterateCommand, devicesCommand}

func findCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// commandNames lists every command bandsolve accepts: those of commands,
// then bench (bench.Main parses its own flags) and help.
func commandNames() string {
	names := make([]string, 0, len(commands)+2)
	for _, c := range commands {
		names = append(names, c.name)
	}
	names = append(names, "bench", "help")
	return strings.Join(names, ", ")
}

// usageError is a mistake in the command line: it exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// report prints err, if any, as one line on stderr and returns the exit
// status.
func report(stderr io.Writer, cmd string, err error) int {
	if err == nil {
		return exitOK
	}
	prefix := "bandsolve"
	if cmd != "" {
		prefix += " " + cmd
	}
	var ue usageError
	if errors.As(err, &ue) {
		hint := "bandsolve help"
		if cmd != "" && cmd != "help" {
			hint = "bandsolve " + cmd + " -h"
		}
		fmt.Fprintf(stderr, "%s: %s (run '%s' for usage)\n", prefix, oneLine(ue.msg), hint)
		return exitUsage
	}
	fmt.Fprintf(stderr, "%s: %s\n", prefix, oneLine(err.Error()))
	return exitFail
}

// oneLine joins the lines of a message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// newFlagSet returns a flag set that reports errors instead of printing.
func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args. On -h it prints the command's usage to stdout and
// returns help = true; flag mistakes and stray arguments are usage errors.
func parseFlags(c *command, fs *flag.FlagSet, args []string, stdout io.Writer) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeCommandUsage(stdout, c, fs)
			return true, nil
		}
		return false, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return false, usageErrorf("unexpected argument %q: %s takes only flags", fs.Arg(0), c.name)
	}
	return false, nil
}

// writeCommandUsage prints the full help of one command.
func writeCommandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: bandsolve %s\n\n", c.synopsis)
	fmt.Fprintf(w, "%s\n", strings.TrimSpace(c.about))
	var hasFlags bool
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if c.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(c.examples, "\n"))
	}
}

func writeMainUsage(w io.Writer) {
	fmt.Fprint(w, `bandsolve solves batches of tridiagonal systems, banded or sparse systems
(truncated SPIKE) and sparse triangular systems, on the CPU and on NVIDIA
GPUs.

Usage: bandsolve <command> [flags]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "bench", "time every algorithm against cuSPARSE and the CPU peers (bandsolve bench -h)")
	fmt.Fprint(w, `  help       show this text, or "bandsolve help <command>" for one command

Run "bandsolve <command> -h" for the flags and examples of a command.
The default build solves on the CPU; build with -tags cuda for NVIDIA GPUs.
The CUDA build checks for a GPU before anything else and, without one,
says in one line what is missing (driver, device) and exits with status 1.

Sizes read from files and flags are checked against the memory the
process can have (physical memory, cgroup limit, RLIMIT_AS) before any
is asked for; BANDSOLVE_MEMORY_LIMIT (e.g. 8GiB) caps it further. Output
files are written to a temporary file and renamed into place when
complete, so a failure never leaves a partial or truncated file.

Examples:
  bandsolve stability -n 512 -format markdown
  bandsolve solve -a a.npy -b b.npy -c c.npy -d d.npy -o x.npy
  bandsolve banded -n 1000000 -k 100 -d 1 -method direct
  bandsolve banded -mtx matrix.mtx -delta 0.95 -method iterative -precision mixed
  bandsolve trsv -mtx L.mtx -rhs b.npy -o x.npy
  bandsolve devices
  bandsolve bench -grid paper -csv results.csv -plots plots/
  bandsolve bench -grid banded -band-n 1e6 -band-k 100 -band-d 1 -csv banded.csv
`)
}

// runHelp implements "bandsolve help [command]".
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		writeMainUsage(stdout)
		return exitOK
	case 1:
		switch args[0] {
		case "help":
			writeMainUsage(stdout)
			return exitOK
		case "bench":
			// bench.Main prints its usage where it prints errors.
			return bench.Main([]string{"-h"}, stdout, stdout)
		}
		c := findCommand(args[0])
		if c == nil {
			return report(stderr, "help", usageErrorf("unknown command %q (commands: %s)", args[0], commandNames()))
		}
		return report(stderr, c.name, c.run(c, []string{"-h"}, stdout, stderr))
	default:
		return report(stderr, "help", usageErrorf("help takes at most one command name, got %d arguments", len(args)))
	}
}
