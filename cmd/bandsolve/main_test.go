package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCmd runs the command line in-process and returns its exit status and
// output.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"help", "help"}} {
		code, out, errOut := runCmd(t, args...)
		assert.Equal(t, 0, code, "%v", args)
		assert.Empty(t, errOut, "%v", args)
		for _, c := range commands {
			assert.Contains(t, out, c.name, "%v", args)
		}
	}
}

func TestCommandHelp(t *testing.T) {
	for _, c := range commands {
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}, {c.name, "-help"}} {
			code, out, errOut := runCmd(t, args...)
			assert.Equal(t, 0, code, "%v", args)
			assert.Empty(t, errOut, "%v", args)
			assert.Contains(t, out, "Usage: bandsolve "+c.name, "%v", args)
			assert.Contains(t, out, "Examples:", "%v", args)
		}
	}
	_, out, _ := runCmd(t, "stability", "-h")
	for _, f := range []string{"-n", "-seed", "-device", "-format", "-types", "-algorithms", "-precision", "-slice", "-o"} {
		assert.Regexp(t, `(?m)^  `+f+`( |$)`, out, "stability flag %s", f)
	}
	_, out, _ = runCmd(t, "solve", "-h")
	for _, f := range []string{"-a", "-b", "-c", "-d", "-o", "-layout", "-algorithm", "-precision", "-device", "-cyclic", "-const"} {
		assert.Regexp(t, `(?m)^  `+f+`( |$)`, out, "solve flag %s", f)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "Usage: bandsolve <command>"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "solve", "stability"}, "at most one command"},
		{[]string{"devices", "-x"}, "flag provided but not defined: -x"},
		{[]string{"devices", "extra"}, `unexpected argument "extra"`},
		{[]string{"stability", "-n", "many"}, `invalid value "many" for flag -n`},
	}
	for _, tc := range cases {
		code, out, errOut := runCmd(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Empty(t, out, "%v", tc.args)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
		if tc.args != nil {
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line for %v: %q", tc.args, errOut)
		}
	}
}

// TestUnknownCommandListsEvery checks that the unknown-command message
// lists every command, bench and help included, and that each command it
// lists has help.
func TestUnknownCommandListsEvery(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"help", "frobnicate"}} {
		code, _, errOut := runCmd(t, args...)
		require.Equal(t, exitUsage, code)
		m := regexp.MustCompile(`\(commands: ([a-z, ]+)\)`).FindStringSubmatch(errOut)
		require.NotNil(t, m, errOut)
		listed := strings.Split(m[1], ", ")
		assert.ElementsMatch(t, []string{"stability", "solve", "banded", "trsv", "iterate", "devices", "bench", "help"}, listed, "%v", args)
		for _, name := range listed {
			code, out, errOut := runCmd(t, "help", name)
			assert.Equal(t, 0, code, "help %s: %s", name, errOut)
			assert.NotEmpty(t, out, "help %s", name)
		}
	}
}

func TestOneLine(t *testing.T) {
	assert.Equal(t, "a b c", oneLine("a\n b\n\nc "))
}
