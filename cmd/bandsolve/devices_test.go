package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tuning"
)

func TestDevices(t *testing.T) {
	code, out, errOut := runCmd(t, "devices")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "CPU: ")
	assert.Contains(t, out, "workers: ")
	assert.Contains(t, out, "caches:  L1d ")
	assert.Contains(t, out, "L2 ")
	if !cudaBuilt {
		assert.Contains(t, out, "CUDA: not built in (build with -tags cuda)")
	}
}

func TestWriteGPU(t *testing.T) {
	var sb strings.Builder
	writeGPU(&sb, 0, tuning.H200, 140<<30, tuning.H200.TotalMem, nil)
	out := sb.String()
	for _, want := range []string{"cuda:0: NVIDIA H200", "compute capability 9.0", "132 SMs",
		"48 KiB per block (227 KiB opt-in)", "228 KiB per SM", "L2:      60 MiB", "140 GiB free", "6144-bit bus"} {
		assert.Contains(t, out, want)
	}
	sb = strings.Builder{}
	writeGPU(&sb, 3, tuning.A100, 0, 0, errors.New("driver gone"))
	assert.Contains(t, sb.String(), "cuda:3: NVIDIA A100")
	assert.Contains(t, sb.String(), "free unknown (driver gone)")
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 512: "512 B", 1024: "1 KiB", 48 << 10: "48 KiB",
		1536 << 10: "1.5 MiB", 60 << 20: "60 MiB", 80 << 30: "80 GiB", 3 << 40: "3 TiB"} {
		assert.Equal(t, want, formatBytes(in), "%d", in)
	}
}

func TestParseDeviceName(t *testing.T) {
	good := []struct {
		in   string
		kind string
		n    int
	}{{"cpu", "cpu", 0}, {"CPU", "cpu", 0}, {"cpu:3", "cpu", 3}, {"cuda", "cuda", 0}, {"cuda:1", "cuda", 1}}
	for _, g := range good {
		kind, n, err := parseDeviceName(g.in)
		require.NoError(t, err, g.in)
		assert.Equal(t, g.kind, kind, g.in)
		assert.Equal(t, g.n, n, g.in)
	}
	for _, bad := range []string{"", "gpu", "cpu:0", "cpu:x", "cuda:-1", "cuda:a"} {
		_, _, err := parseDeviceName(bad)
		var ue usageError
		assert.ErrorAs(t, err, &ue, bad)
	}
}

func TestOpenDeviceCPU(t *testing.T) {
	dev, release, err := openDevice("cpu:2")
	require.NoError(t, err)
	defer release()
	assert.Contains(t, dev.Name(), "2 workers")
	if !cudaBuilt {
		_, _, err := openDevice("cuda:0")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "-tags cuda")
	}
}

func TestWriteRoutes(t *testing.T) {
	var b strings.Builder
	writeRoutes(&b, tuning.H100, nil)
	out := b.String()
	require.Equal(t, 6, strings.Count(out, "route "), out)
	assert.Contains(t, out, "route f32 N=256 G=65536 interleaved: whole[lanes", out)
	assert.Contains(t, out, "route f64 N=16777216 G=1 contiguous: segments[segments", out)
}
