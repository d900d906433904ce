package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/bandsolve/bandsolve/internal/atomicfile"
)

// seriesMinN is the number of distinct N a fixed-G group needs to get its
// own plot; smaller groups are plotted by N·G instead.
const seriesMinN = 3

// plotGroup is the results of one plot of MRows/s against N.
type plotGroup struct {
	prec, layout string
	constant     bool
	byRows       bool // fixed N·G (else fixed G)
	val          int64
	rs           []Result
}

func (g *plotGroup) file() string {
	s := "mrows-" + g.prec + "-" + g.layout
	if g.constant {
		s += "-const"
	}
	if g.byRows {
		return s + "-NG" + pow2Name(g.val) + ".png"
	}
	return s + "-G" + strconv.FormatInt(g.val, 10) + ".png"
}

func (g *plotGroup) title() string {
	s := g.prec + ", " + g.layout
	if g.constant {
		s += ", constant coefficients"
	}
	if g.byRows {
		return s + ", N·G = " + pow2Label(g.val)
	}
	return s + ", G = " + strconv.FormatInt(g.val, 10)
}

// pow2Name writes 2^k as "2pow<k>" (file names), other values in decimal.
func pow2Name(v int64) string {
	if k, ok := log2(v); ok {
		return "2pow" + strconv.Itoa(k)
	}
	return strconv.FormatInt(v, 10)
}

func pow2Label(v int64) string {
	if k, ok := log2(v); ok {
		return "2^" + strconv.Itoa(k)
	}
	return strconv.FormatInt(v, 10)
}

func log2(v int64) (int, bool) {
	if v < 1 || v&(v-1) != 0 {
		return 0, false
	}
	k := 0
	for v > 1 {
		v >>= 1
		k++
	}
	return k, true
}

// groupResults splits the timed results into plot groups: by (precision,
// layout, constant, G) where G has at least seriesMinN values of N (the
// paper's Fig. 12–13), the rest by (precision, layout, constant, N·G).
func groupResults(rs []Result) []*plotGroup {
	type gkey struct {
		prec, layout string
		constant     bool
		byRows       bool
		val          int64
	}
	ns := map[gkey]map[int]bool{}
	for _, r := range rs {
		if !r.OK() {
			continue
		}
		k := gkey{r.Precision, r.Layout, r.Constant, false, int64(r.G)}
		if ns[k] == nil {
			ns[k] = map[int]bool{}
		}
		ns[k][r.N] = true
	}
	groups := map[gkey]*plotGroup{}
	var keys []gkey
	for _, r := range rs {
		if !r.OK() {
			continue
		}
		k := gkey{r.Precision, r.Layout, r.Constant, false, int64(r.G)}
		if len(ns[k]) < seriesMinN {
			k.byRows, k.val = true, r.Rows()
		}
		g := groups[k]
		if g == nil {
			g = &plotGroup{prec: k.prec, layout: k.layout, constant: k.constant, byRows: k.byRows, val: k.val}
			groups[k] = g
			keys = append(keys, k)
		}
		g.rs = append(g.rs, r)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.prec != b.prec {
			return a.prec < b.prec
		}
		if a.constant != b.constant {
			return !a.constant
		}
		if a.layout != b.layout {
			return a.layout < b.layout
		}
		if a.byRows != b.byRows {
			return !a.byRows
		}
		return a.val < b.val
	})
	var out []*plotGroup
	for _, k := range keys {
		g := groups[k]
		distinct := map[int]bool{}
		for _, r := range g.rs {
			distinct[r.N] = true
		}
		if len(distinct) >= 2 {
			out = append(out, g)
		}
	}
	return out
}

// styles gives every solver one look across all plots.
type styles map[string]int

func newStyles(rs []Result) styles {
	var names []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Solver] {
			seen[r.Solver] = true
			names = append(names, r.Solver)
		}
	}
	sort.Strings(names)
	s := styles{}
	for i, n := range names {
		s[n] = i
	}
	return s
}

const paletteSize = 7 // plotutil.DefaultColors

func (s styles) line(name string, l *plotter.Line, p *plotter.Scatter) {
	i := s[name]
	c := plotutil.Color(i % paletteSize)
	if l != nil {
		l.Color = c
		l.Width = vg.Points(1.2)
		l.Dashes = plotutil.Dashes(i / paletteSize)
	}
	if p != nil {
		p.Color = c
		p.Shape = plotutil.Shape(i)
		p.Radius = vg.Points(2.5)
	}
}

// pow2Ticks marks powers of two on a log axis, labelled 2^k, thinned to
// at most about 12 labels.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 {
		return nil
	}
	k0, k1 := int(math.Floor(math.Log2(lo))), int(math.Ceil(math.Log2(hi)))
	step := max(1, (k1-k0+11)/12)
	var ts []plot.Tick
	for k := k0; k <= k1; k++ {
		t := plot.Tick{Value: math.Ldexp(1, k)}
		if (k-k0)%step == 0 {
			t.Label = "2^" + strconv.Itoa(k)
		}
		ts = append(ts, t)
	}
	return ts
}

