package tuning

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var spikeDevices = []Device{H200, H100, A100, GTX980}

func TestSpikeFactorLaunch(t *testing.T) {
	for _, elem := range []int{4, 8} {
		for k := 1; k <= 200; k++ {
			for _, wide := range []bool{false, true} {
				f := spikeFactorLaunch(k, elem, wide)
				what := fmt.Sprintf("K=%d elem=%d wide=%v", k, elem, wide)
				assert.Equal(t, wide || k > SpikeWindowMaxK, f.Wide, what)
				assert.GreaterOrEqual(t, f.Threads, 2*k+1, "%s: the loaders need 2K+1 threads", what)
				assert.LessOrEqual(t, f.Threads, 1024, what)
				if f.Wide {
					g := spikeWideGroups(k)
					assert.Equal(t, g*k, f.Threads, what)
					assert.GreaterOrEqual(t, f.Shared, ((k+2)*(k+2)+k+1)*elem, what)
					assert.GreaterOrEqual(t, f.Shared, 8*f.Threads, "%s: room for the norm's reduction", what)
					assert.Zero(t, f.Shared%16, what)
				} else {
					assert.Equal(t, max(32, min(k*k, 1024)), f.Threads, what)
					assert.Equal(t, (k+2)*(k+2)*elem, f.Shared, what)
				}
			}
		}
	}
}

func TestSpikeMaxK(t *testing.T) {
	// On an H100, 227 KiB of shared memory per block: the wide window of
	// (K+2)²+K+1 elements bounds the shared-memory path; the blocked path
	// goes to the solves' 1024 threads in FP32 and to its panels of
	// 16 padded rows of K+16 and of K elements in FP64.
	assert.Equal(t, 167, SpikeWideMaxK(H100, 8))
	assert.Equal(t, 238, SpikeWideMaxK(H100, 4))
	assert.Equal(t, 717, SpikeMaxK(H100, 8))
	assert.Equal(t, 1024, SpikeMaxK(H100, 4))
	assert.False(t, SpikeBlocked(H100, 167, 8, SpikeKernelAuto))
	assert.True(t, SpikeBlocked(H100, 168, 8, SpikeKernelAuto))
	assert.False(t, SpikeBlocked(H100, 238, 4, SpikeKernelAuto))
	assert.True(t, SpikeBlocked(H100, 239, 4, SpikeKernelAuto))
	assert.True(t, SpikeBlocked(H100, 5, 4, SpikeKernelBlocked))
	for _, d := range spikeDevices {
		for _, elem := range []int{4, 8} {
			m := SpikeMaxK(d, elem)
			require.GreaterOrEqual(t, m, SpikeWideMaxK(d, elem), "%s elem=%d", d.Name, elem)
			f := SpikeFactorFor(d, m, elem, SpikeKernelAuto)
			assert.LessOrEqual(t, f.Shared+f.Static, d.MaxShared(), "%s elem=%d", d.Name, elem)
			assert.LessOrEqual(t, spikeTipsShared(m, elem), d.MaxShared(), "%s elem=%d", d.Name, elem)
			if m < spikeBlockedMaxK && m < d.MaxThreadsPerBlock {
				f = spikeBlockedLaunch(m+1, elem)
				assert.True(t, f.Shared+f.Static > d.MaxShared() || spikeTipsShared(m+1, elem) > d.MaxShared(),
					"%s elem=%d: K+1 must not fit", d.Name, elem)
			}
			k := SpikeWideMaxK(d, elem)
			require.Greater(t, k, 64, "%s elem=%d", d.Name, elem)
			f = spikeFactorLaunch(k, elem, true)
			assert.LessOrEqual(t, f.Shared+f.Static, d.MaxShared(), "%s", d.Name)
			f = spikeFactorLaunch(k+1, elem, true)
			assert.Greater(t, f.Shared+f.Static, d.MaxShared(), "%s: K+1 must not fit", d.Name)
		}
	}
}

func TestResidentBlocks(t *testing.T) {
	// 1024 threads of 32 registers: two per SM; of 40: one.
	assert.Equal(t, 2, ResidentBlocks(H100, 1024, 0, 32))
	assert.Equal(t, 1, ResidentBlocks(H100, 1024, 0, 40))
	// One warp: the 32-block limit.
	assert.Equal(t, 32, ResidentBlocks(H100, 32, 1000, 32))
	// Shared memory: 100 KiB blocks, two per 228 KiB SM.
	assert.Equal(t, 2, ResidentBlocks(H100, 64, 100<<10, 32))
	assert.Equal(t, 0, ResidentBlocks(H100, 64, 300<<10, 32))
}

func TestSpikePartitions(t *testing.T) {
	for _, d := range spikeDevices {
		for _, elem := range []int{4, 8} {
			for _, n := range []int{1, 10, 1000, 4099, 100003, 1_000_000, 10_000_000} {
				for _, k := range []int{1, 2, 5, 16, 33, 64, 100, 200, 500} {
					if k >= n || k > SpikeMaxK(d, elem) {
						continue
					}
					s := SpikeShape{N: n, K: k, Elem: elem}
					p := SpikePartitions(d, s)
					what := fmt.Sprintf("%s N=%d K=%d elem=%d: P=%d", d.Name, n, k, elem, p)
					require.GreaterOrEqual(t, p, 1, what)
					rows := max(spikeMinRows, spikeRowsPerK*k, 2*k)
					if p > 1 {
						assert.GreaterOrEqual(t, n/p, rows, "%s: partitions too short", what)
					}
					f := SpikeFactorFor(d, k, elem, SpikeKernelAuto)
					capF := d.SMs * ResidentBlocks(d, f.Threads, f.Shared+f.Static, 0)
					if p > capF {
						assert.Zero(t, p%capF, "%s: whole waves of the factorization (C=%d)", what, capF)
					}
				}
			}
		}
	}
	// The paper's case on an H100: N = 10⁶, K = 100 in FP64: the wide
	// kernel of 1000 threads holds two blocks per SM.
	p := SpikePartitions(H100, SpikeShape{N: 1_000_000, K: 100, Elem: 8})
	assert.Equal(t, 2*132*2, p)
	// Small problems stay one partition.
	assert.Equal(t, 1, SpikePartitions(H100, SpikeShape{N: 100, K: 2, Elem: 8}))
	// Fewer registers, more resident blocks: never fewer partitions.
	assert.GreaterOrEqual(t, SpikePartitions(H100, SpikeShape{N: 1_000_000, K: 32, Elem: 8, FactorRegs: 32}),
		SpikePartitions(H100, SpikeShape{N: 1_000_000, K: 32, Elem: 8, FactorRegs: 64}))
}
