package bench

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// A baseline is the curated record of one GPU kind's performance
// (bench/baselines/NAME.csv for the tridiagonal grids, NAME-banded.csv for
// the banded grids and LAPACK): the CSV files of bench runs and of
// scripts/lapack-gbsv.py concatenated, one block a grid, each record
// carrying its provenance. scripts/baseline.sh measures the blocks on a
// GPU machine, -merge puts them into the baseline, -report turns the
// baselines into docs/performance.md and -baseline compares a run with
// one.

// Baseline is the results of one GPU kind.
type Baseline struct {
	Name string       // the file stem, e.g. "h100"
	Tri  []Result     // NAME.csv
	Band []BandResult // NAME-banded.csv
	Trsv []TrsvResult // NAME-sptrsv.csv
}

// ReadBaselines reads every baseline in dir (NAME.csv with its optional
// NAME-banded.csv and NAME-sptrsv.csv), sorted by name.
func ReadBaselines(dir string) ([]Baseline, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		return nil, err
	}
	byName := map[string]*Baseline{}
	var names []string
	get := func(name string) *Baseline {
		if b := byName[name]; b != nil {
			return b
		}
		b := &Baseline{Name: name}
		byName[name] = b
		names = append(names, name)
		return b
	}
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".csv")
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		if name, ok := strings.CutSuffix(stem, "-banded"); ok {
			get(name).Band, err = ReadBandCSV(fh)
		} else if name, ok := strings.CutSuffix(stem, "-sptrsv"); ok {
			get(name).Trsv, err = ReadTrsvCSV(fh)
		} else {
			get(stem).Tri, err = ReadCSV(fh)
		}
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	sort.Strings(names)
	out := make([]Baseline, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out, nil
}

// csvBlock is one run's part of a baseline file: its comment lines, the
// header and the records, with the grid its records name.
type csvBlock struct {
	grid   string
	banded bool
	text   []byte
}

// splitBlocks cuts a concatenation of CSV files into the files: a block
// starts with the comment lines before a header.
func splitBlocks(data []byte) ([]csvBlock, error) {
	var blocks []csvBlock
	var cur bytes.Buffer
	inRecords := false
	flush := func() error {
		if cur.Len() == 0 {
			return nil
		}
		b, err := newBlock(bytes.Clone(cur.Bytes()))
		if err != nil {
			return err
		}
		if b.grid != "" {
			blocks = append(blocks, b)
		}
		cur.Reset()
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") && inRecords {
			if err := flush(); err != nil {
				return nil, err
			}
			inRecords = false
		}
		if !strings.HasPrefix(line, "#") {
			inRecords = true
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return blocks, nil
}

// newBlock reads the grid of a block's records and whether they are
// banded ones.
func newBlock(text []byte) (csvBlock, error) {
	cr := csv.NewReader(bytes.NewReader(text))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return csvBlock{}, err
	}
	b := csvBlock{text: text}
	if len(recs) < 2 {
		return b, nil
	}
	b.banded = slices.Contains(recs[0], "K")
	gi := slices.Index(recs[0], "grid")
	if gi < 0 {
		return b, fmt.Errorf("CSV records without a grid column (header %q)", strings.Join(recs[0], ","))
	}
	for _, r := range recs[1:] {
		if gi < len(r) && r[gi] != "" {
			if b.grid != "" && r[gi] != b.grid {
				return b, fmt.Errorf("one CSV file holds grids %q and %q", b.grid, r[gi])
			}
			b.grid = r[gi]
		}
	}
	return b, nil
}

// gridOrder is the order of the grids in a baseline file (others after,
// by name).
var gridOrder = []string{"contiguous", "interleaved", "large", "const", "layouts", "paper", "segments",
	GridBanded, GridPentadiag, "lapack", "sptrsv"}

func gridRank(g string) int {
	if i := slices.Index(gridOrder, g); i >= 0 {
		return i
	}
	return len(gridOrder)
}

