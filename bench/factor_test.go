package bench

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The factor grids list their cases, and refuse to run off the GPU.
func TestFactorGridList(t *testing.T) {
	for _, g := range FactorGrids() {
		var out, errb bytes.Buffer
		code := Main([]string{"-grid", g, "-list"}, &out, &errb)
		require.Equal(t, 0, code, errb.String())
		assert.Equal(t, len(factorGrids[g]), strings.Count(out.String(), "\n"), out.String())
		assert.Contains(t, out.String(), factorGrids[g][0].String())
	}
	var out, errb bytes.Buffer
	assert.NotEqual(t, 0, Main([]string{"-grid", "factor-quick", "-device", "cpu"}, &out, &errb))
	assert.Contains(t, errb.String(), "-device cuda")
}

// The gains relate a case's results: per right-hand side against the
// one-shot solve, and SPD against the general path of the same NRHS.
func TestFactorResultGains(t *testing.T) {
	c := FactorCase{N: 100, G: 1000, Layout: Interleaved}
	mk := func(solver string, nrhs int, d time.Duration) FactorResult {
		return FactorResult{Case: c, Precision: F32, Solver: solver, NRHS: nrhs, Time: d, Values: 2*float64(nrhs) + 3, ElemBytes: 4, Bandwidth: 1e12}
	}
	rs := []FactorResult{
		mk(factorOneShot, 1, 10*time.Microsecond),
		mk("gpu:thomas/solve", 4, 20*time.Microsecond),
		mk("gpu:ldlt/solve", 4, 16*time.Microsecond),
		mk("gpu:ldlt/solve", 16, 50*time.Microsecond),
	}
	relateFactorResults(rs)
	assert.InDelta(t, 2.0, rs[1].PerRHSGain(), 1e-12) // 4 one-shot solves: 40 µs against 20
	assert.InDelta(t, 2.5, rs[2].PerRHSGain(), 1e-12) // 40 against 16
	assert.InDelta(t, 1.25, rs[2].SPDGain(), 1e-12)   // thomas 20 against ldlt 16
	assert.Zero(t, rs[3].SPDGain())                   // no general solve of 16 columns
	assert.InDelta(t, 1e5*16/50, rs[3].MRows(), 1e-9) // rows × columns per µs
	assert.InDelta(t, 1e5*35*4/50e-6/1e12*100, rs[3].Limit(), 1e-9)

	var table, file bytes.Buffer
	require.NoError(t, WriteFactorTable(&table, rs))
	assert.Equal(t, len(rs)+1, strings.Count(table.String(), "\n"))
	assert.Contains(t, table.String(), "2.50×")
	require.NoError(t, WriteFactorCSV(&file, rs))
	recs, err := csv.NewReader(&file).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, len(rs)+1)
	assert.Equal(t, factorHeader, recs[0])
	assert.Equal(t, "gpu:ldlt/solve", recs[3][4])
}
