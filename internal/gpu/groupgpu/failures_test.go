package groupgpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/tridiag"
)

// TestMergeFailures: one error a system, at a breakdown within a part
// before the reduced systems' row, before the first non-finite row.
func TestMergeFailures(t *testing.T) {
	assert.Nil(t, mergeFailures(4, nil, nil, tridiag.ErrBreakdown))
	reduced := []tridiag.SystemError{{System: 1, Row: 0}, {System: 2, Row: 700}, {System: 2, Row: 300}}
	parts := []partFailure{
		{system: 1, row: 0},                  // non-finite from row 0 on
		{system: 1, row: 2222, within: true}, // the cause, in a later part
		{system: 1, row: 1800, within: true},
		{system: 2, row: 10}, // non-finite only
		{system: 3, row: 50}, // non-finite only, no reduced breakdown
		{system: 3, row: 40},
	}
	be := mergeFailures(4, reduced, parts, tridiag.ErrBreakdown)
	require.NotNil(t, be)
	assert.Equal(t, 4, be.G)
	var got [][2]int
	for _, f := range be.Failed {
		got = append(got, [2]int{f.System, f.Row})
		assert.ErrorIs(t, f, tridiag.ErrBreakdown)
	}
	assert.Equal(t, [][2]int{{1, 1800}, {2, 300}, {3, 40}}, got)
}
