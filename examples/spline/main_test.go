package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example at a small size, on every device of the build (the CPU;
// also the GPU with -tags cuda), with the plot written to a temporary file.
func TestRun(t *testing.T) {
	cfg := defaultConfig()
	cfg.curves, cfg.knots, cfg.levels, cfg.benchTime = 200, 32, 4, time.Millisecond
	cfg.plot = filepath.Join(t.TempDir(), "spline.png")
	var out bytes.Buffer
	res, err := run(cfg, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())

	assert.Less(t, res.cubicErr, 1e-12, "a clamped spline reproduces a cubic")
	assert.Less(t, res.naturalErr, 1e-12, "a natural spline through a line has S″ = 0")
	assert.Zero(t, res.batchVsOne, "batch and one-at-a-time fits agree exactly")
	require.Len(t, res.periodic, cfg.levels)
	for _, c := range res.periodic[1:] {
		assert.InDelta(t, 16, c.ratio, 1.5, "fourth order at %d intervals", c.intervals)
	}
	require.Len(t, res.timings, len(cfg.devices))
	for _, tm := range res.timings {
		assert.Greater(t, tm.curvesPerSec, 0.0, tm.device)
	}
	st, err := os.Stat(cfg.plot)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(10000), "PNG size")
}

func TestBadConfig(t *testing.T) {
	cfg := defaultConfig()
	cfg.devices = []string{"tpu"}
	cfg.curves, cfg.benchTime = 10, time.Millisecond
	_, err := run(cfg, &bytes.Buffer{})
	assert.ErrorContains(t, err, "tpu")
	cfg.knots = 2
	_, err = run(cfg, &bytes.Buffer{})
	assert.ErrorContains(t, err, "configuration")
}
