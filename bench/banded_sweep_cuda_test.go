//go:build cuda

package bench

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readBandCSVMaps reads a banded CSV as one map per record.
func readBandCSVMaps(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comment = '#'
	recs, err := cr.ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// TestBandedSweepGPU runs a tiny banded sweep on the GPU through Main:
// truncated SPIKE direct (FP64, FP32) for d = 1, BiCGStab(2) with the FP32
// SPIKE preconditioner for d = 0.6, K = 200 on the blocked path in FP64;
// K above the GPU's limit reported as a cell; residuals checked, speed-ups against the host LU filled in.
func TestBandedSweepGPU(t *testing.T) {
	openTestDevice(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "b.csv")
	var out, errb bytes.Buffer
	code := Main([]string{"-device", "cuda", "-grid", "banded", "-band-n", "20000", "-band-k", "2,16,200",
		"-band-d", "0.6,1", "-reps", "3", "-warmup", "1", "-copy-bytes", "64M", "-csv", csvPath, "-q"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	t.Log(out.String())
	rs := readBandCSVMaps(t, csvPath)
	gpu := 0
	for _, r := range rs {
		if !strings.HasPrefix(r["solver"], "gpu:") {
			continue
		}
		gpu++
		require.Empty(t, r["err"], "%v", r)
		res, err := strconv.ParseFloat(r["resid"], 64)
		require.NoError(t, err, "%v", r)
		lim := 1e-9
		if r["precision"] == "f32" && r["d"] == "1" {
			lim = 1e-4
		}
		assert.Less(t, res, lim, "%v", r)
		if r["d"] == "0.6" {
			assert.Equal(t, "gpu:bicgstab2+spike32", r["solver"])
			it, err := strconv.Atoi(r["iterations"])
			require.NoError(t, err)
			assert.Positive(t, it)
		} else {
			assert.Equal(t, "gpu:spike", r["solver"])
		}
		p, _ := strconv.Atoi(r["partitions"])
		assert.Positive(t, p, "%v", r)
		sp, err := strconv.ParseFloat(r["speedup"], 64)
		require.NoError(t, err, "speed-up against cpu:gbsv: %v", r)
		assert.Positive(t, sp)
	}
	// 3 K × (d = 0.6 iterative, d = 1 FP64 and FP32).
	assert.Equal(t, 9, gpu)

	// K above the GPU's limit in both precisions (tuning.SpikeMaxK: 717
	// and 1024 on an H100) is a cell, not a failure; no host peers.
	out.Reset()
	errb.Reset()
	csvPath = filepath.Join(dir, "k.csv")
	code = Main([]string{"-device", "cuda", "-grid", "banded", "-band-n", "20000", "-band-k", "1100",
		"-band-d", "1", "-host-max-rows", "1", "-reps", "1", "-warmup", "0", "-copy-bytes", "64M", "-csv", csvPath, "-q"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	gpu = 0
	for _, r := range readBandCSVMaps(t, csvPath) {
		if strings.HasPrefix(r["solver"], "gpu:") {
			gpu++
			assert.Contains(t, r["err"], "K > limit", "%v", r)
		}
	}
	assert.Equal(t, 2, gpu, "FP64 and FP32 rows")
}

// TestPentadiagGPU runs the pentadiagonal grid's smallest case shape
// through RunPenta: the three solvers (ours without and with pivoting,
// cuSPARSE) timed, accurate, the speed-up filled in.
func TestPentadiagGPU(t *testing.T) {
	openTestDevice(t)
	g, err := openGPU(0, 64<<20, os.Getenv("BANDSOLVE_CUSPARSE"))
	require.NoError(t, err)
	defer g.Close()
	bg := g.(bandGPU)
	for _, prec := range []string{F32, F64} {
		c := BandCase{N: 256, K: 2, G: 1024, D: 1, Precision: prec}
		rs := bg.RunPenta(t.Context(), c, bandRun{warmup: 1, reps: 3, seed: 1, bandwidth: g.Bandwidth(), progress: func(string) {}})
		require.Len(t, rs, 3)
		assert.Equal(t, []string{"gpu:bandbatch", "gpu:bandbatch-pivot", "cusparse:gpsvInterleavedBatch"}, []string{rs[0].Solver, rs[1].Solver, rs[2].Solver})
		setSpeedups(rs)
		lim := 1e-12
		if prec == F32 {
			lim = 1e-5
		}
		for _, r := range rs[:2] {
			require.Empty(t, r.Err, r.Solver)
			assert.Less(t, r.Resid, lim, "%+v", r)
			assert.Positive(t, r.MRows, r.Solver)
			assert.Positive(t, r.Fraction, r.Solver)
		}
		if rs[2].Err == "" {
			assert.Less(t, rs[2].Resid, lim, "%+v", rs[2])
			assert.Positive(t, rs[0].Speedup)
		} else {
			t.Logf("no gpsv: %s", rs[2].Err)
		}
	}
}
