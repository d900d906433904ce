package route

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tuning"
)

// Problem describes a batch of tridiagonal systems as the dispatch
// functions see it: the shape, the element size and the options that
// steer the choice.
type Problem struct {
	N, G        int // rows of a system, systems
	Elem        int // bytes of an element: 4 (FP32) or 8 (FP64)
	ElemStride  int // distance between consecutive rows of a system
	BatchStride int // distance between the first rows of consecutive systems
	// SegmentRows asks for segments of that many rows (0: the choice's).
	SegmentRows int
	// Auto applies Auto's rules beyond the partition plan: short chunks
	// for latency-bound batches (tuning.LatencyChunk).
	Auto bool
}

// sysFirst reports whether the systems are closer together in memory
// than the rows of one system.
func (p Problem) sysFirst() bool { return p.BatchStride < p.ElemStride }

// adjacent reports whether the systems are adjacent in memory (batch
// stride 1, rows apart: the interleaved layout).
func (p Problem) adjacent() bool { return p.BatchStride == 1 && p.ElemStride > 1 }

// f64 reports whether the elements are FP64.
func (p Problem) f64() bool { return p.Elem == 8 }

// contiguous is p with its systems stored one after another.
func (p Problem) contiguous() Problem {
	p.ElemStride, p.BatchStride = 1, p.N
	return p
}

// Regs gives a kernel's registers per thread: 0 where unknown (the
// choices then assume the most the kernel's launch bounds allow), a
// negative value where the device cannot load the kernel. A device
// supplies it from the driver; tests supply a recorded table. A nil Regs
// knows nothing.
type Regs func(kernels.Kernel) int

// of is r's answer for k (0 for a nil r).
func (r Regs) of(k kernels.Kernel) int {
	if r == nil {
		return 0
	}
	return r(k)
}

// PlanKind is the kind of plan a Route runs.
type PlanKind int

// The plans of the partition family.
const (
	// PlanShared: partition_p<P>, a block's systems in shared memory.
	PlanShared PlanKind = iota + 1
	// PlanLanes: partition_lanes_p16, adjacent systems across the lanes.
	PlanLanes
	// PlanLanesStream: partition_lanes_stream_p16_s8, the lanes kernel as
	// a persistent grid (general solves; Constant runs the constant ones).
	PlanLanesStream
	// PlanStream: partition_stream_p16, one system a block in a
	// persistent grid (general solves; Constant runs the constant ones).
	PlanStream
	// PlanSegments: segment_p16 or segc<Q>_p16, systems cut into
	// segments of one block each.
	PlanSegments
	// PlanLanesSegments: lseg_p16, segments with adjacent systems across
	// the lanes.
	PlanLanesSegments
	// PlanGather: layout_gather/layout_scatter around Inner, the plan of
	// the same systems stored contiguously.
	PlanGather
)

var planNames = map[PlanKind]string{PlanShared: "shared", PlanLanes: "lanes", PlanLanesStream: "lanes-stream",
	PlanStream: "stream", PlanSegments: "segments", PlanLanesSegments: "lanes-segments", PlanGather: "gather"}

// String names the plan kind.
func (k PlanKind) String() string {
	if s, ok := planNames[k]; ok {
		return s
	}
	return fmt.Sprintf("PlanKind(%d)", int(k))
}

