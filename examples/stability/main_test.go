package main

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallConfig is the study at n = 512 with four systems, on the device of
// the build under test (the GPU with -tags cuda).
func smallConfig() config {
	cfg := defaultConfig()
	cfg.n, cfg.seeds, cfg.device = 512, 4, testDevice
	return cfg
}

// A well-conditioned type: every algorithm and slice size is accurate.
func TestWellConditioned(t *testing.T) {
	cfg := smallConfig()
	cfg.typ, cfg.precision = 20, "f64"
	var out bytes.Buffer
	res, err := run(cfg, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Len(t, res.rows, 2+9) // thomas, gtsv, S = 2 … 512
	for _, r := range res.rows {
		assert.Less(t, r.worst, 1e-15, r.name)
		assert.Zero(t, r.breakdowns, r.name)
	}
	assert.Equal(t, 2, res.chosen)
	assert.Equal(t, 128, res.fastest)
	assert.Equal(t, 512, res.stable)
	assert.Contains(t, out.String(), "← fastest (default S)")
	assert.Contains(t, out.String(), "← tpr-stable")
}

// The default study (type 1, float32) at a small size: errors are those of
// float32 rounding grown by the conditioning, and a slice size is chosen.
func TestRandomFloat32(t *testing.T) {
	res, err := run(smallConfig(), &bytes.Buffer{})
	require.NoError(t, err)
	gtsv := res.rows[1]
	assert.Equal(t, "gtsv", gtsv.name)
	assert.Less(t, gtsv.worst, 1e-3)
	assert.NotZero(t, res.chosen)
	for _, r := range res.rows {
		assert.False(t, math.IsNaN(r.worst), r.name)
	}
}

// A zero diagonal breaks every non-pivoting algorithm on some system; the
// pivoting solver still solves it, and the failures are counted, not
// hidden.
func TestBreakdownsCounted(t *testing.T) {
	cfg := smallConfig()
	cfg.typ, cfg.precision = 16, "f64"
	res, err := run(cfg, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, cfg.seeds, res.rows[0].breakdowns, "thomas")
	assert.True(t, math.IsNaN(res.rows[0].worst))
	assert.Zero(t, res.rows[1].breakdowns, "gtsv")
	assert.Less(t, res.rows[1].worst, 1.0)
	assert.Equal(t, cfg.seeds, res.rows[2].breakdowns, "tpr S=2")
}

// A type that does not depend on the seed is solved once.
func TestDeterministicType(t *testing.T) {
	cfg := smallConfig()
	cfg.typ = 7
	var out bytes.Buffer
	_, err := run(cfg, &out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "1 system(s)")
}

func TestBadConfig(t *testing.T) {
	for _, mod := range []func(*config){
		func(c *config) { c.typ = 0 },
		func(c *config) { c.n = 1 },
		func(c *config) { c.precision = "f16" },
		func(c *config) { c.device = "tpu" },
	} {
		cfg := smallConfig()
		mod(&cfg)
		_, err := run(cfg, &bytes.Buffer{})
		assert.Error(t, err)
	}
}
