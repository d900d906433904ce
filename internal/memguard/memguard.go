// Package memguard tells how much memory the process can still have and
// refuses, with an error instead of a Go "fatal error: out of memory",
// allocations whose size comes from user input (a file header, a shape,
// a command-line flag) and cannot fit.
//
// The budget is the smallest of what each limit leaves:
//
//   - physical memory: MemAvailable of /proc/meminfo (MemTotal when the
//     kernel is too old to report it);
//   - the memory cgroup of the process, v2 (memory.max − memory.current)
//     or v1 (memory.limit_in_bytes − memory.usage_in_bytes), less the
//     reclaimable page cache, at every level up to the root;
//   - RLIMIT_AS less the address space in use (VmSize);
//   - a cap set with SetLimit or the environment variable
//     BANDSOLVE_MEMORY_LIMIT (bytes, or with a suffix such as 512MiB, 2G).
//
// Check keeps an eighth of the budget as headroom for everything else the
// process allocates. Requests under 32 MiB pass without reading /proc, so
// the check costs nothing on small problems. Where a limit cannot be read
// (another operating system, no /proc) it does not count.
package memguard

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrTooLarge is wrapped by every error of Check: the memory asked for
// does not fit what the process can have.
var ErrTooLarge = errors.New("not enough memory")

// Error is the refusal of one allocation. It wraps ErrTooLarge.
type Error struct {
	What      string // what the memory is for, e.g. "the CSR arrays of a 10×10 matrix"
	Need      uint64 // bytes asked for (math.MaxUint64: beyond any address space)
	Available uint64 // bytes the process can have, headroom removed
	Bound     string // the limit that sets Available
}

// Error says what needed how much, and what is available under which limit.
func (e *Error) Error() string {
	return fmt.Sprintf("%s needs %s, more than the %s this process can have (%s)",
		e.What, FormatBytes(e.Need), FormatBytes(e.Available), e.Bound)
}

// Unwrap returns ErrTooLarge.
func (e *Error) Unwrap() error { return ErrTooLarge }

// Budget is what the limits leave the process, in bytes; a limit that is
// absent or unreadable is math.MaxUint64.
type Budget struct {
	Physical     uint64 // MemAvailable (or MemTotal) of /proc/meminfo
	Cgroup       uint64 // the smallest limit − usage of the process's memory cgroups
	AddressSpace uint64 // RLIMIT_AS − VmSize
	Cap          uint64 // SetLimit or BANDSOLVE_MEMORY_LIMIT
}

// Available returns the smallest of the budget's limits and its name.
func (b Budget) Available() (bytes uint64, bound string) {
	bytes, bound = math.MaxUint64, "no limit known"
	for _, l := range []struct {
		v    uint64
		name string
	}{
		{b.Physical, "available physical memory"},
		{b.Cgroup, "cgroup memory limit"},
		{b.AddressSpace, "address-space limit RLIMIT_AS"},
		{b.Cap, "memory cap of BANDSOLVE_MEMORY_LIMIT or memguard.SetLimit"},
	} {
		if l.v < bytes {
			bytes, bound = l.v, l.name
		}
	}
	return bytes, bound
}

// smallBytes is the size below which Check does not read the limits.
const smallBytes = 32 << 20

var (
	capMu  sync.Mutex
	capSet bool   // SetLimit was called
	capVal uint64 // its value (math.MaxUint64: none)
)

// envCap reads BANDSOLVE_MEMORY_LIMIT once.
var envCap = sync.OnceValues(func() (uint64, error) {
	s, ok := os.LookupEnv("BANDSOLVE_MEMORY_LIMIT")
	if !ok || strings.TrimSpace(s) == "" {
		return math.MaxUint64, nil
	}
	v, err := ParseBytes(s)
	if err != nil {
		return math.MaxUint64, fmt.Errorf("BANDSOLVE_MEMORY_LIMIT=%q: %w", s, err)
	}
	return v, nil
})

// SetLimit caps the memory Check lets the process ask for at bytes (on
// top of the system's limits; math.MaxUint64 removes the cap) and returns
// the previous cap. It overrides BANDSOLVE_MEMORY_LIMIT. Tests and
// fuzzers use it to keep declared sizes from taking the machine.
func SetLimit(bytes uint64) (previous uint64) {
	capMu.Lock()
	defer capMu.Unlock()
	previous = currentCapLocked()
	capSet, capVal = true, bytes
	return previous
}

func currentCapLocked() uint64 {
	if capSet {
		return capVal
	}
	v, _ := envCap()
	return v
}

// currentCap returns the cap, and the error of a malformed
// BANDSOLVE_MEMORY_LIMIT that SetLimit has not overridden.
func currentCap() (uint64, error) {
	capMu.Lock()
	defer capMu.Unlock()
	if capSet {
		return capVal, nil
	}
	return envCap()
}

// Current reads the limits now.
func Current() Budget {
	b := readSystem()
	b.Cap, _ = currentCap()
	return b
}

// Check returns nil when bytes fit in seven eighths of what the process
// can have now, else an *Error (wrapping ErrTooLarge) that names what,
// the size asked for, the size available and the limit that sets it.
// what says what the memory is for, e.g. "a 1000000000×1000000000 CSR
// matrix (the row pointers)".
func Check(what string, bytes uint64) error {
	c, err := currentCap()
	if err != nil {
		return err
	}
	if bytes < smallBytes && bytes <= usable(c) {
		return nil
	}
	b := readSystem()
	b.Cap = c
	avail, bound := b.Available()
	if u := usable(avail); bytes > u {
		return &Error{What: what, Need: bytes, Available: u, Bound: bound}
	}
	return nil
}

// usable is the budget less the headroom of an eighth.
func usable(avail uint64) uint64 {
	if avail == math.MaxUint64 {
		return avail
	}
	return avail - avail/8
}

// Bytes returns size·counts[0]·counts[1]·…, saturating at math.MaxUint64
// (a negative count also gives math.MaxUint64: no such array exists), so
// that a size computed from user input cannot wrap around.
func Bytes(size int, counts ...int) uint64 {
	if size < 0 {
		return math.MaxUint64
	}
	p := uint64(size)
	for _, c := range counts {
		if c < 0 {
			return math.MaxUint64
		}
		hi, lo := bits.Mul64(p, uint64(c))
		if hi != 0 {
			return math.MaxUint64
		}
		p = lo
	}
	return p
}

// Add returns the sum of sizes, saturating at math.MaxUint64.
func Add(sizes ...uint64) uint64 {
	var s uint64
	for _, v := range sizes {
		var carry uint64
		s, carry = bits.Add64(s, v, 0)
		if carry != 0 {
			return math.MaxUint64
		}
	}
	return s
}

// FormatBytes prints a size with three significant digits and a binary
// unit ("72.8 TiB"); math.MaxUint64 prints as "more than 16 EiB".
func FormatBytes(n uint64) string {
	if n == math.MaxUint64 {
		return "more than 16 EiB"
	}
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n)
	u := -1
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.3g %s", v, units[u])
}

// ParseBytes reads a size: a number of bytes, optionally with a suffix
// k, M, G, T (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024), or
// KB, MB, GB, TB (powers of 1000); case-insensitive, a trailing "B" and
// spaces allowed.
func ParseBytes(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}, {"b", 1},
	} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f >= 0) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("bad size %q: want a number of bytes ≥ 0, optionally with a unit such as MiB or G", s)
	}
	v := f * float64(mult)
	if v >= math.MaxUint64 {
		return math.MaxUint64, nil
	}
	return uint64(v), nil
}
