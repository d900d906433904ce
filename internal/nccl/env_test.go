package nccl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Env
	}{
		{"empty: one rank", nil, Env{Rank: 0, NRanks: 1}},
		{"bandsolve", map[string]string{"BANDSOLVE_RANK": "2", "BANDSOLVE_NRANKS": "4", "BANDSOLVE_ADDR": "node0:29500"},
			Env{Rank: 2, NRanks: 4, LocalRank: 2, Addr: "node0:29500", RankVar: "BANDSOLVE_RANK", SizeVar: "BANDSOLVE_NRANKS"}},
		{"bandsolve local rank", map[string]string{"BANDSOLVE_RANK": "5", "BANDSOLVE_NRANKS": "8", "BANDSOLVE_LOCAL_RANK": "1", "BANDSOLVE_ADDR": "10.0.0.1:7000"},
			Env{Rank: 5, NRanks: 8, LocalRank: 1, Addr: "10.0.0.1:7000", RankVar: "BANDSOLVE_RANK", SizeVar: "BANDSOLVE_NRANKS"}},
		{"open mpi", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "BANDSOLVE_ADDR": "[fe80::1]:7000"},
			Env{Rank: 3, NRanks: 4, LocalRank: 1, Addr: "[fe80::1]:7000", RankVar: "OMPI_COMM_WORLD_RANK", SizeVar: "OMPI_COMM_WORLD_SIZE"}},
		{"pmi", map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "0", "BANDSOLVE_ADDR": "h:1"},
			Env{Rank: 1, NRanks: 2, LocalRank: 0, Addr: "h:1", RankVar: "PMI_RANK", SizeVar: "PMI_SIZE"}},
		{"bandsolve before mpi", map[string]string{"BANDSOLVE_RANK": "0", "BANDSOLVE_NRANKS": "2", "OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "3", "BANDSOLVE_ADDR": "h:1"},
			Env{Rank: 0, NRanks: 2, LocalRank: 0, Addr: "h:1", RankVar: "BANDSOLVE_RANK", SizeVar: "BANDSOLVE_NRANKS"}},
		{"empty values are unset", map[string]string{"BANDSOLVE_RANK": "", "PMI_RANK": " 1 ", "PMI_SIZE": "2", "BANDSOLVE_ADDR": " h:1 "},
			Env{Rank: 1, NRanks: 2, LocalRank: 1, Addr: "h:1", RankVar: "PMI_RANK", SizeVar: "PMI_SIZE"}},
		{"one rank needs no address", map[string]string{"BANDSOLVE_RANK": "0", "BANDSOLVE_NRANKS": "1"},
			Env{Rank: 0, NRanks: 1, LocalRank: 0, RankVar: "BANDSOLVE_RANK", SizeVar: "BANDSOLVE_NRANKS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fromEnv(lookupIn(tc.env))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"not a number", map[string]string{"BANDSOLVE_RANK": "one", "BANDSOLVE_NRANKS": "2"}, `BANDSOLVE_RANK="one" is not an integer`},
		{"size not a number", map[string]string{"BANDSOLVE_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2.5"}, `OMPI_COMM_WORLD_SIZE="2.5" is not an integer`},
		{"rank without size", map[string]string{"PMI_RANK": "1"}, "PMI_RANK=1 is set but not the number of ranks (BANDSOLVE_NRANKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE)"},
		{"size without rank", map[string]string{"BANDSOLVE_NRANKS": "2"}, "BANDSOLVE_NRANKS=2 is set but not the rank"},
		{"rank out of range", map[string]string{"BANDSOLVE_RANK": "2", "BANDSOLVE_NRANKS": "2", "BANDSOLVE_ADDR": "h:1"}, "BANDSOLVE_RANK=2 is out of range for BANDSOLVE_NRANKS=2"},
		{"negative rank", map[string]string{"BANDSOLVE_RANK": "-1", "BANDSOLVE_NRANKS": "2", "BANDSOLVE_ADDR": "h:1"}, "BANDSOLVE_RANK=-1 is out of range"},
		{"no ranks", map[string]string{"BANDSOLVE_RANK": "0", "BANDSOLVE_NRANKS": "0"}, "BANDSOLVE_NRANKS=0: a job needs at least one rank"},
		{"local rank out of range", map[string]string{"BANDSOLVE_RANK": "0", "BANDSOLVE_NRANKS": "2", "BANDSOLVE_LOCAL_RANK": "2", "BANDSOLVE_ADDR": "h:1"}, "BANDSOLVE_LOCAL_RANK=2 is out of range"},
		{"no address", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}, "BANDSOLVE_ADDR (rank 0's host:port) must be set for a job of 2 ranks"},
		{"address without port", map[string]string{"BANDSOLVE_RANK": "0", "BANDSOLVE_NRANKS": "2", "BANDSOLVE_ADDR": "node0"}, `BANDSOLVE_ADDR="node0" is not host:port`},
		{"address with empty port", map[string]string{"BANDSOLVE_RANK": "0", "BANDSOLVE_NRANKS": "2", "BANDSOLVE_ADDR": "node0:"}, `BANDSOLVE_ADDR="node0:" is not host:port: no port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fromEnv(lookupIn(tc.env))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestFromEnvProcess: FromEnv reads the process's environment.
func TestFromEnvProcess(t *testing.T) {
	for _, v := range append(append(append([]string{AddrVar}, rankVars...), sizeVars...), localRankVars...) {
		t.Setenv(v, "")
	}
	t.Setenv("BANDSOLVE_RANK", "1")
	t.Setenv("BANDSOLVE_NRANKS", "3")
	t.Setenv("BANDSOLVE_ADDR", "127.0.0.1:29500")
	got, err := FromEnv()
	require.NoError(t, err)
	assert.Equal(t, Env{Rank: 1, NRanks: 3, LocalRank: 1, Addr: "127.0.0.1:29500", RankVar: "BANDSOLVE_RANK", SizeVar: "BANDSOLVE_NRANKS"}, got)
}
