package memguard

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// readSystem reads the limits of /proc/meminfo, the memory cgroups and
// RLIMIT_AS.
func readSystem() Budget {
	b := Budget{Physical: physical(), Cgroup: cgroup(), AddressSpace: addressSpace()}
	return b
}

// physical is MemAvailable, or MemTotal when the kernel has no
// MemAvailable.
func physical() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return math.MaxUint64
	}
	total, avail := uint64(math.MaxUint64), uint64(math.MaxUint64)
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "MemTotal:"):
			total = kB(line)
		case strings.HasPrefix(line, "MemAvailable:"):
			avail = kB(line)
		}
	}
	return min(total, avail)
}

// kB reads the value of a "Name:   1234 kB" line in bytes.
func kB(line string) uint64 {
	f := strings.Fields(line)
	if len(f) < 2 {
		return math.MaxUint64
	}
	v, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return math.MaxUint64
	}
	if len(f) >= 3 && strings.EqualFold(f[2], "kB") {
		v *= 1024
	}
	return v
}

// addressSpace is RLIMIT_AS less the address space in use.
func addressSpace() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur == math.MaxUint64 || rl.Cur >= 1<<62 {
		return math.MaxUint64
	}
	used := vmSize()
	if used >= rl.Cur {
		return 0
	}
	return rl.Cur - used
}

// vmSize is the address space the process uses (VmSize), 0 if unknown.
func vmSize() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmSize:") {
			if v := kB(line); v != math.MaxUint64 {
				return v
			}
		}
	}
	return 0
}

// noLimit is the smallest value a cgroup reports for "no limit" (v1
// writes PAGE_COUNTER_MAX pages, about 2^63).
const noLimit = 1 << 62

// cgroup is the smallest limit − (usage − reclaimable cache) over the
// process's memory cgroups and their ancestors.
func cgroup() uint64 {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return math.MaxUint64
	}
	best := uint64(math.MaxUint64)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			best = min(best, walk("/sys/fs/cgroup", parts[2], "memory.max", "memory.current", "inactive_file"))
		case hasController(parts[1], "memory"):
			best = min(best, walk("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"))
		}
	}
	return best
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// walk returns the smallest room left in the cgroup at root/p and its
// ancestors. When root/p does not exist (a cgroup namespace shows the
// process's own cgroup as "/"), only root itself is read.
func walk(root, p, limitFile, usageFile, cacheKey string) uint64 {
	best := uint64(math.MaxUint64)
	p = path.Clean("/" + p)
	if _, err := os.Stat(root + p); err != nil {
		p = "/"
	}
	for {
		best = min(best, room(root+p, limitFile, usageFile, cacheKey))
		if p == "/" {
			return best
		}
		p = path.Dir(p)
	}
}

// room is limit − (usage − reclaimable cache) of one cgroup directory.
func room(dir, limitFile, usageFile, cacheKey string) uint64 {
	limit, ok := readUint(dir + "/" + limitFile)
	if !ok || limit >= noLimit {
		return math.MaxUint64
	}
	usage, ok := readUint(dir + "/" + usageFile)
	if !ok {
		return limit
	}
	if data, err := os.ReadFile(dir + "/memory.stat"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == cacheKey {
				if c, err := strconv.ParseUint(f[1], 10, 64); err == nil && c <= usage {
					usage -= c
				}
			}
		}
	}
	if usage >= limit {
		return 0
	}
	return limit - usage
}

// readUint reads a file holding one number ("max" reads as no limit).
func readUint(name string) (uint64, bool) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return math.MaxUint64, true
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
