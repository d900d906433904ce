package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// partCSV writes the CSV of one run of grid with results rs.
func partCSV(t *testing.T, grid string, rs ...Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	cw, err := NewCSVWriter(&buf, Provenance{Grid: grid, Device: "cuda:0 Test GPU", Driver: "1.0", Library: "cuSPARSE 1.0",
		Bandwidth: 1e12, Date: "the date of the run", Commit: "abc"}, "run of "+grid)
	require.NoError(t, err)
	require.NoError(t, cw.Write(rs...))
	return buf.Bytes()
}

func timed(c Case, solver string, median, lo, hi time.Duration) Result {
	r := newResult(c, solver, []time.Duration{lo, median, hi}, 1e12)
	r.Resid = 1e-8
	return r
}

func TestProvenanceColumnsRoundTrip(t *testing.T) {
	c := Case{Precision: F32, Layout: Contiguous, N: 64, G: 8}
	data := partCSV(t, "quick", timed(c, "gpu:auto", 10*time.Microsecond, 9*time.Microsecond, 11*time.Microsecond))
	rs, err := ReadCSV(bytes.NewReader(data))
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, "quick", rs[0].Prov.Grid)
	assert.Equal(t, "cuda:0 Test GPU", rs[0].Prov.Device)
	assert.Equal(t, "cuSPARSE 1.0", rs[0].Prov.Library)
	assert.Equal(t, "abc", rs[0].Prov.Commit)
	assert.InDelta(t, 1e12, rs[0].Prov.Bandwidth, 1)
	assert.Equal(t, 10*time.Microsecond, rs[0].Median)

	// Two runs' files concatenated read as one.
	both := append(append([]byte{}, data...), partCSV(t, "paper", timed(c, "gpu:tpr", time.Microsecond, time.Microsecond, time.Microsecond))...)
	rs, err = ReadCSV(bytes.NewReader(both))
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, "paper", rs[1].Prov.Grid)
}

func TestReadBandCSVRoundTrip(t *testing.T) {
	in := []BandResult{
		{BandCase: BandCase{N: 1000, K: 4, G: 1, D: 1, Precision: F64}, Solver: "gpu:spike", P: 8,
			Factor: 3 * time.Millisecond, Solve: time.Millisecond, Total: 4 * time.Millisecond, Reps: 5, Iter: -1, Resid: 1e-15, MRows: 0.25},
		{BandCase: BandCase{N: 1000, K: 4, G: 1, D: 0.5, Precision: F64}, Solver: "gpu:bicgstab2+spike32",
			Total: 9 * time.Millisecond, Reps: 5, Iter: 3, Resid: -1, Err: ""},
	}
	var buf bytes.Buffer
	rw, err := newRecordWriter[BandResult](&buf, bandCSVHeader, "note")
	require.NoError(t, err)
	rw.prov = Provenance{Grid: GridBanded, Device: "dev"}.record()
	require.NoError(t, rw.write(in...))
	out, err := ReadBandCSV(&buf)
	require.NoError(t, err)
	require.Len(t, out, 2)
	for i := range in {
		in[i].Prov = Provenance{Grid: GridBanded, Device: "dev"}
		assert.Equal(t, in[i], out[i])
	}
}

func TestMergeBaseline(t *testing.T) {
	dir := t.TempDir()
	c := Case{Precision: F64, Layout: Contiguous, N: 256, G: 64}
	us := time.Microsecond
	parts := filepath.Join(dir, "parts")
	require.NoError(t, os.MkdirAll(parts, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "paper.csv"), partCSV(t, "paper", timed(c, "gpu:auto", 10*us, 9*us, 11*us)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "contiguous.csv"), partCSV(t, "contiguous", timed(c, "gpu:auto", 20*us, 19*us, 21*us)), 0o644))
	base := filepath.Join(dir, "baselines", "gpu")
	grids, err := MergeBaseline(base, parts)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"paper", "contiguous"}, grids)

	// A new paper part replaces the paper block and keeps the other.
	require.NoError(t, os.RemoveAll(parts))
	require.NoError(t, os.MkdirAll(parts, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(parts, "p.csv"), partCSV(t, "paper", timed(c, "gpu:auto", 7*us, 6*us, 8*us)), 0o644))
	_, err = MergeBaseline(base, parts)
	require.NoError(t, err)
	bs, err := ReadBaselines(filepath.Dir(base))
	require.NoError(t, err)
	require.Len(t, bs, 1)
	assert.Equal(t, "gpu", bs[0].Name)
	require.Len(t, bs[0].Tri, 2)
	// contiguous comes first in a baseline file, then paper.
	assert.Equal(t, "contiguous", bs[0].Tri[0].Prov.Grid)
	assert.Equal(t, 20*us, bs[0].Tri[0].Median)
	assert.Equal(t, "paper", bs[0].Tri[1].Prov.Grid)
	assert.Equal(t, 7*us, bs[0].Tri[1].Median)

	_, err = MergeBaseline(base, t.TempDir())
	assert.Error(t, err, "no parts")
}

