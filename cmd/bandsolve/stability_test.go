package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/stability"
	"github.com/bandsolve/bandsolve/tridiag"
)

var allColumns = []string{"thomas", "gtsv", "cr", "pcr", "wangmou", "tpr", "tpr-stable", "partition", "partition-pivot"}

// stabilityCSV runs the extended suite at n = 64 once and returns its
// records keyed by "type/precision/algorithm".
var stabilityCSV = sync.OnceValues(func() (map[string][]string, error) {
	var code int
	var out, errOut strings.Builder
	code = run([]string{"stability", "-n", "64", "-types", "extended", "-format", "csv"}, &out, &errOut)
	if code != 0 {
		return nil, fmt.Errorf("exit %d: %s", code, errOut.String())
	}
	recs, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != "type,description,precision,algorithm,n,rel_error,status" {
		return nil, fmt.Errorf("bad csv header in %q", out.String())
	}
	m := map[string][]string{}
	for _, r := range recs[1:] {
		m[r[0]+"/"+r[2]+"/"+r[3]] = r
	}
	if len(m) != len(recs)-1 {
		return nil, fmt.Errorf("duplicate records")
	}
	return m, nil
})

// relErr returns the error of a record and its status.
func relErr(t *testing.T, typ int, prec, alg string) (float64, string) {
	t.Helper()
	m, err := stabilityCSV()
	require.NoError(t, err)
	r, ok := m[fmt.Sprintf("%d/%s/%s", typ, prec, alg)]
	require.True(t, ok, "no record for type %d %s %s", typ, prec, alg)
	if r[5] == "" {
		return math.NaN(), r[6]
	}
	v, err := strconv.ParseFloat(r[5], 64)
	require.NoError(t, err, "rel_error %q", r[5])
	return v, r[6]
}

func TestStabilityCSVComplete(t *testing.T) {
	m, err := stabilityCSV()
	require.NoError(t, err)
	types := stability.Types(true)
	assert.Len(t, m, len(types)*2*len(allColumns))
	for _, ty := range types {
		for _, p := range []string{"f32", "f64"} {
			for _, alg := range allColumns {
				r, ok := m[ty.Name()+"/"+p+"/"+alg]
				if !assert.True(t, ok, "type %s %s %s", ty.Name(), p, alg) {
					continue
				}
				assert.Equal(t, ty.String(), r[1])
				assert.Equal(t, "64", r[4])
				switch r[6] {
				case statusOK:
					v, err := strconv.ParseFloat(r[5], 64)
					assert.NoError(t, err)
					assert.False(t, math.IsNaN(v))
				case statusNaN:
					assert.Equal(t, "NaN", r[5])
				case statusBreakdown, statusSingular:
					assert.Empty(t, r[5])
				default:
					t.Errorf("type %s %s %s: status %q", ty.Name(), p, alg, r[6])
				}
			}
		}
	}
}

func TestStabilityWellConditioned(t *testing.T) {
	// 6: b = 64; 18: tridiag(-1,4,-1); 19: tridiag(-1,4,1).
	for _, ty := range []int{6, 18, 19} {
		for _, alg := range []string{"thomas", "gtsv"} {
			e32, st := relErr(t, ty, "f32", alg)
			assert.Equal(t, statusOK, st)
			assert.Less(t, e32, 1e-5, "type %d f32 %s", ty, alg)
			e64, st := relErr(t, ty, "f64", alg)
			assert.Equal(t, statusOK, st)
			assert.Less(t, e64, 1e-13, "type %d f64 %s", ty, alg)
		}
	}
}

func TestStabilityZeroDiagonal(t *testing.T) {
	// Type 16 (b = 0, n even): pivoting solves it, Thomas cannot.
	for _, p := range []struct {
		prec string
		tol  float64
	}{{"f32", 1e-3}, {"f64", 1e-10}} {
		e, st := relErr(t, 16, p.prec, "gtsv")
		assert.Equal(t, statusOK, st, p.prec)
		assert.Less(t, e, p.tol, p.prec)
		e, st = relErr(t, 16, p.prec, "thomas")
		assert.True(t, st == statusBreakdown || st == statusNaN || e > 1e-2, "%s thomas on type 16: %v %s", p.prec, e, st)
	}
}

