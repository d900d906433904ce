package route

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
	"github.com/bandsolve/bandsolve/tridiag/partition"
	"github.com/bandsolve/bandsolve/tuning"
)

// testRegs is a register table for the tests: per-thread registers of
// the partition family's kernels of the order ptxas gives on sm_90 (a
// fixture, not a measurement), 0 for the others.
func testRegs(k kernels.Kernel) int {
	switch k.Info().Family {
	case "partition_p":
		return 40
	case "partition_const_p":
		return 38
	case "partition_lanes_p":
		if k.Info().MaxThreads <= 256 {
			return 179
		}
		return 96
	case "partition_lanes_stream_p_s":
		return 120
	case "partition_stream_p":
		return 109
	case "segment_p", "segc_p":
		return 64
	case "lseg_p":
		return 100
	}
	return 0
}

// summary is a compact account of a route, as legacyRoute writes it.
func summary(r Route) string {
	s := ""
	switch r.Plan {
	case PlanShared, PlanLanes:
		s = fmt.Sprintf("%s(P=%d spb=%d threads=%d latency=%v", r.Plan, r.Chunk, r.Partition.SystemsPerBlock, r.Partition.Threads, r.Latency)
		if r.ConstPartition != nil {
			s += fmt.Sprintf(" const=%d", r.ConstPartition.SystemsPerBlock)
		}
		if r.ConstStream != nil {
			s += fmt.Sprintf(" cstream=%d/%d", r.ConstStream.Grid, r.ConstStream.SystemsPerBlock)
		}
	case PlanLanesStream:
		s = fmt.Sprintf("lanes-stream(grid=%d", r.LanesStream.Grid)
	case PlanStream:
		s = fmt.Sprintf("stream(grid=%d threads=%d", r.Stream.Grid, r.Stream.Threads)
	case PlanSegments:
		s = fmt.Sprintf("segments(M=%d Q=%d one=%v cluster=%v", r.Segment.Rows, r.Segment.Segments, r.Segment.OnePass, r.Segment.Cluster)
	case PlanLanesSegments:
		s = fmt.Sprintf("lanes-segments(M=%d Q=%d one=%v", r.LanesSegment.Rows, r.LanesSegment.Segments, r.LanesSegment.OnePass)
	case PlanGather:
		s = fmt.Sprintf("gather(grid=%d constOnly=%v", r.GatherGrid, r.ConstOnly)
	}
	for _, sub := range []*Route{r.Constant, r.Nested, r.Inner} {
		if sub != nil {
			s += " " + summary(*sub)
		} else {
			s += " -"
		}
	}
	return s + ")"
}

// legacy is the partition plan's choice as the tree of tridiaggpu made
// it (autoPreference's partition step, latencyPlan, newPartitionPlanLanes
// and the constructors it calls), written down independently of the
// variant table, in summary's notation.
type legacy struct {
	d    tuning.Device
	regs Regs
	o    Options
}

func (x legacy) reg(k interface{ Kernel() kernels.Kernel }, err error) int {
	if err != nil {
		return 0
	}
	return x.regs.of(k.Kernel())
}

func (x legacy) auto(p Problem) (string, error) {
	if s, ok := x.latency(p); ok {
		return s, nil
	}
	return x.plan(p, !x.o.NoLanesSegments)
}

func (x legacy) latency(p Problem) (string, bool) {
	if x.o.NoLatencyChunks || p.SegmentRows > 0 {
		return "", false
	}
	c := tuning.LatencyChunk(x.d, p.N, p.Elem, p.G, p.BatchStride < p.ElemStride, p.BatchStride == 1)
	if c == 0 {
		return "", false
	}
	s, _, err := x.shared(p, c, true)
	if err != nil {
		return "", false
	}
	sub := "-"
	if tuning.LatencyConstChunk16(x.d, p.N, p.G) {
		if s16, c16, err := x.shared(p, 16, false); err == nil && c16 {
			sub = s16 + " - - -)"
		}
	}
	return s + " " + sub + " - -)", true
}

// shared is newSharedPartitionPlan: the summary without its closing
// sub-routes, and whether it has a constant kernel.
func (x legacy) shared(p Problem, c int, latency bool) (string, bool, error) {
	if !tuning.PartitionKernelBuilt(c, p.Elem) {
		return "", false, fmt.Errorf("%w: chunk %d", ErrOptions, c)
	}
	sysFirst := p.BatchStride < p.ElemStride
	cfg, err := tuning.PartitionLaunchChunk(x.d, p.N, p.Elem, c, p.G, sysFirst, x.reg(kernels.PartitionPFor(c, p.f64())))
	if err != nil {
		return "", false, err
	}
	s := fmt.Sprintf("shared(P=%d spb=%d threads=%d latency=%v", c, cfg.SystemsPerBlock, cfg.Threads, latency)
	hasConst := false
	if c == 16 && !x.o.NoConstKernel {
		cc, err := tuning.PartitionLaunchConst(x.d, p.N, p.Elem, p.G, sysFirst, x.reg(kernels.PartitionConstPFor(16, p.f64())))
		if err == nil {
			s += fmt.Sprintf(" const=%d", cc.SystemsPerBlock)
			hasConst = true
			s += x.cstream(p)
		}
	}
	return s, hasConst, nil
}

