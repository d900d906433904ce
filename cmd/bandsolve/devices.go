package main

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/klauspost/cpuid/v2"

	"github.com/bandsolve/bandsolve/tridiag"
	"github.com/bandsolve/bandsolve/tuning"
	"github.com/bandsolve/bandsolve/tuning/route"
)

var devicesCommand = &command{
	name:     "devices",
	summary:  "list the CPU and the CUDA devices",
	synopsis: "devices",
	about: `Devices describes the devices bandsolve can solve on: the CPU (its
name, the worker goroutines the CPU device uses and the cache sizes) and,
in a binary built with -tags cuda, every CUDA device (name, compute
capability, multiprocessors, memory total and free, shared memory per
block with and without opt-in, L2 cache).

Device names for the -device flag of the other commands:
  cpu            the CPU, one worker per core (GOMAXPROCS)
  cpu:W          the CPU with W workers
  cuda, cuda:N   the first or the N-th CUDA device (needs -tags cuda)`,
	examples: `  bandsolve devices`,
	run:      runDevices,
}

func runDevices(c *command, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(c)
	if help, err := parseFlags(c, fs, args, stdout); help || err != nil {
		return err
	}
	writeCPU(stdout, tridiag.DefaultCPU())
	return listGPUs(stdout)
}

// parseDeviceName splits a -device value: "cpu" or "cpu:W" gives kind
// "cpu" and W workers (0: one per core); "cuda" or "cuda:N" gives kind
// "cuda" and ordinal N (0 by default).
func parseDeviceName(name string) (kind string, n int, err error) {
	kind, num, hasNum := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ":")
	if kind != "cpu" && kind != "cuda" {
		return "", 0, usageErrorf("unknown device %q (want cpu, cpu:WORKERS, cuda or cuda:N)", name)
	}
	if hasNum {
		n, err = strconv.Atoi(num)
		if err != nil || n < 0 || (kind == "cpu" && n == 0) {
			what := "a GPU ordinal ≥ 0"
			if kind == "cpu" {
				what = "a worker count ≥ 1"
			}
			return "", 0, usageErrorf("bad device %q: %q is not %s", name, num, what)
		}
	}
	return kind, n, nil
}

// cpuDevice returns the CPU device with w workers (0: the default one).
func cpuDevice(w int) *tridiag.CPU {
	if w == 0 {
		return tridiag.DefaultCPU()
	}
	return tridiag.NewCPU(w)
}