// WritePlots writes PNG plots of the results into dir (created if need
// be) and returns the paths written:
//
//   - mrows-<prec>-<layout>[-const]-G<G>.png: MRows/s against N for a
//     fixed G, one line per solver (the style of the TPR paper's
//     Fig. 12–13);
//   - mrows-<prec>-<layout>[-const]-NG2pow<k>.png: the same for a fixed
//     number of rows N·G (the large-batch grid);
//   - roofline-<prec>.png: the fraction of the physical limit against N·G
//     for every timed case, one marker per solver.
func WritePlots(dir string, rs []Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	st := newStyles(rs)
	var files []string
	for _, g := range groupResults(rs) {
		p := newPlot(g.title(), "N (rows per system)", "MRows/s")
		bySolver := map[string]plotter.XYs{}
		var order []string
		for _, r := range g.rs {
			if _, ok := bySolver[r.Solver]; !ok {
				order = append(order, r.Solver)
			}
			bySolver[r.Solver] = append(bySolver[r.Solver], plotter.XY{X: float64(r.N), Y: r.MRows})
		}
		sort.Slice(order, func(i, j int) bool { return st[order[i]] < st[order[j]] })
		for _, name := range order {
			xys := bySolver[name]
			sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
			l, s, err := plotter.NewLinePoints(xys)
			if err != nil {
				return files, fmt.Errorf("bench: plot %s: %w", g.file(), err)
			}
			st.line(name, l, s)
			p.Add(l, s)
			p.Legend.Add(name, l, s)
		}
		fixRange(p)
		path := filepath.Join(dir, g.file())
		if err := savePlot(p, 9*vg.Inch, 6*vg.Inch, path); err != nil {
			return files, fmt.Errorf("bench: saving %s: %w", path, err)
		}
		files = append(files, path)
	}
	for _, prec := range Precisions() {
		path, err := writeRoofline(dir, prec, rs, st)
		if err != nil {
			return files, err
		}
		if path != "" {
			files = append(files, path)
		}
	}
	return files, nil
}

// writeRoofline plots the fraction of the limit against N·G.
func writeRoofline(dir, prec string, rs []Result, st styles) (string, error) {
	bySolver := map[string]plotter.XYs{}
	var order []string
	for _, r := range rs {
		if r.Precision != prec || !r.OK() || r.Fraction <= 0 {
			continue
		}
		if _, ok := bySolver[r.Solver]; !ok {
			order = append(order, r.Solver)
		}
		bySolver[r.Solver] = append(bySolver[r.Solver], plotter.XY{X: float64(r.Rows()), Y: r.Fraction})
	}
	if len(order) == 0 {
		return "", nil
	}
	sort.Slice(order, func(i, j int) bool { return st[order[i]] < st[order[j]] })
	p := newPlot(prec+": fraction of the copy-bandwidth limit (bytes that must move / time / copy bandwidth)",
		"N·G (rows in the batch)", "fraction of limit")
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, name := range order {
		xys := bySolver[name]
		for _, v := range xys {
			lo, hi = math.Min(lo, v.X), math.Max(hi, v.X)
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return "", fmt.Errorf("bench: roofline %s: %w", prec, err)
		}
		st.line(name, nil, s)
		p.Add(s)
		p.Legend.Add(name, s)
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 1}, {X: hi, Y: 1}})
	if err != nil {
		return "", err
	}
	limit.Width = vg.Points(1.5)
	p.Add(limit)
	p.Legend.Add("limit (copy bandwidth)", limit)
	p.Legend.Top, p.Legend.Left = false, false
	fixRange(p)
	p.Y.Max = math.Max(p.Y.Max, 1.5)
	path := filepath.Join(dir, "roofline-"+prec+".png")
	if err := savePlot(p, 9*vg.Inch, 6*vg.Inch, path); err != nil {
		return "", fmt.Errorf("bench: saving %s: %w", path, err)
	}
	return path, nil
}

// newPlot makes a plot with log axes: powers of two on x, decades on y.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = pow2Ticks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p
}

// fixRange widens degenerate or tight axis ranges so that log ticks exist.
func fixRange(p *plot.Plot) {
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		if ax.Min <= 0 || ax.Max <= 0 {
			continue
		}
		// Pad by a factor and make sure a power of ten lies inside.
		ax.Min /= 1.3
		ax.Max *= 1.3
		if math.Floor(math.Log10(ax.Max)) < math.Ceil(math.Log10(ax.Min)) {
			ax.Min = math.Pow(10, math.Floor(math.Log10(ax.Min)))
		}
	}
}

// savePlot writes p as a PNG of w×h at path, atomically: a failed write
// leaves an existing file as it was.
func savePlot(p *plot.Plot, w, h vg.Length, path string) error {
	wt, err := p.WriterTo(w, h, "png")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, func(out io.Writer) error {
		_, err := wt.WriteTo(out)
		return err
	})
}
