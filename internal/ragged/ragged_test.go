package ragged

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOffsets(t *testing.T) {
	off, bad, ok := Offsets([]int{3, 1, 4}, 1, 100)
	require.True(t, ok)
	assert.Equal(t, -1, bad)
	assert.Equal(t, []int{0, 3, 4, 8}, off)

	_, bad, ok = Offsets([]int{3, 0, 4}, 1, 100)
	assert.False(t, ok)
	assert.Equal(t, 1, bad, "a length below the minimum")

	_, bad, ok = Offsets([]int{3, 2, 4}, 3, 100)
	assert.False(t, ok)
	assert.Equal(t, 1, bad)

	_, bad, ok = Offsets([]int{40, 50, 10, 1}, 1, 100)
	assert.False(t, ok)
	assert.Equal(t, 2, bad, "the system whose rows reach the limit")

	big := int(^uint(0) >> 1)
	_, bad, ok = Offsets([]int{big - 1, big - 1}, 1, big)
	assert.False(t, ok, "no overflow")
	assert.Equal(t, 1, bad)

	off, _, ok = Offsets(nil, 1, 100)
	require.True(t, ok)
	assert.Equal(t, []int{0}, off)
}

func TestLocate(t *testing.T) {
	lengths := []int{1, 5, 1, 1, 7, 2}
	off, _, _ := Offsets(lengths, 1, 1<<20)
	k := 0
	for g, n := range lengths {
		for i := range n {
			gg, ii := Locate(off, k)
			assert.Equal(t, [2]int{g, i}, [2]int{gg, ii}, "row %d", k)
			k++
		}
	}
	assert.Equal(t, 7, Longest(off))
}

// TestSchedule: the tasks cover every system once, in runs of consecutive
// systems of at least the rows asked for (but the last, and those of one
// long system), handed out most rows first.
func TestSchedule(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, G := range []int{1, 2, 7, 100, 1000} {
		for _, rows := range []int{1, 10, 1000, 1 << 30} {
			lengths := make([]int, G)
			for g := range lengths {
				lengths[g] = 1 + r.IntN(500)
			}
			off, _, ok := Offsets(lengths, 1, 1<<40)
			require.True(t, ok)
			s := NewSchedule(off, rows)
			next := 0
			ranks := make([]int, s.Tasks())
			for t0 := range s.Tasks() {
				lo, hi, rank := s.Task(t0)
				require.Equal(t, next, lo, "tasks are consecutive")
				require.Greater(t, hi, lo, "no empty task")
				got := off[hi] - off[lo]
				if hi < G && hi-lo > 1 {
					assert.GreaterOrEqual(t, got, rows)
					assert.Less(t, off[hi-1]-off[lo], rows, "a task stops once it has enough rows")
				}
				ranks[rank] = off[hi] - off[lo]
				next = hi
			}
			require.Equal(t, G, next)
			for i := 1; i < len(ranks); i++ {
				assert.GreaterOrEqual(t, ranks[i-1], ranks[i], "most rows first")
			}

			var mu sync.Mutex
			seen := make([]int, G)
			s.Run(context.Background(), 3, func(w, g int) {
				assert.True(t, w >= 0 && w < 3)
				mu.Lock()
				seen[g]++
				mu.Unlock()
			})
			for g, c := range seen {
				require.Equal(t, 1, c, "system %d", g)
			}
		}
	}
}

func TestScheduleStopsWhenCancelled(t *testing.T) {
	off, _, _ := Offsets([]int{5, 5, 5, 5}, 1, 100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	NewSchedule(off, 1).Run(ctx, 1, func(int, int) { calls++ })
	assert.Zero(t, calls)
}
