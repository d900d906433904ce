package tridiag

import (
	"fmt"
	"strings"
)

// Algorithm selects how each system is solved.
type Algorithm int

const (
	// Auto lets the device choose, as Options.Pivoting says. On the CPU,
	// with the default PivotAuto, each system is solved by Thomas where a
	// test made in the same sweep proves it backward stable, and by GTSV
	// otherwise; on a GPU it does not pivot (see Pivoting).
	Auto Algorithm = iota
	// Thomas is Gaussian elimination without pivoting (§2.1 of the TPR
	// paper): fastest sequential method, stable for diagonally dominant
	// and symmetric positive definite matrices.
	Thomas
	// GTSV is Gaussian elimination with partial pivoting, LAPACK gtsv
	// semantics: the stable reference.
	GTSV
	// CR is cyclic reduction (package cr).
	CR
	// PCR is parallel cyclic reduction (package pcr). Its backward error
	// grows with N on weakly diagonally dominant matrices (see
	// "Stability" in package pcr).
	PCR
	// WangMou is the Wang & Mou partition method (package wangmou).
	WangMou
	// TPR is tree partitioning reduction with slice size S (package tpr).
	TPR
	// Partition is the partition method with chunks of
	// partition.DefaultChunk(N) rows (package partition): each chunk is
	// eliminated on its own, the chunks' first and last unknowns are
	// found by cyclic reduction on a reduced system, then the chunks'
	// interiors.
	Partition
	// PartitionPivot is the partition method with partial pivoting
	// (package pivotpart), in partitions of pivotpart.DefaultRows(N)
	// rows: each partition's interior unknowns are eliminated with row
	// interchanges, which leaves two rows a partition of a tridiagonal
	// coarse system, solved with partial pivoting; every partition's
	// unknowns then come from its rows and the coarse solution, and the
	// solution is refined once with a residual in about twice the working
	// precision. Its error stays within 10× of GTSV's on the stability
	// suite. It pivots: PivotAlways accepts it, and runs it on a GPU for
	// most shapes.
	PartitionPivot
	// LDLT solves symmetric positive definite systems by the factorization
	// A = L·D·Lᵀ, as LAPACK's ptsv does (pttrf, then pttrs): it reads the
	// diagonal b and the super-diagonal c only, and takes the sub-diagonal
	// to be a[i] = c[i−1] (and, in a cyclic plan, the corner a[0] to be
	// c[N−1]); a is ignored and may be nil. It does not pivot: a pivot
	// that is not positive is reported as ErrNotPositiveDefinite, with the
	// system and row. It reads two coefficients a row where Thomas reads
	// three, and its factors (Plan.Factor) hold two values a row where
	// Thomas's hold three. A cyclic plan splits A = T + u·vᵀ by
	// Sherman–Morrison with γ = −b[0] (see Options.Cyclic); with LDLT
	// that T is A + |γ|·w·wᵀ, w = (1, 0, …, 0, −c[N−1]/b[0]), symmetric
	// positive definite when A is, and T is what it factors: a pivot
	// error names a row of T, which differs from A in its first and last
	// rows.
	LDLT
)

var algorithmNames = [...]string{"auto", "thomas", "gtsv", "cr", "pcr", "wangmou", "tpr", "partition", "partition-pivot", "ldlt"}

// Algorithms lists every concrete algorithm (all but Auto). LDLT, last,
// solves symmetric positive definite systems only (see SPD).
func Algorithms() []Algorithm {
	return []Algorithm{Thomas, GTSV, CR, PCR, WangMou, TPR, Partition, PartitionPivot, LDLT}
}

// SPD reports whether the algorithm solves symmetric positive definite
// systems only, reading b and c and ignoring a: LDLT.
func (a Algorithm) SPD() bool { return a == LDLT }

// factors reports whether the CPU factors systems with the algorithm
// (Plan.Factor): Auto, Thomas, GTSV and LDLT.
func (a Algorithm) factors() bool { return a == Auto || a == Thomas || a == GTSV || a == LDLT }

// Pivots reports whether the algorithm pivots: GTSV and PartitionPivot.
// PivotAlways accepts these and Auto.
func (a Algorithm) Pivots() bool { return a == GTSV || a == PartitionPivot }

