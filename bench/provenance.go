package bench

import (
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Provenance says where and when a result was measured. The bench writes
// it as columns of every CSV record, so that a baseline file (rows of
// several runs, see bench/baselines) carries its own provenance.
type Provenance struct {
	Grid      string  // the -grid of the run
	Device    string  // e.g. "cuda:0 NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)" or the CPU's name
	Driver    string  // the NVIDIA driver, e.g. "580.159.04 (CUDA 13.0)"; "" on the CPU
	Library   string  // the peer library, e.g. "cuSPARSE 12.6.3"; "" when none
	Bandwidth float64 // the copy bandwidth of the device side, bytes read+written per second
	Date      string  // UTC start of the run, RFC 3339
	Commit    string  // the module's VCS revision the binary was built from ("+dirty" when modified)
}

// provenanceHeader names the provenance columns of the CSV files.
var provenanceHeader = []string{"grid", "device", "driver", "library", "bandwidth_gbs", "date", "commit"}

func (p Provenance) record() []string {
	bw := ""
	if p.Bandwidth > 0 {
		bw = strconv.FormatFloat(p.Bandwidth/1e9, 'f', 1, 64)
	}
	return []string{p.Grid, p.Device, p.Driver, p.Library, bw, p.Date, p.Commit}
}

// parseProvenance reads the provenance columns of a record; absent columns
// stay empty.
func parseProvenance(get func(string) string) Provenance {
	p := Provenance{Grid: get("grid"), Device: get("device"), Driver: get("driver"),
		Library: get("library"), Date: get("date"), Commit: get("commit")}
	if v, err := strconv.ParseFloat(get("bandwidth_gbs"), 64); err == nil {
		p.Bandwidth = v * 1e9
	}
	return p
}

// newProvenance starts the provenance of a run of grid now.
func newProvenance(grid string) Provenance {
	return Provenance{Grid: grid, Date: time.Now().UTC().Format(time.RFC3339), Commit: buildCommit()}
}

// buildCommit is the VCS revision recorded in the binary (go build in a
// git checkout records it), shortened to 12 characters, with "+dirty" when
// the tree had changes; "unknown" without one.
func buildCommit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

var nvidiaModule = regexp.MustCompile(`Kernel Module\s+([0-9.]+)`)

// nvidiaDriver is the version of the NVIDIA driver, from
// /proc/driver/nvidia/version or else nvidia-smi, or "".
func nvidiaDriver() string {
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		if m := nvidiaModule.FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	out, err := exec.Command("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader").Output()
	if err != nil {
		return ""
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(v)
}