// sharedFull is shared with its (empty) sub-routes.
func (x legacy) sharedFull(p Problem, c int) (string, *tuning.PartitionLaunch, bool, error) {
	s, hasConst, err := x.shared(p, c, false)
	if err != nil {
		return "", nil, false, err
	}
	cfg, _ := tuning.PartitionLaunchChunk(x.d, p.N, p.Elem, c, p.G, p.BatchStride < p.ElemStride, x.reg(kernels.PartitionPFor(c, p.f64())))
	cs := hasConst && (x.cstream(p) != "" || constBlocks(x, p) >= 2)
	return s + " - - -)", &cfg, cs, nil
}

func constBlocks(x legacy, p Problem) int {
	cc, err := tuning.PartitionLaunchConst(x.d, p.N, p.Elem, p.G, p.BatchStride < p.ElemStride, x.reg(kernels.PartitionConstPFor(16, p.f64())))
	if err != nil {
		return 0
	}
	return cc.BlocksPerSM
}

// cstream is attachConstStream: the constant streaming kernel's part of
// the summary where PreferConstStream takes it.
func (x legacy) cstream(p Problem) string {
	if x.o.NoConstStream {
		return ""
	}
	sysFirst := p.BatchStride < p.ElemStride
	k, err := constStreamKernel(tuning.PartitionConstStreamWarp(p.N), sysFirst, p.f64())
	if err != nil {
		return ""
	}
	cs, err := tuning.PartitionConstStreamLaunchFor(x.d, p.N, p.Elem, p.G, sysFirst, k.Info().MaxThreads, x.regs.of(k), 0)
	if err != nil || !tuning.PreferConstStream(x.d, cs) {
		return ""
	}
	return fmt.Sprintf(" cstream=%d/%d", cs.Grid, cs.SystemsPerBlock)
}

func (x legacy) plan(p Problem, lanesSegments bool) (string, error) {
	sysFirst := p.BatchStride < p.ElemStride
	adjacent := sysFirst && p.BatchStride == 1 && lanesSegments
	if m := p.SegmentRows; m > 0 {
		if p.N <= m {
			s, _, _, err := x.chunk(p, partition.DefaultChunk(p.N))
			return s, err
		}
		if adjacent && tuning.LanesSegmentRowsOK(m, p.Elem) {
			return x.lseg(p, m, "-")
		}
		if !tuning.SegmentRowsOK(m) {
			return "", fmt.Errorf("%w: segments of %d rows", ErrOptions, m)
		}
		return x.seg(p, m, "-")
	}
	if adjacent && p.N >= tuning.LanesSegmentMinN {
		if _, err := x.lseg(p, 0, "-"); err == nil {
			c, err := x.plan(p, false)
			if err != nil {
				return "", err
			}
			if len(c) > 6 && c[:6] == "gather" {
				c = "gather" + replaceConstOnly(c[6:])
			}
			return x.lseg(p, 0, c)
		}
	}
	if sysFirst && !x.o.NoTranspose && p.N >= tuning.GatherMinN {
		return x.gather(p)
	}
	whole, cfg, constWhole, err := x.chunk(p, partition.DefaultChunk(p.N))
	kp := whole
	rowsFirst := !sysFirst && p.N >= 2
	if rowsFirst && (err != nil || cfg != nil && cfg.BlocksPerSM < 2) {
		sub := "-"
		if err == nil && constWhole {
			sub = whole
		}
		seg, serr := x.seg(p, 0, sub)
		switch {
		case serr == nil:
			kp, err = seg, nil
		case err == nil:
		default:
			return "", fmt.Errorf("%w; segments: %w", err, serr)
		}
	} else if err != nil {
		if sysFirst && !x.o.NoTranspose && !errors.Is(err, ErrOptions) {
			return x.gather(p)
		}
		return "", err
	}
	if cfg != nil && len(whole) > 6 && whole[:6] == "shared" && !x.o.NoStreamKernel && !sysFirst {
		k, _ := kernels.PartitionStreamPFor(16, p.f64())
		sl, serr := tuning.PartitionStreamLaunchFor(x.d, p.N, p.Elem, p.G, k.Kernel().Info().MaxThreads, x.regs.of(k.Kernel()))
		if serr == nil && tuning.PreferStream(x.d, *cfg, sl, p.G) {
			return fmt.Sprintf("stream(grid=%d threads=%d %s - -)", sl.Grid, sl.Threads, kp), nil
		}
	}
	return kp, nil
}