func TestCompareBaselineFlagsRegressions(t *testing.T) {
	dir := t.TempDir()
	us := time.Microsecond
	fast := Case{Precision: F32, Layout: Contiguous, N: 64, G: 8}
	same := Case{Precision: F32, Layout: Contiguous, N: 128, G: 8}
	slow := Case{Precision: F32, Layout: Contiguous, N: 256, G: 8}
	path := filepath.Join(dir, "b.csv")
	require.NoError(t, os.WriteFile(path, partCSV(t, "quick",
		timed(fast, "gpu:auto", 10*us, 9*us, 11*us),
		timed(same, "gpu:auto", 10*us, 9*us, 11*us),
		timed(slow, "gpu:auto", 10*us, 9*us, 11*us)), 0o644))
	now := []Result{
		timed(fast, "gpu:auto", 5*us, 4*us, 6*us),                                            // apart, faster
		timed(same, "gpu:auto", 10500, 10200, 10800),                                         // within the spread
		timed(slow, "gpu:auto", 15*us, 12*us, 16*us),                                         // apart, slower
		timed(Case{Precision: F64, Layout: Contiguous, N: 64, G: 8}, "gpu:auto", us, us, us), // not in the baseline
	}
	var out bytes.Buffer
	n, err := CompareBaseline(&out, path, now, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	text := out.String()
	assert.Contains(t, text, "REGRESSION")
	assert.Equal(t, 1, strings.Count(text, "REGRESSION"))
	assert.Contains(t, text, "faster")
	assert.Contains(t, text, "3 cases")
	assert.Contains(t, text, "2.000×") // the faster case: 10 µs against 5 µs
}

func TestCompareBaselineBanded(t *testing.T) {
	dir := t.TempDir()
	c := BandCase{N: 1000, K: 4, G: 1, D: 1, Precision: F64}
	var buf bytes.Buffer
	rw, err := newRecordWriter[BandResult](&buf, bandCSVHeader)
	require.NoError(t, err)
	require.NoError(t, rw.write(BandResult{BandCase: c, Solver: "gpu:spike", Total: 10 * time.Millisecond, Reps: 3, Iter: -1, Resid: -1}))
	path := filepath.Join(dir, "b-banded.csv")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	var out bytes.Buffer
	n, err := CompareBaseline(&out, path, nil, []BandResult{{BandCase: c, Solver: "gpu:spike", Total: 13 * time.Millisecond, Reps: 3, Iter: -1, Resid: -1}})
	require.NoError(t, err)
	assert.Equal(t, 1, n, out.String())
	n, err = CompareBaseline(&out, path, nil, []BandResult{{BandCase: c, Solver: "gpu:spike", Total: 10200 * time.Microsecond, Reps: 3, Iter: -1, Resid: -1}})
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}

// The committed docs/performance.md and the README's headline table are
// what -report makes of the committed baselines: regenerate them with
// go run ./cmd/bandsolve bench -report docs.
func TestPerformanceDocMatchesBaselines(t *testing.T) {
	bs, err := ReadBaselines("baselines")
	require.NoError(t, err)
	require.NotEmpty(t, bs)
	plots, err := ReportPlots("../docs", bs)
	require.NoError(t, err)
	require.NotEmpty(t, plots, "the report's plots are missing from docs/img")
	doc, err := os.ReadFile("../docs/performance.md")
	require.NoError(t, err)
	assert.Equal(t, PerformanceDoc(bs, plots), string(doc),
		"docs/performance.md differs from the baselines: run go run ./cmd/bandsolve bench -report docs")

	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	table, err := Headline(bs)
	require.NoError(t, err)
	want, err := replaceHeadline(string(readme), table)
	require.NoError(t, err)
	assert.Equal(t, want, string(readme),
		"the README's headline table differs from the baselines: run go run ./cmd/bandsolve bench -report docs")
	for _, imgs := range plots {
		for _, img := range imgs {
			assert.Contains(t, string(doc), "("+img+")")
		}
	}
}

func TestReplaceHeadline(t *testing.T) {
	text := "a\n" + headlineStart + "\nold\n" + headlineEnd + "\nb\n"
	out, err := replaceHeadline(text, "new\n")
	require.NoError(t, err)
	assert.Equal(t, "a\n"+headlineStart+"\nnew\n"+headlineEnd+"\nb\n", out)
	_, err = replaceHeadline("no markers", "x")
	assert.Error(t, err)
}
