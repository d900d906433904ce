package bench

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTrsvCSVRoundTrip: what WriteTrsvCSV writes, ReadTrsvCSV reads back,
// provenance included.
func TestTrsvCSVRoundTrip(t *testing.T) {
	prov := Provenance{Grid: "sptrsv", Device: "cuda:0 test", Driver: "1.0", Library: "cuSPARSE 1", Bandwidth: 3e12, Date: "the date", Commit: "the commit"}
	rs := []TrsvResult{
		{Matrix: "m", Desc: "a, matrix", N: 10, NNZ: 19, Levels: 10, Precision: "f64", Solver: "gpu:auto(syncfree-csr)",
			Analysis: 3 * time.Millisecond, Solve: 2 * time.Millisecond, SolveLo: time.Millisecond, SolveHi: 4 * time.Millisecond,
			Launches: 1, RelErr: 1e-16, Prov: prov},
		{Matrix: "m", N: 10, NNZ: 19, Levels: 10, Precision: "f64", Solver: "cusparse:SpSV", Analysis: 9 * time.Millisecond,
			First: 70 * time.Millisecond, Solve: 4 * time.Millisecond, Err: "", Prov: prov},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteTrsvCSV(&buf, rs))
	got, err := ReadTrsvCSV(strings.NewReader("# a comment\n" + buf.String()))
	require.NoError(t, err)
	require.Equal(t, rs, got)
	var doc bytes.Buffer
	writeTrsvDoc(&doc, got)
	require.Contains(t, doc.String(), "| m | 10 | 19 | 10 | FP64 | syncfree-csr | 2.00ms | 3.00ms | auto(syncfree-csr) | 2.00ms | 4.00ms | 9.00ms | 2.00× | 2.00× | 3.00× | 2.60× |")
	require.Contains(t, doc.String(), "Auto's solve 2.00×")
	_, err = ReadTrsvCSV(strings.NewReader("matrix,n\nx,1\n"))
	require.ErrorContains(t, err, "no column")
}

// TestTrsvGridOnTheCPU runs the small grid's first case on the CPU.
func TestTrsvGridOnTheCPU(t *testing.T) {
	cfg, err := parseFlags([]string{"-grid", "sptrsv-small", "-device", "cpu", "-reps", "2", "-cases", "3", "-q"}, io.Discard)
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), cfg, &out, &errOut))
	require.Contains(t, out.String(), "dense-lower")
	require.Contains(t, out.String(), "cpu:levelset")
	require.Contains(t, out.String(), "0.0e+00", "the level-set solve is the sequential reference's")
}
