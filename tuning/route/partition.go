package route

import (
	"errors"
	"fmt"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

// The partition family: the plans a tridiagonal batch of tridiag.Partition
// (and of Auto, which tries it first) runs on a GPU. Partition walks
// partitionVariants in rank order; the first variant that accepts the
// problem and builds a route wins. Each variant names its kernels (the
// template values and launch bounds come from the kernel table), the
// launch function that sizes its blocks and shared memory, and its rule.

// Options switch variants of the partition family off, or force
// one, for tests and benchmarks that compare a variant with the plan it
// replaces. The zero value is the default choice.
type Options struct {
	NoClusters       bool // segments without the cluster kernels
	NoLatencyChunks  bool // Auto keeps chunks of 16 for small batches
	NoConstStream    bool // no constant streaming kernel for constant solves
	NoLanesKernel    bool // adjacent systems without the lanes kernel
	NoConstKernel    bool // constant solves in the general kernel
	NoStreamKernel   bool // no streaming partition kernel
	NoLanesSegments  bool // long adjacent systems gathered, not lanes segments
	NoLanesStream    bool // no streamed lanes kernel
	ForceLanesStream bool // the streamed lanes kernel wherever it takes the batch
	NoTranspose      bool // systems first in memory never gathered

	// Force builds that plan alone instead of dispatching: PlanShared
	// with chunks of Chunk rows, PlanLanes with Systems systems a block
	// (0: the choice's, and then its constant streaming kernel),
	// PlanSegments and PlanLanesSegments with Problem.SegmentRows (0: the
	// choice's; the lanes segments with Systems systems a block where
	// set, in three passes where ThreePass), PlanGather, PlanStream and
	// PlanLanesStream (without a route for their constant solves, which
	// the caller supplies). With Force 0, Chunk > 0 builds one block a
	// system with chunks of Chunk rows (the lanes kernel where it takes
	// the batch).
	Force     PlanKind
	Chunk     int
	Systems   int
	ThreePass bool
	// ConstStream forces the constant streaming kernel, with
	// ConstStreamSystems systems a block (0: the choice's), on a forced
	// PlanShared route (an error where the kernel does not take the
	// batch).
	ConstStream        bool
	ConstStreamSystems int
}

// unforced is o without the fields that force a plan: the switches alone.
func (o Options) unforced() Options {
	o.Force, o.Chunk, o.Systems, o.ThreePass, o.ConstStream, o.ConstStreamSystems = 0, 0, 0, false, false, 0
	return o
}

// partitionVariant is a row of the partition family's table.
type partitionVariant struct {
	name string
	// kernels names the kernels of the variant's plans.
	kernels string
	// accepts reports whether the variant applies to the problem.
	accepts func(c *partitionCtx) bool
	// route builds the variant's route; ok false passes the problem on to
	// the next variant.
	route func(c *partitionCtx) (r Route, ok bool, err error)
}

// partitionCtx is a problem on its way through the table.
type partitionCtx struct {
	d    tuning.Device
	p    Problem
	regs Regs
	o    Options
	// lanesSegments: the lanes segment kernel may take the problem (off
	// for the plan of constant solves of a lanes segment route).
	lanesSegments bool
}

// partitionVariants is the partition family's table, in rank order (set
// by init: its routes dispatch nested problems through it).
var partitionVariants []partitionVariant

func init() { partitionVariants = partitionTable() }

// partitionTable returns the rows of partitionVariants.
func partitionTable() []partitionVariant {
	return []partitionVariant{
		{
			name:    "forced-segments",
			kernels: "lseg_p16, segment_p16, segc<Q>_p16 (Options.SegmentRows), or one block a system for N ≤ SegmentRows",
			accepts: func(c *partitionCtx) bool { return c.p.SegmentRows > 0 },
			route:   forcedSegmentsRoute,
		},
		{
			// Short chunks where a small batch is latency-bound: chunks of 4
			// or 8 shorten a block's critical path (bandsolve bench -device
			// cuda with go test -tags cuda -run '^$' -bench ChunkLatency
			// ./internal/gpu/tridiaggpu; rules in tuning.LatencyChunk).
			name:    "latency",
			kernels: "partition_p4, partition_p8 (constant solves: partition_const_p16 where tuning.LatencyConstChunk16)",
			accepts: func(c *partitionCtx) bool {
				return c.p.Auto && !c.o.NoLatencyChunks && c.p.SegmentRows == 0 && latencyChunk(c) != 0
			},
			route: latencyRoute,
		},
		{
			// Long adjacent systems: segments across the lanes, read in place
			// (rule: tuning.LanesSegmentMinN).
			name:    "lanes-segments",
			kernels: "lseg_p16 (constant solves: the plan without it)",
			accepts: func(c *partitionCtx) bool {
				return c.lanesSegments && !c.o.NoLanesSegments && c.p.adjacent() && c.p.N >= tuning.LanesSegmentMinN
			},
			route: lanesSegmentsRoute,
		},
		{
			// Long systems stored systems first: gathered into contiguous
			// ones (rule: tuning.GatherMinN).
			name:    "gather",
			kernels: "layout_gather, the contiguous plan, layout_scatter",
			accepts: func(c *partitionCtx) bool { return c.p.sysFirst() && !c.o.NoTranspose && c.p.N >= tuning.GatherMinN },
			route:   func(c *partitionCtx) (Route, bool, error) { r, err := gatherRoute(c); return r, true, err },
		},
		{
			// One block a system (shared memory or lanes), the streaming
			// kernel where tuning.PreferStream takes the batch, segments where one
			// block a system leaves fewer than two blocks an SM, gathered
			// where a block does not hold a system stored systems first.
			name:    "whole",
			kernels: "partition_lanes_p16, partition_lanes_stream_p16_s8, partition_p16 with partition_const_p16 or partition_cstream*, partition_stream_p16, segment_p16",
			accepts: func(*partitionCtx) bool { return true },
			route:   func(c *partitionCtx) (Route, bool, error) { r, err := wholeRoute(c); return r, true, err },
		},
	}
}

// Partition chooses the plan of the partition family for problem p
// on device d, with the kernels' registers regs: the first variant of the
// family's table that accepts p. Errors wrap ErrOptions for a forced
// choice no kernel runs, and otherwise say why no kernel takes the batch
// (mostly tuning.ErrTooLargeForShared).
func Partition(d tuning.Device, p Problem, regs Regs, o Options) (Route, error) {
	c := &partitionCtx{d: d, p: p, regs: regs, o: o, lanesSegments: true}
	if p.N < 1 || p.G < 1 || (p.Elem != 4 && p.Elem != 8) {
		return Route{}, fmt.Errorf("tuning: partition route for N=%d G=%d, element size %d", p.N, p.G, p.Elem)
	}
	if o.Force != 0 || o.Chunk > 0 {
		return forcedRoute(c)
	}
	return c.dispatch(partitionVariants)
}

// dispatch runs the variants vs in order.
func (c *partitionCtx) dispatch(vs []partitionVariant) (Route, error) {
	for _, v := range vs {
		if !v.accepts(c) {
			continue
		}
		r, ok, err := v.route(c)
		if err != nil {
			return Route{}, err
		}
		if ok {
			if r.Variant == "" {
				r.Variant = v.name
			}
			return r, nil
		}
	}
	return Route{}, fmt.Errorf("tuning: no partition plan for N=%d G=%d", c.p.N, c.p.G)
}

// tree is the dispatch past Auto's rules (the plan of the same batch that
// tridiag.Partition builds), with the lanes segments or without them.
func (c *partitionCtx) tree(p Problem, lanesSegments bool) (Route, error) {
	sub := &partitionCtx{d: c.d, p: p, regs: c.regs, o: c.o.unforced(), lanesSegments: lanesSegments}
	sub.p.Auto = false
	return sub.dispatch(partitionVariants)
}

// nested is the route of the reduced systems of a three-pass segmented
// plan: G contiguous systems of 2q rows, Auto's rules applied (a single
// system of 2^18 rows in segments of 1024 leaves one reduced system of
// 512 rows, latency-bound).
func (c *partitionCtx) nested(q int) (*Route, error) {
	p := Problem{N: 2 * q, G: c.p.G, Elem: c.p.Elem, ElemStride: 1, BatchStride: 2 * q, Auto: true}
	sub := &partitionCtx{d: c.d, p: p, regs: c.regs, o: c.o.unforced(), lanesSegments: true}
	r, err := sub.dispatch(partitionVariants)
	if err != nil {
		return nil, fmt.Errorf("tuning: the reduced systems of %d segments: %w", q, err)
	}
	return &r, nil
}

// forcedRoute builds the plan o.Force names.
func forcedRoute(c *partitionCtx) (Route, error) {
	var r Route
	var err error
	switch c.o.Force {
	case 0:
		r, err = chunkRoute(c, c.o.Chunk)
	case PlanShared:
		r, err = sharedRoute(c, c.o.Chunk)
		if err == nil && c.o.ConstStream {
			cs, k, cerr := constStreamLaunch(c, c.o.ConstStreamSystems)
			if cerr != nil {
				return Route{}, cerr
			}
			r.ConstStream, r.ConstStreamKernel = &cs, k
		}
	case PlanLanes:
		r, err = lanesRoute(c, c.o.Systems)
	case PlanLanesStream:
		r, err = lanesStreamRoute(c, Route{})
		r.Constant = nil // the caller's
	case PlanStream:
		r, err = streamRoute(c, Route{})
		r.Constant = nil // the caller's
	case PlanSegments:
		r, err = segmentsRoute(c, c.p.SegmentRows)
	case PlanLanesSegments:
		r, err = lanesSegmentRoute(c, c.p.SegmentRows)
	case PlanGather:
		r, err = gatherRoute(c)
	default:
		return Route{}, fmt.Errorf("%w: plan %s", ErrOptions, c.o.Force)
	}
	if err != nil {
		return Route{}, err
	}
	r.Variant = "forced"
	return r, nil
}

// forcedSegmentsRoute is the plan of Options.SegmentRows = m > 0: one
// block a system for N ≤ m, else the lanes segment kernel for adjacent
// systems where it runs segments of m rows, else the segment kernel.
func forcedSegmentsRoute(c *partitionCtx) (Route, bool, error) {
	m := c.p.SegmentRows
	if c.p.N <= m {
		r, err := chunkRoute(c, partition.DefaultChunk(c.p.N))
		return r, true, err
	}
	if c.lanesSegments && !c.o.NoLanesSegments && c.p.adjacent() && tuning.LanesSegmentRowsOK(m, c.p.Elem) {
		r, err := lanesSegmentRoute(c, m)
		return r, true, err
	}
	if !tuning.SegmentRowsOK(m) {
		return Route{}, true, fmt.Errorf("%w: segments of %d rows: a GPU takes 16·t rows, t a multiple of 32 in %v", ErrOptions, m, tuning.SegmentThreads)
	}
	r, err := segmentsRoute(c, m)
	return r, true, err
}

// latencyChunk is tuning.LatencyChunk for c's problem.
func latencyChunk(c *partitionCtx) int {
	p := c.p
	return tuning.LatencyChunk(c.d, p.N, p.Elem, p.G, p.sysFirst(), p.BatchStride == 1)
}

// latencyRoute is the plan of short chunks: the shared-memory kernel with
// chunks of tuning.LatencyChunk, its constant solves in the kernels of chunks of
// 16 where tuning.LatencyConstChunk16 says so (and that plan has them). A batch
// the kernel does not take goes on to the next variant.
func latencyRoute(c *partitionCtx) (Route, bool, error) {
	r, err := sharedRoute(c, latencyChunk(c))
	if err != nil {
		return Route{}, false, nil
	}
	r.Latency = true
	if tuning.LatencyConstChunk16(c.d, c.p.N, c.p.G) {
		if r16, err := sharedRoute(c, 16); err == nil && (r16.ConstPartition != nil || r16.ConstStream != nil) {
			r16.Variant = "latency-constant"
			r.Constant = &r16
		}
	}
	return r, true, nil
}

// lanesSegmentsRoute is the lanes segment plan of the general solves, its
// constant solves (which move two arrays, not five) in the plan without
// it (BenchmarkLanesSegments: one block a system or gathered). Where no
// segment size suits N the next variant takes the batch.
func lanesSegmentsRoute(c *partitionCtx) (Route, bool, error) {
	r, err := lanesSegmentRoute(c, 0)
	if err != nil {
		return Route{}, false, nil
	}
	cr, err := c.tree(c.p, false)
	if err != nil {
		return Route{}, true, err
	}
	if cr.Plan == PlanGather {
		cr.ConstOnly = true // no room for copies of a, b, c
	}
	r.Constant = &cr
	return r, true, nil
}

// wholeRoute is the "whole" variant: the plan of one block a system with
// the default chunk, cut into segments where wantSegments says so,
// gathered where it does not fit a block and the systems are stored
// systems first, and the streaming kernel in its place where tuning.PreferStream
// takes the batch.
func wholeRoute(c *partitionCtx) (Route, error) {
	p := c.p
	whole, err := chunkRoute(c, partition.DefaultChunk(p.N))
	r := whole
	switch {
	case wantSegments(p, whole, err):
		if r, err = segmentsOrWhole(c, whole, err); err != nil {
			return Route{}, err
		}
		r.Variant = "segments"
		if r.Plan != PlanSegments {
			r.Variant = "whole"
		}
	case err != nil:
		if p.sysFirst() && !c.o.NoTranspose && !errors.Is(err, ErrOptions) {
			// Too long for one block on this device.
			r, err := gatherRoute(c)
			r.Variant = "gather-fallback"
			return r, err
		}
		return Route{}, err
	}
	// The streaming kernel, where tuning.PreferStream says so, solves the
	// general systems (one block a system, the next one loading while it
	// computes) and r the constant ones.
	if err == nil && whole.Plan == PlanShared && whole.Chunk == 16 && !c.o.NoStreamKernel && !p.sysFirst() {
		if s, serr := streamRoute(c, r); serr == nil && tuning.PreferStream(c.d, *whole.Partition, *s.Stream, p.G) {
			s.Variant = "stream"
			return s, nil
		}
	}
	return r, nil
}

// wantSegments decides, for SegmentRows = 0, whether a partition plan
// cuts its systems into segments: only when the rows of a system are
// closer together in memory than the systems (a segment's loads are then
// coalesced), and then when one block per system does not fit (err) or
// leaves fewer than two blocks on an SM.
//
// H100, FP64 N = 4096: 67% of the limit in segments against 62% one block
// an SM (go test -tags cuda -run '^$' -bench Stream ./internal/gpu/tridiaggpu).
func wantSegments(p Problem, whole Route, err error) bool {
	if p.sysFirst() || p.N < 2 {
		return false
	}
	if err != nil {
		return true
	}
	return whole.Partition != nil && whole.Partition.BlocksPerSM < 2
}

// segmentsOrWhole is the plan for systems that wantSegments sends to
// segments: the segment plan, or whole (with its error err) when no
// segment size suits N. Constant solves hold less per system: where the
// constant streaming kernel takes the batch, or the constant kernel keeps
// two blocks on an SM, they stay one block a system.
//
// H100, FP64 N = 4096, constant solves: 28% of the limit in segments (go
// test -tags cuda -run '^$' -bench Stream ./internal/gpu/tridiaggpu).
func segmentsOrWhole(c *partitionCtx, whole Route, err error) (Route, error) {
	seg, serr := segmentsRoute(c, 0)
	if serr != nil {
		if err == nil {
			return whole, nil // no segment size suits N: one block per system
		}
		return Route{}, fmt.Errorf("%w; segments: %w", err, serr)
	}
	if err == nil && whole.Partition != nil && (whole.ConstStream != nil || whole.ConstPartition != nil && whole.ConstPartition.BlocksPerSM >= 2) {
		w := whole
		w.Variant = "whole-constant"
		seg.Constant = &w
	}
	return seg, nil
}

// chunkRoute is one block a system with chunks of p rows: the lanes
// kernel for adjacent systems it holds (p = 16), the streamed lanes
// kernel in its place where tuning.PreferLanesStream takes the batch, else the
// shared-memory kernel.
func chunkRoute(c *partitionCtx, p int) (Route, error) {
	pb := c.p
	if p == 16 && !c.o.NoLanesKernel && pb.adjacent() && pb.N <= tuning.PartitionLanesMaxN(pb.Elem) {
		lanes, err := lanesRoute(c, 0)
		if err != nil || c.o.NoLanesStream {
			return lanes, err
		}
		if s, serr := lanesStreamRoute(c, lanes); serr == nil && (tuning.PreferLanesStream(*s.LanesStream) || c.o.ForceLanesStream && pb.G >= 16*s.LanesStream.Grid) {
			return s, nil
		}
		return lanes, nil
	}
	return sharedRoute(c, p)
}

// sharedRoute is the plan of partition_p<p>: the block's systems in
// shared memory (tuning.PartitionLaunchChunk), with chunks of 16 the constant
// kernel partition_const_p16 (tuning.PartitionLaunchConst) for constant solves,
// or the constant streaming kernel where tuning.PreferConstStream takes the
// batch.
func sharedRoute(c *partitionCtx, p int) (Route, error) {
	pb := c.p
	if !tuning.PartitionKernelBuilt(p, pb.Elem) {
		return Route{}, fmt.Errorf("%w: no partition kernel for chunks of %d %d-byte rows (chunks: %v)", ErrOptions, p, pb.Elem, tuning.PartitionChunks)
	}
	k, err := kernels.PartitionPFor(p, pb.f64())
	if err != nil {
		return Route{}, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	l, err := tuning.PartitionLaunchChunk(c.d, pb.N, pb.Elem, p, pb.G, pb.sysFirst(), c.regs.of(k.Kernel()))
	if err != nil {
		return Route{}, err
	}
	r := Route{Plan: PlanShared, Kernel: k.Kernel(), Chunk: p, Partition: &l}
	if p != 16 || c.o.NoConstKernel {
		return r, nil
	}
	ck, err := kernels.PartitionConstPFor(16, pb.f64())
	if err != nil {
		return r, nil
	}
	cl, err := tuning.PartitionLaunchConst(c.d, pb.N, pb.Elem, pb.G, pb.sysFirst(), c.regs.of(ck.Kernel()))
	if err != nil {
		return r, nil // the general kernel serves
	}
	r.ConstKernel, r.ConstPartition = ck.Kernel(), &cl
	attachConstStream(c, &r)
	return r, nil
}

// lanesRoute is the plan of partition_lanes_p16 (tuning.PartitionLanesLaunch;
// spb > 0: that many systems a block, and then no constant streaming
// kernel).
func lanesRoute(c *partitionCtx, spb int) (Route, error) {
	pb := c.p
	k, err := kernels.PartitionLanesPFor(16, pb.f64())
	if err != nil {
		return Route{}, err
	}
	regs := c.regs.of(k.Kernel())
	l, err := tuning.PartitionLanesLaunch(c.d, pb.N, pb.Elem, spb, pb.G, regs)
	if err != nil {
		return Route{}, err
	}
	r := Route{Plan: PlanLanes, Kernel: k.Kernel(), Chunk: 16, Partition: &l}
	if spb == 0 {
		attachConstStream(c, &r)
	}
	return r, nil
}

// attachConstStream gives r the constant streaming kernel for its
// constant solves where tuning.PreferConstStream takes it.
func attachConstStream(c *partitionCtx, r *Route) {
	if c.o.NoConstStream {
		return
	}
	cs, k, err := constStreamLaunch(c, 0)
	if err != nil || !tuning.PreferConstStream(c.d, cs) {
		return // N too large for it, rows not in whole sectors, or a batch too small to gain
	}
	r.ConstStream, r.ConstStreamKernel = &cs, k
}

// ConstStreamFamily is the constant streaming kernel (chunks of 16) for
// systems of at most a warp (warp), with d and x row-major in shared
// memory (rows: the systems closer together in memory than their rows):
// the kernel table's family value, a kernels.PartitionConstPLauncher
// under the cuda build tag.
func ConstStreamFamily(warp, rows, f64 bool) (interface{ Kernel() kernels.Kernel }, error) {
	var k interface{ Kernel() kernels.Kernel }
	var err error
	switch {
	case warp && rows:
		k, err = kernels.PartitionCstreamWarpRowsPFor(16, f64)
	case warp:
		k, err = kernels.PartitionCstreamWarpPFor(16, f64)
	case rows:
		k, err = kernels.PartitionCstreamRowsPFor(16, f64)
	default:
		k, err = kernels.PartitionCstreamPFor(16, f64)
	}
	if err != nil {
		return nil, err
	}
	return k, nil
}

// constStreamLaunch is the launch of the constant streaming kernel for
// c's problem (spb > 0: that many systems a block), within the kernel's
// launch bound.
func constStreamLaunch(c *partitionCtx, spb int) (tuning.ConstStreamLaunch, kernels.Kernel, error) {
	pb := c.p
	f, err := ConstStreamFamily(tuning.PartitionConstStreamWarp(pb.N), pb.sysFirst(), pb.f64())
	if err != nil {
		return tuning.ConstStreamLaunch{}, 0, err
	}
	k := f.Kernel()
	cs, err := tuning.PartitionConstStreamLaunchFor(c.d, pb.N, pb.Elem, pb.G, pb.sysFirst(), k.Info().MaxThreads, c.regs.of(k), spb)
	return cs, k, err
}

// lanesStreamRoute is the plan of partition_lanes_stream_p16_s8 for the
// general solves of the batch lanes (a PlanLanes route) takes, lanes
// running the constant ones.
func lanesStreamRoute(c *partitionCtx, lanes Route) (Route, error) {
	pb := c.p
	if !pb.adjacent() {
		return Route{}, fmt.Errorf("%w: the streamed lanes kernel takes batches of adjacent systems (batch stride 1)", tuning.ErrTooLargeForShared)
	}
	k, err := kernels.PartitionLanesStreamPSFor(16, tuning.LanesStreamSystems, pb.f64())
	if err != nil {
		return Route{}, err
	}
	l, err := tuning.LanesStreamLaunchFor(c.d, pb.N, pb.Elem, pb.G, c.regs.of(k.Kernel()))
	if err != nil {
		return Route{}, err
	}
	lanes.Variant = "lanes"
	return Route{Plan: PlanLanesStream, Kernel: k.Kernel(), Chunk: 16, LanesStream: &l, Constant: &lanes}, nil
}

// streamRoute is the plan of partition_stream_p16 for the general solves
// (rows first in memory), other running the constant ones.
func streamRoute(c *partitionCtx, other Route) (Route, error) {
	pb := c.p
	if pb.sysFirst() {
		return Route{}, fmt.Errorf("%w: the streaming partition kernel takes layouts with the rows first in memory", errLayout)
	}
	k, err := kernels.PartitionStreamPFor(16, pb.f64())
	if err != nil {
		return Route{}, err
	}
	l, err := tuning.PartitionStreamLaunchFor(c.d, pb.N, pb.Elem, pb.G, k.Kernel().Info().MaxThreads, c.regs.of(k.Kernel()))
	if err != nil {
		return Route{}, err
	}
	if other.Variant == "" || other.Variant == "stream" {
		other.Variant = "whole"
	}
	return Route{Plan: PlanStream, Kernel: k.Kernel(), Chunk: 16, Stream: &l, Constant: &other}, nil
}

// segmentsRoute is the plan of segment_p16 (or, on devices with
// thread-block clusters, segc<Q>_p16) with segments of rows rows (0: the
// choice of tuning.SegmentLaunchFor); three passes solve the reduced systems
// with the nested route.
func segmentsRoute(c *partitionCtx, rows int) (Route, error) {
	pb := c.p
	k, err := kernels.SegmentPFor(16, pb.f64())
	if err != nil {
		return Route{}, err
	}
	o := tuning.SegmentOptions{Rows: rows, Regs: c.regs.of(k.Kernel())}
	if !c.o.NoClusters {
		o.ClusterSizes, o.ClusterRegs = clusterSizes(c.d, c.regs, pb.f64())
	}
	l, err := tuning.SegmentLaunchFor(c.d, pb.N, pb.Elem, pb.G, o)
	if err != nil {
		return Route{}, err
	}
	r := Route{Plan: PlanSegments, Kernel: k.Kernel(), Chunk: 16, Segment: &l}
	if l.Cluster {
		ck, err := kernels.SegcPFor(l.Segments, 16, pb.f64())
		if err != nil {
			return Route{}, err
		}
		r.Kernel = ck.Kernel()
	}
	if !l.OnePass {
		if r.Nested, err = c.nested(l.Segments); err != nil {
			return Route{}, err
		}
	}
	return r, nil
}

// clusterSizes returns the sizes of tuning.SegmentClusterSizes whose cluster
// kernels the device runs (compute capability 9.0 and later, the kernel
// loaded: regs not negative) and the most registers a thread of them.
func clusterSizes(d tuning.Device, regs Regs, f64 bool) ([]int, int) {
	if d.Major < 9 {
		return nil, 0
	}
	var sizes []int
	most := 0
	for _, q := range tuning.SegmentClusterSizes {
		k, err := kernels.SegcPFor(q, 16, f64)
		if err != nil {
			continue
		}
		r := regs.of(k.Kernel())
		if r < 0 {
			continue
		}
		most = max(most, r)
		sizes = append(sizes, q)
	}
	return sizes, most
}

// lanesSegmentRoute is the plan of lseg_p16 with segments of rows rows
// (0: the choice of tuning.LanesSegmentLaunchFor).
func lanesSegmentRoute(c *partitionCtx, rows int) (Route, error) {
	pb := c.p
	if !pb.adjacent() {
		return Route{}, fmt.Errorf("%w: the lanes segment kernel takes batches of adjacent systems (batch stride 1)", errLayout)
	}
	k, err := kernels.LsegPFor(16, pb.f64())
	if err != nil {
		return Route{}, err
	}
	l, err := tuning.LanesSegmentLaunchFor(c.d, pb.N, pb.Elem, pb.G, rows, c.regs.of(k.Kernel()))
	if err != nil {
		return Route{}, err
	}
	if c.o.Force == PlanLanesSegments {
		if spb := c.o.Systems; spb > 0 && spb != l.Systems {
			if l, err = l.WithSystems(spb); err != nil {
				return Route{}, fmt.Errorf("%w: %w", ErrOptions, err)
			}
		}
		if c.o.ThreePass {
			l.OnePass = false
		}
	}
	r := Route{Plan: PlanLanesSegments, Kernel: k.Kernel(), Chunk: 16, LanesSegment: &l}
	if !l.OnePass {
		if r.Nested, err = c.nested(l.Segments); err != nil {
			return Route{}, err
		}
	}
	return r, nil
}

// gatherRoute is the plan that gathers systems stored systems first into
// contiguous ones, solves them with the route of the contiguous batch and
// scatters x back.
func gatherRoute(c *partitionCtx) (Route, error) {
	pb := c.p
	if !pb.sysFirst() {
		return Route{}, fmt.Errorf("%w: layout gathering is for batches stored systems first", errLayout)
	}
	inner, err := c.tree(pb.contiguous(), true)
	if err != nil {
		return Route{}, err
	}
	g, err := kernels.LayoutGatherFor(pb.f64())
	if err != nil {
		return Route{}, err
	}
	s, err := kernels.LayoutScatterFor(pb.f64())
	if err != nil {
		return Route{}, err
	}
	tiles := int64((pb.N+31)/32) * int64((pb.G+31)/32)
	return Route{Plan: PlanGather, Kernel: g.Kernel(), ScatterKernel: s.Kernel(),
		GatherGrid: int(min(tiles, int64(c.d.SMs)*16)), Inner: &inner}, nil
}
