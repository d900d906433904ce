package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPython runs the Python package's tests (python/tests) with
// /usr/bin/python3 against the library of this build, skipping when that
// interpreter cannot import NumPy and SciPy.
func TestPython(t *testing.T) {
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import numpy, scipy").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import numpy and scipy (%v: %s): the Python tests need them", py, err, strings.TrimSpace(string(out)))
	}
	dir := buildLib(t)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", filepath.Join(root, "python", "tests"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"BANDSOLVE_LIB="+filepath.Join(dir, "libbandsolve.so"),
		"PYTHONPATH="+filepath.Join(root, "python"),
		"PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "python tests:\n%s", out)
	t.Logf("%s", lastLines(string(out), 4))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