// Route is a dispatch function's choice for a Problem: the plan, its
// kernels and launches, and the plans it contains. It is plain data; a
// GPU build turns it into launches without choices of its own.
type Route struct {
	// Variant is the row of the family's table that chose the route.
	Variant string
	Plan    PlanKind
	// Kernel runs the general solves (for PlanGather: the gather kernel;
	// for PlanSegments with clusters: the cluster kernel).
	Kernel kernels.Kernel
	// Chunk is P, the rows a thread takes (16 but for PlanShared).
	Chunk int
	// Latency: Auto's short chunks for a latency-bound batch.
	Latency bool

	// Partition is the launch of PlanShared and PlanLanes.
	Partition *tuning.PartitionLaunch
	// ConstKernel and ConstPartition: the constant-coefficient kernel
	// (partition_const_p16) of a PlanShared route of chunks of 16.
	ConstKernel    kernels.Kernel
	ConstPartition *tuning.PartitionLaunch
	// ConstStreamKernel and ConstStream: the constant streaming kernel,
	// which then runs the constant solves of a PlanShared or PlanLanes
	// route instead.
	ConstStreamKernel kernels.Kernel
	ConstStream       *tuning.ConstStreamLaunch
	Stream            *tuning.StreamLaunch      // PlanStream
	LanesStream       *tuning.LanesStreamLaunch // PlanLanesStream
	Segment           *tuning.SegmentLaunch     // PlanSegments
	LanesSegment      *tuning.LanesSegmentLaunch
	// GatherGrid is the blocks of the layout kernels (PlanGather), and
	// ScatterKernel the kernel that writes x back.
	GatherGrid    int
	ScatterKernel kernels.Kernel
	// ConstOnly: a PlanGather route that runs constant solves only (no
	// copies of a, b, c).
	ConstOnly bool

	// Constant, where set, is the route of the constant solves.
	Constant *Route
	// Nested is the route of the reduced systems of a three-pass
	// segmented plan (G contiguous systems of 2Q rows).
	Nested *Route
	// Inner is the route of the gathered, contiguous systems.
	Inner *Route
}

// String is a one-line account of the route and the routes it contains.
func (r Route) String() string {
	var b strings.Builder
	r.write(&b)
	return b.String()
}

func (r Route) write(b *strings.Builder) {
	fmt.Fprintf(b, "%s[%s %s", r.Variant, r.Plan, r.Kernel)
	switch {
	case r.Partition != nil:
		fmt.Fprintf(b, " %d×%d sh=%d spb=%d", r.Partition.Blocks(max(r.Partition.G, 1)), r.Partition.Threads, r.Partition.SharedBytes, r.Partition.SystemsPerBlock)
	case r.Stream != nil:
		fmt.Fprintf(b, " %d×%d sh=%d", r.Stream.Grid, r.Stream.Threads, r.Stream.SharedBytes)
	case r.LanesStream != nil:
		fmt.Fprintf(b, " %d×%d sh=%d", r.LanesStream.Grid, r.LanesStream.Threads, r.LanesStream.SharedBytes)
	case r.Segment != nil:
		fmt.Fprintf(b, " M=%d Q=%d one-pass=%v cluster=%v", r.Segment.Rows, r.Segment.Segments, r.Segment.OnePass, r.Segment.Cluster)
	case r.LanesSegment != nil:
		fmt.Fprintf(b, " M=%d Q=%d S=%d one-pass=%v", r.LanesSegment.Rows, r.LanesSegment.Segments, r.LanesSegment.Systems, r.LanesSegment.OnePass)
	case r.Plan == PlanGather:
		fmt.Fprintf(b, " grid=%d const-only=%v", r.GatherGrid, r.ConstOnly)
	}
	if r.Latency {
		b.WriteString(" latency")
	}
	if c := r.ConstPartition; c != nil {
		fmt.Fprintf(b, " const=%s spb=%d", r.ConstKernel, c.SystemsPerBlock)
	}
	if c := r.ConstStream; c != nil {
		fmt.Fprintf(b, " cstream=%s %d×%d spb=%d", r.ConstStreamKernel, c.Grid, c.Threads, c.SystemsPerBlock)
	}
	for _, sub := range []struct {
		name string
		r    *Route
	}{{"constant", r.Constant}, {"nested", r.Nested}, {"inner", r.Inner}} {
		if sub.r != nil {
			fmt.Fprintf(b, " %s:", sub.name)
			sub.r.write(b)
		}
	}
	b.WriteString("]")
}

// ErrOptions reports a choice the options force that no kernel runs: a
// chunk size without a kernel, a segment size the kernels do not take.
var ErrOptions = errors.New("tuning: no kernel for the forced choice")

// errLayout reports a layout a kernel does not read.
var errLayout = errors.New("tuning: layout not taken by the kernel")

// maxThreads is the launch bound (.maxntid) of the kernel k of a family
// lookup, 0 where the family has no such kernel.
func maxThreads[F interface{ Kernel() kernels.Kernel }](f F, err error) int {
	if err != nil {
		return 0
	}
	return f.Kernel().Info().MaxThreads
}