// MergeBaseline puts the CSV files in partsDir (written by
// scripts/baseline.sh) into the baseline base (a path without .csv, e.g.
// bench/baselines/h100): the tridiagonal ones into base.csv, the banded
// ones and LAPACK's into base-banded.csv. A grid that the parts hold
// replaces that grid's block; the other blocks stay. It returns the grids
// merged.
func MergeBaseline(base, partsDir string) ([]string, error) {
	parts, err := filepath.Glob(filepath.Join(partsDir, "*.csv"))
	if err != nil {
		return nil, err
	}
	var fresh []csvBlock
	for _, p := range parts {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		bs, err := splitBlocks(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		fresh = append(fresh, bs...)
	}
	if len(fresh) == 0 {
		return nil, fmt.Errorf("no CSV records in %s", partsDir)
	}
	var merged []string
	for _, banded := range []bool{false, true} {
		path := base + ".csv"
		if banded {
			path = base + "-banded.csv"
		}
		var mine []csvBlock
		for _, b := range fresh {
			if b.banded == banded {
				mine = append(mine, b)
				merged = append(merged, b.grid)
			}
		}
		if len(mine) == 0 {
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		kept, err := splitBlocks(old)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		kept = slices.DeleteFunc(kept, func(o csvBlock) bool {
			return slices.ContainsFunc(mine, func(b csvBlock) bool { return b.grid == o.grid })
		})
		all := append(kept, mine...)
		sort.SliceStable(all, func(i, j int) bool {
			ri, rj := gridRank(all[i].grid), gridRank(all[j].grid)
			if ri != rj {
				return ri < rj
			}
			return all[i].grid < all[j].grid
		})
		var out bytes.Buffer
		for _, b := range all {
			out.Write(b.text)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return merged, nil
}

// comparison is one solver and case of a run next to the baseline's.
type comparison struct {
	what           string
	base, now      float64 // median seconds
	baseLo, baseHi float64 // the baseline's spread (min, max)
	nowLo, nowHi   float64
}

// speed is how many times faster the run is than the baseline.
func (c comparison) speed() float64 { return c.base / c.now }

// verdict says whether the spreads of the run and of the baseline are
// apart: "slower" (a regression), "faster", or "" within the spread.
func (c comparison) verdict() string {
	switch {
	case c.nowLo > c.baseHi:
		return "slower"
	case c.nowHi < c.baseLo:
		return "faster"
	}
	return ""
}

// bandSpread is the relative spread assumed for banded results, whose
// CSV records keep the median alone.
const bandSpread = 0.05

// CompareBaseline prints, for every result of the run that the baseline
// holds (same case and solver), the baseline's median, the run's, the
// speed of the run against it and a flag where the runs' spreads (min to
// max; ±5% for banded results) do not overlap. It returns the number of
// regressions.
func CompareBaseline(w io.Writer, path string, tri []Result, band []BandResult) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return 0, err
	}
	var cs []comparison
	var baseDev string
	if banded := len(band) > 0; banded {
		base, err := ReadBandCSV(bytes.NewReader(data))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		for _, r := range band {
			for _, b := range base {
				if b.BandCase == r.BandCase && b.Solver == r.Solver && b.OK() && r.OK() {
					baseDev = b.Prov.Device
					bs, ns := b.Total.Seconds(), r.Total.Seconds()
					cs = append(cs, comparison{what: r.BandCase.String() + " " + r.Solver, base: bs, now: ns,
						baseLo: bs * (1 - bandSpread), baseHi: bs * (1 + bandSpread),
						nowLo: ns * (1 - bandSpread), nowHi: ns * (1 + bandSpread)})
					break
				}
			}
		}
	} else {
		base, err := ReadCSV(bytes.NewReader(data))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		for _, r := range tri {
			var match *Result
			for i, b := range base {
				if b.Case == r.Case && b.Solver == r.Solver && b.OK() && r.OK() {
					if match == nil || b.Prov.Grid == r.Prov.Grid {
						match = &base[i]
					}
				}
			}
			if match != nil {
				baseDev = match.Prov.Device
				cs = append(cs, comparison{what: r.Case.String() + " " + r.Solver,
					base: match.Median.Seconds(), now: r.Median.Seconds(),
					baseLo: match.Min.Seconds(), baseHi: match.Max.Seconds(),
					nowLo: r.Min.Seconds(), nowHi: r.Max.Seconds()})
			}
		}
	}
	fmt.Fprintf(w, "# against the baseline %s (%s)\n", path, baseDev)
	if len(cs) == 0 {
		fmt.Fprintln(w, "# the baseline holds none of this run's cases")
		return 0, nil
	}
	t := &table{head: []string{"case and solver", "baseline", "now", "speed", "flag"},
		right: []bool{false, true, true, true, false}}
	regressions, logSum := 0, 0.0
	for _, c := range cs {
		v := c.verdict()
		if v == "slower" {
			regressions++
			v = "REGRESSION"
		}
		logSum += math.Log(c.speed())
		t.add(c.what, fmtSeconds(c.base), fmtSeconds(c.now), fmt.Sprintf("%.3f×", c.speed()), v)
	}
	if err := t.write(w); err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "# %d cases, geometric-mean speed against the baseline %.3f×, %d slower beyond both spreads\n",
		len(cs), math.Exp(logSum/float64(len(cs))), regressions)
	return regressions, nil
}

func fmtSeconds(s float64) string { return fmtDuration(secondsDuration(s)) }
