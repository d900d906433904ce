package ptx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every kernel is in exactly one module, and ModuleOf finds it there.
func TestModuleOf(t *testing.T) {
	seen := map[string]string{}
	for i, m := range Modules {
		names := Entries(m.PTX)
		require.NotEmpty(t, names, m.Name)
		for _, name := range names {
			require.NotContains(t, seen, name, "kernel %s in %s and %s", name, seen[name], m.Name)
			seen[name] = m.Name
			got, ok := ModuleOf(name)
			require.True(t, ok, name)
			assert.Equal(t, i, got, name)
		}
	}
	for name, mod := range map[string]string{"thomas_f32": "tridiag", "band_factor_window_f64": "banded", "signal_done": "tridiag"} {
		i, ok := ModuleOf(name)
		require.True(t, ok, name)
		assert.Equal(t, mod, Modules[i].Name, name)
	}
	_, ok := ModuleOf("no_such_kernel")
	assert.False(t, ok)
	assert.Equal(t, 9, Modules[2].MinMajor, "the cluster kernels need Hopper")
}
