package kernels

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/ptx"
)

// The table holds the committed PTX's kernels, module by module in the
// PTX's order, each in the module ptx.ModuleOf names.
func TestTableMatchesPTX(t *testing.T) {
	k := 0
	for i, m := range ptx.Modules {
		for _, name := range ptx.Entries(m.PTX) {
			require.Less(t, k, len(table), "the PTX has more kernels than the table")
			info := Kernel(k).Info()
			assert.Equal(t, name, info.Name)
			assert.Equal(t, i, info.Module, name)
			mod, ok := ptx.ModuleOf(info.Name)
			require.True(t, ok, name)
			assert.Equal(t, i, mod, name)
			k++
		}
	}
	assert.Equal(t, len(table), k, "the table has kernels the PTX does not")
	assert.Len(t, All(), len(table))
}

// Launch bounds come from the PTX: the partition kernels of 16-row chunks
// are bounded, the one-thread signal kernel is not.
func TestLaunchBounds(t *testing.T) {
	for _, k := range All() {
		info := k.Info()
		if info.MinBlocks > 0 {
			assert.Positive(t, info.MaxThreads, "%s: .minnctapersm without .maxntid", info.Name)
		}
	}
	assert.Zero(t, signalDone.Info().MaxThreads)
	assert.Equal(t, 1024, bandFactorWindowF64.Info().MaxThreads)
}

// The committed table.go and launch.go are what the sources and the PTX
// give (go run ./gen -check, which needs Go and a C preprocessor; the
// GPU machines that run the test binaries have neither).
func TestGeneratedFilesUpToDate(t *testing.T) {
	for _, tool := range []string{"cpp", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s here", tool)
		}
	}
	out, err := exec.Command("go", "run", "./gen", "-check").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func TestPackFloat(t *testing.T) {
	assert.Equal(t, uint64(0x3fc00000), packFloat("float", 1.5))
	assert.Equal(t, uint64(0x3ff8000000000000), packFloat("double", 1.5))
}