func replaceConstOnly(s string) string {
	const f = "constOnly=false"
	for i := 0; i+len(f) <= len(s); i++ {
		if s[i:i+len(f)] == f {
			return s[:i] + "constOnly=true" + s[i+len(f):]
		}
	}
	return s
}

// chunk is newPartitionPlanChunk: the summary, the one-block launch of
// the shared kernel (nil for the lanes kernels), whether its constant
// solves stay one block a system beside segments.
func (x legacy) chunk(p Problem, c int) (string, *tuning.PartitionLaunch, bool, error) {
	if c == 16 && !x.o.NoLanesKernel && p.BatchStride == 1 && p.ElemStride > 1 && p.N <= tuning.PartitionLanesMaxN(p.Elem) {
		cfg, err := tuning.PartitionLanesLaunch(x.d, p.N, p.Elem, p.G, x.reg(kernels.PartitionLanesPFor(16, p.f64())))
		if err != nil {
			return "", nil, false, err
		}
		lanes := fmt.Sprintf("lanes(P=16 spb=%d threads=%d latency=false%s - - -)", cfg.SystemsPerBlock, cfg.Threads, x.cstream(p))
		if x.o.NoLanesStream {
			return lanes, &cfg, false, nil
		}
		ls, err := tuning.LanesStreamLaunchFor(x.d, p.N, p.Elem, p.G, x.reg(kernels.PartitionLanesStreamPSFor(16, 8, p.f64())))
		if err == nil && (tuning.PreferLanesStream(ls) || x.o.ForceLanesStream && p.G >= 16*ls.Grid) {
			return fmt.Sprintf("lanes-stream(grid=%d %s - -)", ls.Grid, lanes), nil, false, nil
		}
		return lanes, &cfg, false, nil
	}
	return x.sharedFull(p, c)
}