func TestStabilityText(t *testing.T) {
	code, out, errOut := runCmd(t, "stability", "-n", "64")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(out, "\n")
	assert.True(t, strings.HasPrefix(lines[0], "bandsolve stability: device cpu"), lines[0])
	assert.Contains(t, lines[0], "n = 64, seed = 1")
	assert.Contains(t, lines[0], "tpr S = 64")
	for _, title := range []string{"float32, n = 64", "float64, n = 64"} {
		assert.Contains(t, out, "\n"+title)
	}
	assert.Contains(t, lines[0], "classic types (1..16, 2T, 6T, 14T, 16T)")
	// One row per classic type and Toeplitz reading in each table, every
	// column filled.
	for _, ty := range stability.Types(false) {
		prefix := fmt.Sprintf("%4s  %s ", ty.Name(), ty)
		var rows []string
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				rows = append(rows, l)
			}
		}
		require.Len(t, rows, 2, "type %s", ty.Name())
		for _, r := range rows {
			cells := strings.Fields(strings.TrimPrefix(r, prefix))
			assert.Len(t, cells, len(allColumns), r)
		}
	}
	header := strings.Fields(lines[3])
	assert.Equal(t, append([]string{"type", "description"}, allColumns...), header)
	assert.Contains(t, out, "breakdown")
	assert.Contains(t, out, "breakdown = zero pivot reported by the solver")
	// Aligned: the header and the rows have the same width up to the last column.
	assert.Equal(t, len([]rune(lines[4])), len([]rune(lines[5])))
}

func TestStabilityMarkdown(t *testing.T) {
	code, out, errOut := runCmd(t, "stability", "-n", "64", "-format", "markdown", "-algorithms", "thomas,gtsv")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "**bandsolve stability: device cpu")
	assert.Contains(t, out, "### float32, n = 64")
	assert.Contains(t, out, "### float64, n = 64")
	assert.Contains(t, out, "| type | description | thomas | gtsv |\n|---:|:---|---:|---:|\n")
	assert.Contains(t, out, "| 16 | diag 0 | breakdown | ")
	var rows int
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| type") {
			rows++
			assert.Equal(t, 4, strings.Count(l, " |"), l)
		}
	}
	assert.Equal(t, 2*len(stability.Types(false)), rows)
	assert.Contains(t, out, "| 16T | Toeplitz diag 0 | ")
}

