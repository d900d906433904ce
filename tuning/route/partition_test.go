package route

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/gpu/kernels"
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

// summary is a compact account of a route: its plan, launches and the
// routes it holds.
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

// update rewrites the golden file of TestPartitionGolden.
var update = flag.Bool("update", false, "rewrite testdata/partition.golden")

// TestPartitionGolden compares the routes of a grid of problems (the GPU's
// TestRouteGolden grid: sizes around every threshold, small and large
// batches, the three kinds of layout, both precisions, SegmentRows 0 and
// 1024, Auto and Partition) on two recorded devices with
// testdata/partition.golden, one line a problem. A change of a rule shows
// as the lines it changes; go test -run TestPartitionGolden -update
// rewrites the file after the change is checked (the GPU's
// TestRouteGolden dumps the plans a device builds, to compare two
// builds).
func TestPartitionGolden(t *testing.T) {
	ns := []int{2, 3, 17, 64, 100, 256, 500, 512, 1000, 1024, 1025, 2048, 2049, 4096, 8192, 65536, 1 << 20, 1 << 24}
	var b strings.Builder
	for _, d := range []tuning.Device{tuning.H100, tuning.GTX980} {
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
								p := Problem{N: n, G: g, Elem: elem, ElemStride: lay[0], BatchStride: lay[1], SegmentRows: seg, Auto: auto}
								fmt.Fprintf(&b, "%s N=%d G=%d es=%d bs=%d elem=%d seg=%d auto=%v: ", d.Name, n, g, lay[0], lay[1], elem, seg, auto)
								if r, err := Partition(d, p, testRegs, Options{}); err != nil {
									fmt.Fprintf(&b, "error (options: %v)\n", errors.Is(err, ErrOptions))
								} else {
									fmt.Fprintf(&b, "%s\n", summary(r))
								}
							}
						}
					}
				}
			}
		}
	}
	const golden = "testdata/partition.golden"
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	got := strings.Split(b.String(), "\n")
	for i, w := range strings.Split(string(want), "\n") {
		require.Less(t, i, len(got), "fewer routes than the golden file")
		require.Equal(t, w, got[i], "line %d of %s", i+1, golden)
	}
	require.Len(t, got, len(strings.Split(string(want), "\n")))
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
