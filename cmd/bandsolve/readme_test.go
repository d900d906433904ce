package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeGoBlocks returns the Go code blocks of the README.
func readmeGoBlocks(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var blocks []string
	for _, part := range strings.Split(string(data), "```go\n")[1:] {
		code, _, ok := strings.Cut(part, "```")
		require.True(t, ok, "unterminated Go block in the README")
		blocks = append(blocks, code)
	}
	return blocks
}

// cudaHeaders reports whether the CUDA headers that the cuda build needs
// are installed where cgo looks for them.
func cudaHeaders() bool {
	for _, p := range []string{"/usr/include/cuda.h", "/usr/local/cuda/include/cuda.h"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

var printedComment = regexp.MustCompile(`fmt\.Print(?:f|ln)\(.*\)\s*// (.+)`)

// Every Go block of the README is a whole program that builds as shown:
// the CPU one is run and prints what its comment says; the GPU one (it
// imports package cuda) is built with -tags cuda where the CUDA headers
// are installed (CI installs them).
func TestReadmeGoBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	blocks := readmeGoBlocks(t)
	require.GreaterOrEqual(t, len(blocks), 2, "the README shows a CPU and a GPU example")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	sawCPU, sawGPU := false, false
	for i, code := range blocks {
		require.True(t, strings.HasPrefix(code, "package main\n"), "README Go block %d is not a whole program", i+1)
		gpu := strings.Contains(code, `"github.com/bandsolve/bandsolve/cuda"`)
		if gpu {
			sawGPU = true
		} else {
			sawCPU = true
		}
		// A folder inside the module (so that its imports resolve) whose
		// name starts with "_", so that ./... leaves it out.
		dir, err := os.MkdirTemp(root, "_readme")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644))
		pkg := "./" + filepath.Base(dir)
		if gpu {
			if !cudaHeaders() {
				t.Logf("README Go block %d: not built, no CUDA headers here", i+1)
				continue
			}
			cmd := exec.Command(goCmd, "build", "-tags", "cuda", "-o", os.DevNull, pkg)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "README Go block %d (go build -tags cuda):\n%s", i+1, out)
			continue
		}
		cmd := exec.Command(goCmd, "run", pkg)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "README Go block %d (go run):\n%s", i+1, out)
		m := printedComment.FindStringSubmatch(code)
		require.NotNil(t, m, "README Go block %d: its print has no comment saying what it prints", i+1)
		assert.Equal(t, m[1], strings.TrimSpace(string(out)), "README Go block %d prints what its comment says", i+1)
	}
	assert.True(t, sawCPU, "the README has a CPU example")
	assert.True(t, sawGPU, "the README has a GPU example")
}