func TestStabilitySingularAndFile(t *testing.T) {
	// Odd n: clement (15) and the zero diagonal (16) are exactly singular.
	path := filepath.Join(t.TempDir(), "table.csv")
	code, out, errOut := runCmd(t, "stability", "-n", "33", "-format", "csv", "-precision", "f64",
		"-algorithms", "gtsv,tpr", "-slice", "8", "-o", path)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "n = 33, seed = 1")
	assert.Contains(t, errOut, "tpr S = 8, tpr-stable S = 64")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 1+len(stability.Types(false))*3)
	for _, r := range recs[1:] {
		assert.Equal(t, "f64", r[2])
		if r[0] == "15" || r[0] == "16" || r[0] == "16T" {
			assert.Equal(t, statusSingular, r[6], r)
			assert.Empty(t, r[5])
		}
	}
	// Text shows the word too.
	code, out, errOut = runCmd(t, "stability", "-n", "33", "-precision", "f32", "-algorithms", "thomas")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^  15  clement +singular$`, out)
	assert.Contains(t, out, "singular = the rounded matrix is exactly singular")
}

func TestStabilityBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "1"}, "need n ≥ 2"},
		{[]string{"-format", "xml"}, `unknown format "xml"`},
		{[]string{"-types", "all"}, `-types: unknown type "all"`},
		{[]string{"-types", "2,15T"}, `-types: unknown type "15T"`},
		{[]string{"-types", ","}, "-types is empty"},
		{[]string{"-algorithms", "thomas,magic"}, `unknown algorithm "magic"`},
		{[]string{"-algorithms", ","}, "-algorithms is empty"},
		{[]string{"-precision", "f16"}, `unknown precision "f16"`},
		{[]string{"-slice", "3"}, "power of two"},
		{[]string{"-device", "tpu"}, `unknown device "tpu"`},
	} {
		code, out, errOut := runCmd(t, append([]string{"stability"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	}
	if !cudaBuilt {
		code, _, errOut := runCmd(t, "stability", "-device", "cuda")
		assert.Equal(t, exitFail, code)
		assert.Contains(t, errOut, "rebuild with -tags cuda")
	}
	code, _, errOut := runCmd(t, "stability", "-n", "8", "-o", filepath.Join(t.TempDir(), "no", "such", "dir.txt"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "no such file or directory")
}

func TestStabilitySetupColumns(t *testing.T) {
	cfg, err := stabilitySetup(512, 1, "cpu", "md", "classic", "tpr-stable, TPR ,thomas,thomas,auto", "64,f32", 16, "")
	require.NoError(t, err)
	var names []string
	for _, c := range cfg.columns {
		names = append(names, fmt.Sprintf("%s/%d", c.name, c.slice))
	}
	assert.Equal(t, []string{"tpr-stable/512", "tpr/16", "thomas/0", "auto/0"}, names)
	assert.Equal(t, []string{"f64", "f32"}, cfg.precisions)
	assert.Equal(t, "markdown", cfg.format)
}

func TestTable(t *testing.T) {
	tb := &table{title: "T", header: []string{"k", "value"}, rightAlign: []bool{false, true},
		rows: [][]string{{"long name", "1"}, {"x", "12345678"}}}
	var sb strings.Builder
	require.NoError(t, tb.writeText(&sb))
	assert.Equal(t, "T\nk             value\n---------  --------\nlong name         1\nx          12345678\n", sb.String())
	sb.Reset()
	tb.rows[0][0] = "a|b"
	require.NoError(t, tb.writeMarkdown(&sb))
	assert.Equal(t, "### T\n\n| k | value |\n|:---|---:|\n| a\\|b | 1 |\n| x | 12345678 |\n", sb.String())
}

// refusingDevice is the CPU device, except that it has no plan for TPR.
type refusingDevice struct{ *tridiag.CPU }

func (d refusingDevice) NewSolver64(spec tridiag.Spec) (tridiag.Solver[float64], error) {
	if spec.Algorithm == tridiag.TPR {
		return nil, errors.New("tpr has no kernel here")
	}
	return d.CPU.NewSolver64(spec)
}

func TestStabilityNoPlan(t *testing.T) {
	cfg, err := stabilitySetup(16, 1, "cpu", "text", "classic", "thomas,tpr", "f64", 0, "")
	require.NoError(t, err)
	_, _, p64, e64 := generateProblems(cfg)
	res, notes := measure[float64](refusingDevice{tridiag.NewCPU(1)}, cfg, p64, e64)
	require.Len(t, res, len(stability.Types(false)))
	for i, row := range res {
		if ty := cfg.types[i]; ty < 14 {
			assert.Equal(t, statusOK, row[0].status, "type %s thomas", ty.Name())
		}
		assert.Equal(t, statusNA, row[1].status)
		assert.Equal(t, statusNA, row[2].status)
		assert.Equal(t, "n/a", row[1].cell())
	}
	require.Len(t, notes, 2)
	assert.Contains(t, notes[0], "tpr has no kernel here")
	var sb strings.Builder
	require.NoError(t, writeStability(&sb, io.Discard, cfg, "fake", map[string][][]outcome{"f64": res}))
	assert.Contains(t, sb.String(), "n/a = the device cannot run the algorithm")
}

func TestStabilityTypeList(t *testing.T) {
	code, out, errOut := runCmd(t, "stability", "-n", "64", "-types", "2T, 14t,14,2T", "-format", "csv", "-algorithms", "gtsv", "-precision", "f64")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "seed = 1, types 2T, 14T, 14\n")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 4)
	var names []string
	for _, r := range recs[1:] {
		names = append(names, r[0]+" "+r[1])
		assert.Equal(t, statusOK, r[6], r)
	}
	assert.Equal(t, []string{"2T Toeplitz diag 1e8", "14T Toeplitz diag 1e-8", "14 diag 1e-8"}, names)
	// 2T is diagonally dominant; at n = 64, seed 1, κ(14T) ≈ 7e25, so
	// even the pivoting solver loses every digit of the exact solution.
	e, st := relErr(t, 2, "f64", "gtsv")
	assert.Equal(t, statusOK, st)
	e2T, err := strconv.ParseFloat(recs[1][5], 64)
	require.NoError(t, err)
	assert.Less(t, e2T, 1e-15)
	assert.Less(t, e, 1e-15)
	e14T, err := strconv.ParseFloat(recs[2][5], 64)
	require.NoError(t, err)
	assert.Greater(t, e14T, 1e-3)
}

func TestTypeList(t *testing.T) {
	for want, ts := range map[string][]stability.Type{
		"1..16, 2T, 6T, 14T, 16T": stability.Types(false),
		"1..21, 2T, 6T, 14T, 16T": stability.Types(true),
		"1..14, 16, 21, 17..20":   stability.KleinStrzodka(),
		"2T, 14T, 14":             {stability.Type2T, stability.Type14T, 14},
		"3, 4, 6":                 {3, 4, 6},
		"":                        nil,
	} {
		assert.Equal(t, want, typeList(ts))
	}
}
