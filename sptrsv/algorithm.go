package sptrsv

import (
	"errors"
	"fmt"
	"strings"
)

// ErrAlgorithm is wrapped by the errors about an algorithm: an unknown
// name, or one that the device or the precision does not offer.
var ErrAlgorithm = errors.New("sptrsv: algorithm")

// Algorithm names a triangular solve.
type Algorithm int

const (
	// Auto chooses from the level statistics (the device's rule).
	Auto Algorithm = iota
	// Sequential solves one row after another (the reference; CPU only).
	Sequential
	// LevelSet solves level after level (Naumov).
	LevelSet
	// SyncFree is the synchronization-free method of Liu et al.: the
	// triangle by columns, in-degree counters, atomic partial sums.
	SyncFree
	// SyncFreeCSR is synchronization-free on the rows: each row waits for
	// the ready flags of the rows it depends on (Dufrechou and Ezzatti,
	// 2018; Su et al., CapelliniSpTRSV, 2020), no analysis beyond the
	// checks.
	SyncFreeCSR
	// LocalityAware is the locality-aware solve of Picciau et al.: sub-graphs
	// of at most DefaultCapacity rows, one block each with x in shared
	// memory, every edge in a time slot (AnalyzeLocality).
	LocalityAware
)

var algorithmNames = [...]string{Auto: "auto", Sequential: "sequential", LevelSet: "levelset", SyncFree: "syncfree", SyncFreeCSR: "syncfree-csr", LocalityAware: "locality"}

// String returns the algorithm's name as ParseAlgorithm reads it.
func (a Algorithm) String() string {
	if a >= 0 && int(a) < len(algorithmNames) {
		return algorithmNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm returns the algorithm named s (any case).
func ParseAlgorithm(s string) (Algorithm, error) {
	for a, name := range algorithmNames {
		if strings.EqualFold(s, name) {
			return Algorithm(a), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown algorithm %q (want %s)", ErrAlgorithm, s, strings.Join(algorithmNames[:], ", "))
}
