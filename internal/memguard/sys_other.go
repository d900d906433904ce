//go:build !linux

package memguard

import "math"

// readSystem knows no limits outside Linux.
func readSystem() Budget {
	return Budget{Physical: math.MaxUint64, Cgroup: math.MaxUint64, AddressSpace: math.MaxUint64}
}