func (a Algorithm) String() string {
	if a >= 0 && int(a) < len(algorithmNames) {
		return algorithmNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm reads an algorithm name as printed by String (any case).
func ParseAlgorithm(s string) (Algorithm, error) {
	for i, n := range algorithmNames {
		if strings.EqualFold(s, n) {
			return Algorithm(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown algorithm %q (want one of %s)", ErrOptions, s, strings.Join(algorithmNames[:], ", "))
}

// Pivoting says whether Auto may, must or must not pivot. It governs
// Algorithm = Auto; an algorithm chosen explicitly runs as chosen, and
// PivotAlways with a non-pivoting algorithm (anything but GTSV and
// PartitionPivot, see Algorithm.Pivots) is an options error.
type Pivoting int

const (
	// PivotAuto, the default, chooses per system. On the CPU each system
	// is eliminated by Thomas with a test in the same sweep: every row's
	// fill |a[i]·c[i−1]/u[i−1]| (u the pivots) must stay within twice
	// |b[i]|, which bounds |L|·|U| by 5·|A| entry by entry and so makes
	// the solve componentwise backward stable. Diagonally dominant and
	// symmetric positive definite systems pass it and cost Thomas plus
	// the test (1–2.5% more than PivotNever on a dominant batch); a system that fails it is
	// solved by GTSV from the start, and its result is GTSV's. On a GPU
	// the default does not pivot yet (issue 27 tracks it): Auto runs the
	// device's fast non-pivoting algorithm, a zero pivot is reported as a
	// breakdown of that system (ErrBreakdown in the *BatchError), and on
	// systems that are not diagonally dominant the error can be large
	// without any report (Options.Check catches it); PivotAlways gives
	// the stability of partial pivoting there, at PartitionPivot's speed.
	PivotAuto Pivoting = iota
	// PivotAlways solves every system with partial pivoting: by GTSV
	// (LAPACK gtsv's results) on the CPU; on a GPU by PartitionPivot
	// (within 10× of GTSV's error on the stability suite, package
	// pivotpart, "Accuracy"), except on batches of 2^15 systems or more
	// stored systems first, where GTSV's thread a system is faster, and
	// where its plan cannot be built.
	PivotAlways
	// PivotNever never pivots by choice: on the CPU each system is solved
	// by Thomas, and by GTSV only where Thomas meets a zero pivot; on a
	// GPU Auto runs the device's fast non-pivoting algorithm. For users
	// who know their matrices; a non-dominant system can get a large
	// error without a report.
	PivotNever
)

var pivotingNames = [...]string{"auto", "always", "never"}

func (p Pivoting) String() string {
	if p >= 0 && int(p) < len(pivotingNames) {
		return pivotingNames[p]
	}
	return fmt.Sprintf("Pivoting(%d)", int(p))
}

// ParsePivoting reads a pivoting mode as printed by String (any case):
// auto, always or never.
func ParsePivoting(s string) (Pivoting, error) {
	for i, n := range pivotingNames {
		if strings.EqualFold(s, n) {
			return Pivoting(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown pivoting %q (want one of %s)", ErrOptions, s, strings.Join(pivotingNames[:], ", "))
}

// Options configure a plan. The zero value is valid: Auto, pivoting
// where the system needs it (PivotAuto), checks on.
type Options struct {
	Algorithm Algorithm
	// Pivoting governs Auto: PivotAuto (the default) pivots per system
	// where the system needs it, PivotAlways solves every system with
	// partial pivoting (GTSV on the CPU, mostly PartitionPivot on a GPU),
	// PivotNever does not pivot by choice. With an explicit Algorithm it
	// must not be PivotAlways unless the algorithm pivots (GTSV or
	// PartitionPivot).
	// On a GPU PivotAuto does not pivot yet (see PivotAuto).
	Pivoting Pivoting
	// SliceSize is TPR's slice size S, a power of two ≥ 2; 0 picks the
	// paper's tuned value for N (tpr.DefaultSliceSize). Smaller slices
	// are faster on a GPU, larger ones more accurate.
	SliceSize int
	// SegmentRows is, on a GPU, the rows of a segment of the partition
	// method (Partition, and Auto where it picks Partition): a system
	// longer than SegmentRows is cut into segments of that many rows, one
	// thread block each, and the segments' reduced system is solved
	// between them (partition.SolveSegmented); a system of at most
	// SegmentRows rows is held by one block. 0 lets the device choose:
	// one block per system when that fits and keeps several blocks on
	// every multiprocessor, segments otherwise; batches stored systems
	// first (interleaved) of more than 2048 rows are then copied into
	// contiguous ones in the plan's workspace (see package cuda), which
	// SegmentRows ≥ N avoids where one block holds them. GPUs take 16·t
	// rows, t a multiple of 32 from 64 to 256 (1024, 1536, …, 4096). The
	// CPU device solves every system whole and ignores it.
	SegmentRows int
	// Cyclic makes every system periodic: a[0] couples row 0 to row N−1
	// and c[N−1] couples row N−1 to row 0 (Sherman–Morrison).
	Cyclic bool
	// SkipFiniteCheck skips the NaN/Inf scan of the inputs, for hot loops
	// whose inputs are known to be finite. Breakdowns are still reported.
	SkipFiniteCheck bool
	// Check turns on the accuracy check after every Solve and SolveConst
	// (see Plan.Check): systems whose normwise backward error exceeds Tol
	// or whose estimated condition number κ̂ has κ̂·ε ≥ 1/2 are reported in
	// the *BatchError with their Status, as are the systems that broke
	// down. It costs about as much as a few extra solves, on the CPU, plus
	// a copy of d for in-place solves: off by default, and meant to stay
	// off in hot loops. A GPU plan's solves of device buffers
	// (gpu.TridiagPlan.SolveDevice and friends) are checked alike, on the
	// device for large batches (docs/reliability.md).
	Check bool
	// Tol is the largest normwise backward error the check accepts; 0
	// means DefaultTol (10³·ε of the plan's precision).
	Tol float64
}

// Spec is what a Device needs to build a solver: a validated, normalised
// shape and the options.
type Spec struct {
	Shape
	Options
}