func (x legacy) seg(p Problem, rows int, constWhole string) (string, error) {
	o := tuning.SegmentOptions{Rows: rows, Regs: x.reg(kernels.SegmentPFor(16, p.f64()))}
	if !x.o.NoClusters && x.d.Major >= 9 {
		for _, q := range tuning.SegmentClusterSizes {
			k, err := kernels.SegcPFor(q, 16, p.f64())
			if err == nil && x.regs.of(k.Kernel()) >= 0 {
				o.ClusterSizes = append(o.ClusterSizes, q)
				o.ClusterRegs = max(o.ClusterRegs, x.regs.of(k.Kernel()))
			}
		}
	}
	l, err := tuning.SegmentLaunchFor(x.d, p.N, p.Elem, p.G, o)
	if err != nil {
		return "", err
	}
	nested := "-"
	if !l.OnePass {
		if nested, err = x.auto(Problem{N: 2 * l.Segments, G: p.G, Elem: p.Elem, ElemStride: 1, BatchStride: 2 * l.Segments}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("segments(M=%d Q=%d one=%v cluster=%v %s %s -)", l.Rows, l.Segments, l.OnePass, l.Cluster, constWhole, nested), nil
}

func (x legacy) lseg(p Problem, rows int, constPlan string) (string, error) {
	if p.BatchStride != 1 || p.ElemStride <= 1 {
		return "", errors.New("not adjacent")
	}
	l, err := tuning.LanesSegmentLaunchFor(x.d, p.N, p.Elem, p.G, rows, x.reg(kernels.LsegPFor(16, p.f64())))
	if err != nil {
		return "", err
	}
	nested := "-"
	if !l.OnePass {
		if nested, err = x.auto(Problem{N: 2 * l.Segments, G: p.G, Elem: p.Elem, ElemStride: 1, BatchStride: 2 * l.Segments}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("lanes-segments(M=%d Q=%d one=%v %s %s -)", l.Rows, l.Segments, l.OnePass, constPlan, nested), nil
}

func (x legacy) gather(p Problem) (string, error) {
	inner, err := x.plan(Problem{N: p.N, G: p.G, Elem: p.Elem, ElemStride: 1, BatchStride: p.N}, !x.o.NoLanesSegments)
	if err != nil {
		return "", err
	}
	tiles := int64((p.N+31)/32) * int64((p.G+31)/32)
	return fmt.Sprintf("gather(grid=%d constOnly=false - - %s)", int(min(tiles, int64(x.d.SMs)*16)), inner), nil
}

// TestPartitionMatchesTree compares route.Partition with the tree the
// partition plans were chosen by, on the recorded devices over the grid
// of the GPU's TestRouteGolden.
func TestPartitionMatchesTree(t *testing.T) {
	ns := []int{2, 3, 17, 64, 100, 256, 500, 512, 1000, 1024, 1025, 2048, 2049, 4096, 8192, 65536, 1 << 20, 1 << 24}
	opts := []Options{{}, {NoLanesSegments: true}, {NoConstStream: true, NoStreamKernel: true}, {NoClusters: true, NoLatencyChunks: true}, {ForceLanesStream: true}}
	for _, d := range []tuning.Device{tuning.H100, tuning.H200, tuning.A100, tuning.GTX980} {
		for _, n := range ns {
			gs := []int{max(1, (1<<24)/n)}
			for _, g := range []int{1, 7, 132, 4096} {
				if int64(n)*int64(g) <= 1<<26 {
					gs = append(gs, g)
				}
			}
			for _, g := range gs {
				for _, lay := range [][2]int{{1, n}, {g, 1}, {2 * g, 2}} {
					for _, elem := range []int{4, 8} {
						for _, seg := range []int{0, 1024} {
							for _, auto := range []bool{true, false} {
								for _, o := range opts {
									p := Problem{N: n, G: g, Elem: elem, ElemStride: lay[0], BatchStride: lay[1], SegmentRows: seg, Auto: auto}
									x := legacy{d: d, regs: testRegs, o: o}
									var want string
									var werr error
									if auto {
										want, werr = x.auto(p)
									} else {
										want, werr = x.plan(p, !o.NoLanesSegments)
									}
									r, err := Partition(d, p, testRegs, o)
									what := fmt.Sprintf("%s %+v %+v", d.Name, p, o)
									if werr != nil {
										require.Error(t, err, what)
										require.Equal(t, errors.Is(werr, ErrOptions), errors.Is(err, ErrOptions), what)
										continue
									}
									require.NoError(t, err, what)
									require.Equal(t, want, summary(r), what)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPartitionExamples pins a few routes on the H100 to what the rules
// give by hand.
func TestPartitionExamples(t *testing.T) {
	// FP32 N = 256, 65536 interleaved systems: the lanes kernel (16
	// systems of 64 bytes a block, 256 threads).
	r, err := Partition(tuning.H100, Problem{N: 256, G: 65536, Elem: 4, ElemStride: 65536, BatchStride: 1, Auto: true}, testRegs, Options{})
	require.NoError(t, err)
	require.Equal(t, PlanLanes, r.Plan)
	require.Equal(t, 16, r.Partition.SystemsPerBlock)
	require.Equal(t, 256, r.Partition.Threads)
	// FP64 N = 4096 interleaved: past GatherMinN and LanesSegmentMinN,
	// lanes segments for the general solves.
	r, err = Partition(tuning.H100, Problem{N: 4096, G: 4096, Elem: 8, ElemStride: 4096, BatchStride: 1, Auto: true}, testRegs, Options{})
	require.NoError(t, err)
	require.Equal(t, PlanLanesSegments, r.Plan)
	require.NotNil(t, r.Constant)
	// The same batch without the lanes segments is gathered.
	r, err = Partition(tuning.H100, Problem{N: 4096, G: 4096, Elem: 8, ElemStride: 4096, BatchStride: 1, Auto: true}, testRegs, Options{NoLanesSegments: true})
	require.NoError(t, err)
	require.Equal(t, PlanGather, r.Plan)
	// Contiguous, one block an SM and 4096 systems for 132 SMs: the
	// streaming kernel (PreferStream), its constant solves in segments.
	require.Equal(t, PlanStream, r.Inner.Plan)
	require.Equal(t, PlanSegments, r.Inner.Constant.Plan)
	// One FP32 system of 2^24 rows: segments of 1024 rows in three passes
	// (2^14 segments), the reduced system nested.
	r, err = Partition(tuning.H100, Problem{N: 1 << 24, G: 1, Elem: 4, ElemStride: 1, BatchStride: 1 << 24, Auto: true}, testRegs, Options{})
	require.NoError(t, err)
	require.Equal(t, PlanSegments, r.Plan)
	require.False(t, r.Segment.OnePass)
	require.NotNil(t, r.Nested)
	// A small contiguous batch: short chunks (FP32 N = 128, G = 1: P = 4).
	r, err = Partition(tuning.H100, Problem{N: 128, G: 1, Elem: 4, ElemStride: 1, BatchStride: 128, Auto: true}, testRegs, Options{})
	require.NoError(t, err)
	require.True(t, r.Latency)
	require.Equal(t, 4, r.Chunk)
	// A forced segment size no kernel runs.
	_, err = Partition(tuning.H100, Problem{N: 4096, G: 8, Elem: 4, ElemStride: 1, BatchStride: 4096, SegmentRows: 100}, testRegs, Options{})
	require.ErrorIs(t, err, ErrOptions)
}
