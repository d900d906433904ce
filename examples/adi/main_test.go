package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallConfig runs every problem on three grids and two tiny timing runs,
// on every device of the build (the CPU; also the GPU with -tags cuda).
func smallConfig() config {
	cfg := defaultConfig()
	cfg.bench2d, cfg.bench3d, cfg.benchTime = 32, 8, time.Millisecond
	return cfg
}

// checkSecondOrder asserts that each refinement divides the error by
// about 4 (within finest for the finest pair of grids).
func checkSecondOrder(t *testing.T, res []deviceResult, levels int, finest float64) {
	t.Helper()
	for _, dr := range res {
		require.Len(t, dr.tables, 4, dr.device)
		for _, tb := range dr.tables {
			require.Len(t, tb.levels, levels)
			for i, lv := range tb.levels {
				assert.Greater(t, lv.stepsPerSec, 0.0)
				if i == 0 {
					continue
				}
				assert.InDelta(t, 4, lv.ratio, 0.6, "%s: %dD periodic=%v, level %d: error %.3e after %.3e",
					dr.device, tb.dims, tb.periodic, i, lv.err, tb.levels[i-1].err)
			}
			// The finest pair is close to the asymptotic ratio.
			assert.InDelta(t, 4, tb.levels[levels-1].ratio, finest, "%s: %dD periodic=%v", dr.device, tb.dims, tb.periodic)
		}
		assert.Len(t, dr.bench, 2)
	}
}

func TestSecondOrderFloat64(t *testing.T) {
	var out bytes.Buffer
	cfg := smallConfig()
	res, err := run(cfg, &out)
	require.NoError(t, err)
	require.Len(t, res, len(cfg.devices))
	checkSecondOrder(t, res, cfg.levels, 0.2)
	for _, want := range []string{"Peaceman–Rachford", "Douglas", "periodic boundaries", "steps/s", "timing"} {
		assert.Contains(t, out.String(), want)
	}
	// Every device runs the same scheme: the same errors to rounding.
	for _, dr := range res[1:] {
		for i, tb := range dr.tables {
			for l, lv := range tb.levels {
				assert.InEpsilon(t, res[0].tables[i].levels[l].err, lv.err, 1e-8, "%s vs %s", dr.device, res[0].device)
			}
		}
	}
	t.Log("\n" + out.String())
}

func TestSecondOrderFloat32(t *testing.T) {
	cfg := smallConfig()
	cfg.precision = "f32"
	cfg.bench2d, cfg.bench3d = 0, 0
	res, err := run(cfg, &bytes.Buffer{})
	require.NoError(t, err)
	for i := range res {
		res[i].bench = make([]level, 2) // none were asked for
	}
	// Rounding in float32 blurs the ratio of the finest pair a little.
	checkSecondOrder(t, res, cfg.levels, 0.5)
}

func TestBadInput(t *testing.T) {
	cfg := smallConfig()
	cfg.devices = []string{"tpu"}
	_, err := run(cfg, &bytes.Buffer{})
	assert.ErrorContains(t, err, "tpu")
	cfg = smallConfig()
	cfg.precision = "f16"
	_, err = run(cfg, &bytes.Buffer{})
	assert.Error(t, err)
	cfg = smallConfig()
	cfg.levels = 0
	_, err = run(cfg, &bytes.Buffer{})
	assert.True(t, err != nil && strings.Contains(err.Error(), "configuration"))
}
