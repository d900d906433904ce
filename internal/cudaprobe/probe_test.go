//go:build cuda

package cudaprobe

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noGPU returns the probe's error, skipping the test where a GPU is
// usable.
func noGPU(t *testing.T) *Error {
	t.Helper()
	err := Err()
	if err == nil {
		t.Skip("a CUDA device is usable here")
	}
	var e *Error
	require.ErrorAs(t, err, &e)
	return e
}

func TestErrNamesWhatIsMissing(t *testing.T) {
	e := noGPU(t)
	assert.True(t, errors.Is(e, ErrUnavailable))
	assert.Contains(t, []Outcome{NoLibrary, NoSymbol, InitError, CountFailed, NoDevice}, e.Outcome)
	assert.NotEmpty(t, e.What)
	assert.NotContains(t, e.What, "\n")
	switch e.Outcome {
	case InitError:
		assert.NotZero(t, e.Code)
		assert.Contains(t, e.What, "cuInit failed with")
	case NoDevice:
		assert.Contains(t, e.What, "finds no GPU")
	}
	assert.Equal(t, e, Err(), "the recorded result does not change")
}

// The CUDA build of the command, on a machine without a usable GPU, says
// in one line what is missing and which build to use, before anything
// else, whatever it is asked (even -h). The test lives here, not in the
// command's package: the command's own test binary with -tags cuda links
// the CUDA bindings, whose init ends a process that has no GPU.
func TestCommandWithoutGPU(t *testing.T) {
	e := noGPU(t)
	if testing.Short() {
		t.Skip("builds the command (-short)")
	}
	bin := filepath.Join(t.TempDir(), "bandsolve")
	out, err := exec.Command("go", "build", "-tags", "cuda", "-o", bin, "github.com/bandsolve/bandsolve/cmd/bandsolve").CombinedOutput()
	require.NoError(t, err, "%s", out)
	want := "bandsolve: built with -tags cuda, but " + e.What + "; use the CPU build (go build ./cmd/bandsolve)\n"
	for _, args := range [][]string{{"-h"}, {"devices"}, {"solve", "-h"}, {"banded", "-n", "100", "-device", "cpu"}} {
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", args)
		assert.Equal(t, 1, ee.ExitCode(), "%v", args)
		assert.Empty(t, stdout.String(), "%v", args)
		assert.Equal(t, want, stderr.String(), "%v", args)
		assert.NotContains(t, stderr.String(), "Error in initialization")
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"))
	}
}
