package nccl

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// The variables FromEnv reads, first match wins. bandsolve's own come
// first; the others are what MPI launchers set in each process: Open
// MPI's mpirun (OMPI_COMM_WORLD_*) and the PMI launchers of MPICH and
// Intel MPI (PMI_RANK, PMI_SIZE; MPI_LOCALRANKID from Hydra).
var (
	rankVars      = []string{"BANDSOLVE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}
	sizeVars      = []string{"BANDSOLVE_NRANKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}
	localRankVars = []string{"BANDSOLVE_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}
)

// AddrVar names the variable with rank 0's bootstrap address.
const AddrVar = "BANDSOLVE_ADDR"

// Env is a rank's place in a job, as the environment gives it.
type Env struct {
	Rank   int // this process's rank, 0 to NRanks−1
	NRanks int // the number of ranks of the job
	// LocalRank is the rank among the job's processes on this host,
	// the usual choice of GPU ordinal; Rank when no variable gives it
	// (all ranks on one host).
	LocalRank int
	// Addr is rank 0's bootstrap address, host:port (BANDSOLVE_ADDR);
	// "" for a job of one rank.
	Addr string
	// RankVar and SizeVar name the variables Rank and NRanks came from
	// ("" for the single rank of an empty environment).
	RankVar, SizeVar string
}

// FromEnv reads the rank's place in its job from the environment: the
// rank from BANDSOLVE_RANK, else OMPI_COMM_WORLD_RANK, else PMI_RANK;
// the number of ranks from BANDSOLVE_NRANKS, else OMPI_COMM_WORLD_SIZE,
// else PMI_SIZE; the local rank from BANDSOLVE_LOCAL_RANK, else
// OMPI_COMM_WORLD_LOCAL_RANK, else MPI_LOCALRANKID, else the rank; and
// rank 0's address from BANDSOLVE_ADDR, which a job of several ranks
// needs. With none of the rank and size variables set it returns a job
// of one rank. A value that is not a number, a rank without a size (or
// the reverse), a rank out of range or a missing or malformed address
// is an error naming the variable.
func FromEnv() (Env, error) { return fromEnv(os.LookupEnv) }

func fromEnv(lookup func(string) (string, bool)) (Env, error) {
	rank, rankVar, err := firstInt(lookup, rankVars)
	if err != nil {
		return Env{}, err
	}
	size, sizeVar, err := firstInt(lookup, sizeVars)
	if err != nil {
		return Env{}, err
	}
	switch {
	case rankVar == "" && sizeVar == "":
		rank, size = 0, 1
	case sizeVar == "":
		return Env{}, fmt.Errorf("nccl: %s=%d is set but not the number of ranks (%s)", rankVar, rank, strings.Join(sizeVars, ", "))
	case rankVar == "":
		return Env{}, fmt.Errorf("nccl: %s=%d is set but not the rank (%s)", sizeVar, size, strings.Join(rankVars, ", "))
	}
	if size < 1 {
		return Env{}, fmt.Errorf("nccl: %s=%d: a job needs at least one rank", sizeVar, size)
	}
	if rank < 0 || rank >= size {
		return Env{}, fmt.Errorf("nccl: %s=%d is out of range for %s=%d", rankVar, rank, sizeVar, size)
	}
	e := Env{Rank: rank, NRanks: size, LocalRank: rank, RankVar: rankVar, SizeVar: sizeVar}
	local, localVar, err := firstInt(lookup, localRankVars)
	if err != nil {
		return Env{}, err
	}
	if localVar != "" {
		if local < 0 || local >= size {
			return Env{}, fmt.Errorf("nccl: %s=%d is out of range for %s=%d", localVar, local, sizeVar, size)
		}
		e.LocalRank = local
	}
	addr, _ := lookup(AddrVar)
	e.Addr = strings.TrimSpace(addr)
	if e.Addr == "" {
		if size > 1 {
			return Env{}, fmt.Errorf("nccl: %s (rank 0's host:port) must be set for a job of %d ranks", AddrVar, size)
		}
		return e, nil
	}
	if _, port, err := net.SplitHostPort(e.Addr); err != nil || port == "" {
		if err == nil {
			err = fmt.Errorf("no port")
		}
		return Env{}, fmt.Errorf("nccl: %s=%q is not host:port: %w", AddrVar, e.Addr, err)
	}
	return e, nil
}

// firstInt returns the value of the first of vars that is set (and not
// empty) and its name; "" when none is.
func firstInt(lookup func(string) (string, bool), vars []string) (int, string, error) {
	for _, v := range vars {
		s, ok := lookup(v)
		if s = strings.TrimSpace(s); !ok || s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, v, fmt.Errorf("nccl: %s=%q is not an integer", v, s)
		}
		return n, v, nil
	}
	return 0, "", nil
}
