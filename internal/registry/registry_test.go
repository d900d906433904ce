package registry

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type gpuDev struct{ id int }

func TestFindTakesTheFirstBackendThatServes(t *testing.T) {
	var r Registry[string]
	_, ok := r.Find(gpuDev{})
	require.False(t, ok, "an empty registry serves nothing")
	r.Add(func(dev any) (string, bool) { _, ok := dev.(int); return "ints", ok })
	r.Add(func(dev any) (string, bool) { d, ok := dev.(gpuDev); return "gpu", ok && d.id == 0 })
	r.Add(func(dev any) (string, bool) { _, ok := dev.(gpuDev); return "any gpu", ok })
	b, ok := r.Find(gpuDev{id: 0})
	require.True(t, ok)
	require.Equal(t, "gpu", b)
	b, ok = r.Find(gpuDev{id: 1})
	require.True(t, ok)
	require.Equal(t, "any gpu", b)
	_, ok = r.Find("a string")
	require.False(t, ok)
}
