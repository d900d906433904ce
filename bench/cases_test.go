package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelectCases(t *testing.T) {
	cases := []string{"a", "b", "c", "d", "e"}
	got, err := selectCases(cases, "")
	require.NoError(t, err)
	require.Equal(t, cases, got)
	got, err = selectCases(cases, "4, 1-2,2")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "d"}, got)
	for _, bad := range []string{"0", "6", "3-2", "x", "1-", "2-9"} {
		_, err := selectCases(cases, bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "1–5")
	}
}
