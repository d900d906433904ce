package bench

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var gbPerS = regexp.MustCompile(`([0-9.]+)\s*GB/s`)

// ReadAnchors reads measured peer numbers in the format of
// bench/anchors/cusparse-h200.csv (comment lines, then
// api,prec,N,G,us,MRows_per_s) and returns them as results keyed by case,
// with solver "anchor:<api>". gtsvInterleavedBatch rows get the
// interleaved layout, the others the contiguous one. When a comment gives
// the copy bandwidth ("… 4166 GB/s …"), fractions use it. The string
// describes what was read.
func ReadAnchors(path string) (map[Case][]Result, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	return readAnchors(f)
}

func readAnchors(rd io.Reader) (map[Case][]Result, string, error) {
	br := bufio.NewReader(rd)
	var bw float64
	var body strings.Builder
	for {
		line, err := br.ReadString('\n')
		if strings.HasPrefix(line, "#") {
			if m := gbPerS.FindStringSubmatch(line); m != nil && bw == 0 {
				v, _ := strconv.ParseFloat(m[1], 64)
				bw = v * 1e9
			}
		} else {
			body.WriteString(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", err
		}
	}
	recs, err := csv.NewReader(strings.NewReader(body.String())).ReadAll()
	if err != nil {
		return nil, "", fmt.Errorf("bench: anchors: %w", err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != "api,prec,N,G,us,MRows_per_s" {
		return nil, "", fmt.Errorf("bench: anchors: want the header api,prec,N,G,us,MRows_per_s")
	}
	out := map[Case][]Result{}
	n := 0
	for i, rec := range recs[1:] {
		if len(rec) < 5 {
			return nil, "", fmt.Errorf("bench: anchors: record %d is short", i+1)
		}
		prec, err := parsePrecision(rec[1])
		if err != nil {
			return nil, "", fmt.Errorf("bench: anchors: record %d: %w", i+1, err)
		}
		N, err1 := strconv.Atoi(rec[2])
		G, err2 := strconv.Atoi(rec[3])
		us, err3 := strconv.ParseFloat(rec[4], 64)
		if err1 != nil || err2 != nil || err3 != nil || N < 1 || G < 1 || us <= 0 {
			return nil, "", fmt.Errorf("bench: anchors: record %d: bad N, G or time", i+1)
		}
		layout := Contiguous
		if strings.Contains(rec[0], "Interleaved") {
			layout = Interleaved
		}
		c := Case{N: N, G: G, Layout: layout, Precision: prec}
		t := time.Duration(us * 1e3)
		r := Result{Case: c, Solver: "anchor:" + rec[0], Median: t, Min: t, Max: t, Resid: -1, Note: "measured elsewhere"}
		r.MRows, r.Fraction = figures(c, t, bw)
		out[c] = append(out[c], r)
		n++
	}
	note := fmt.Sprintf("%d anchors", n)
	if bw > 0 {
		note += fmt.Sprintf(", their copy bandwidth %.0f GB/s", bw/1e9)
	}
	return out, note, nil
}