// writeCPU describes the CPU and the CPU device.
func writeCPU(w io.Writer, dev *tridiag.CPU) {
	c := cpuid.CPU
	brand := c.BrandName
	if brand == "" {
		brand = "unknown CPU"
	}
	fmt.Fprintf(w, "CPU: %s\n", brand)
	fmt.Fprintf(w, "  device:  %s\n", dev.Name())
	fmt.Fprintf(w, "  vendor:  %s, family %d, model %d (%s/%s)\n", orUnknown(c.VendorString), c.Family, c.Model, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "  cores:   %d logical, %d physical, %d thread(s) per core; GOMAXPROCS %d\n",
		c.LogicalCores, c.PhysicalCores, c.ThreadsPerCore, runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "  workers: %d\n", dev.Workers())
	fmt.Fprintf(w, "  caches:  L1d %s, L1i %s, L2 %s, L3 %s, line %s\n",
		cacheSize(c.Cache.L1D), cacheSize(c.Cache.L1I), cacheSize(c.Cache.L2), cacheSize(c.Cache.L3), cacheSize(c.CacheLine))
	var feats []string
	for _, f := range []struct {
		id   cpuid.FeatureID
		name string
	}{{cpuid.SSE4, "SSE4.1"}, {cpuid.AVX, "AVX"}, {cpuid.AVX2, "AVX2"}, {cpuid.FMA3, "FMA3"},
		{cpuid.AVX512F, "AVX512F"}, {cpuid.ASIMD, "ASIMD"}, {cpuid.SVE, "SVE"}} {
		if c.Supports(f.id) {
			feats = append(feats, f.name)
		}
	}
	if len(feats) == 0 {
		feats = []string{"none detected"}
	}
	fmt.Fprintf(w, "  vector:  %s\n", strings.Join(feats, " "))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func cacheSize(b int) string {
	if b <= 0 {
		return "unknown"
	}
	return formatBytes(int64(b))
}

// writeGPU describes CUDA device ordinal with properties p; memErr is the
// error of reading its free memory, if any.
func writeGPU(w io.Writer, ordinal int, p tuning.Device, free, total int64, memErr error) {
	fmt.Fprintf(w, "cuda:%d: %s\n", ordinal, p.Name)
	fmt.Fprintf(w, "  compute capability %d.%d, %d SMs, warp %d, %d threads per block, %d threads per SM\n",
		p.Major, p.Minor, p.SMs, p.WarpSize, p.MaxThreadsPerBlock, p.MaxThreadsPerSM)
	if total <= 0 {
		total = p.TotalMem
	}
	if memErr != nil {
		fmt.Fprintf(w, "  memory:  %s total, free unknown (%v)\n", formatBytes(total), memErr)
	} else {
		fmt.Fprintf(w, "  memory:  %s total, %s free\n", formatBytes(total), formatBytes(free))
	}
	if p.MemBusWidth > 0 && p.MemClockKHz > 0 {
		// Double data rate: two transfers per clock.
		gbs := 2 * float64(p.MemClockKHz) * 1e3 * float64(p.MemBusWidth) / 8 / 1e9
		fmt.Fprintf(w, "           %d-bit bus at %d MHz, %.0f GB/s peak\n", p.MemBusWidth, p.MemClockKHz/1000, gbs)
	}
	fmt.Fprintf(w, "  shared:  %s per block (%s opt-in), %s per SM\n",
		formatBytes(int64(p.SharedPerBlock)), formatBytes(int64(p.SharedPerBlockOptin)), formatBytes(int64(p.SharedPerSM)))
	fmt.Fprintf(w, "  L2:      %s\n", formatBytes(int64(p.L2Bytes)))
	fmt.Fprintf(w, "  regs:    %d per SM, %d per block\n", p.RegsPerSM, p.RegsPerBlock)
}

// writeRoutes prints the partition plan route.Partition chooses, with
// Auto's rules, on a device of properties p with the kernels' registers
// regs (nil: unknown), for a few representative shapes.
func writeRoutes(w io.Writer, p tuning.Device, regs route.Regs) {
	type shape struct {
		n, g        int
		interleaved bool
	}
	for _, sh := range []shape{{256, 65536, false}, {256, 65536, true}, {1 << 24, 1, false}} {
		for _, elem := range []int{4, 8} {
			pb := route.Problem{N: sh.n, G: sh.g, Elem: elem, ElemStride: 1, BatchStride: sh.n, Auto: true}
			layout := "contiguous"
			if sh.interleaved {
				pb.ElemStride, pb.BatchStride, layout = sh.g, 1, "interleaved"
			}
			prec := "f32"
			if elem == 8 {
				prec = "f64"
			}
			r, err := route.Partition(p, pb, regs, route.Options{})
			if err != nil {
				fmt.Fprintf(w, "           route %s N=%d G=%d %s: %v\n", prec, sh.n, sh.g, layout, err)
				continue
			}
			fmt.Fprintf(w, "           route %s N=%d G=%d %s: %s\n", prec, sh.n, sh.g, layout, r)
		}
	}
}

// formatBytes prints a size with binary units: 512 B, 48 KiB, 1.5 MiB.
func formatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, exp := float64(b), 0
	for v >= unit && exp < 4 {
		v /= unit
		exp++
	}
	u := [...]string{"B", "KiB", "MiB", "GiB", "TiB"}[exp]
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), u)
	}
	return fmt.Sprintf("%.1f %s", v, u)
}
