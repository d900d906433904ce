package memguard

import (
	"math"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBytesSaturates(t *testing.T) {
	assert.Equal(t, uint64(24), Bytes(8, 3))
	assert.Equal(t, uint64(8), Bytes(8))
	assert.Equal(t, uint64(0), Bytes(8, 0, -1+1))
	assert.Equal(t, uint64(math.MaxUint64), Bytes(8, 1<<40, 1<<40), "2^83 does not wrap")
	assert.Equal(t, uint64(math.MaxUint64), Bytes(8, -1))
	assert.Equal(t, uint64(math.MaxUint64), Add(math.MaxUint64-1, 2))
	assert.Equal(t, uint64(7), Add(3, 4))
}

func TestFormatAndParse(t *testing.T) {
	assert.Equal(t, "512 B", FormatBytes(512))
	assert.Equal(t, "1.5 KiB", FormatBytes(1536))
	assert.Equal(t, "72 TiB", FormatBytes(9<<43))
	assert.Equal(t, "more than 16 EiB", FormatBytes(math.MaxUint64))
	for s, want := range map[string]uint64{
		"1024": 1024, "2G": 2e9, "2 GiB": 2 << 30, "512mib": 512 << 20, "1.5k": 1500, "3TB": 3e12, "7b": 7,
	} {
		got, err := ParseBytes(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "x", "-1G", "NaN", "1Q"} {
		_, err := ParseBytes(s)
		assert.Error(t, err, s)
	}
}

func TestCheckWithCap(t *testing.T) {
	defer SetLimit(SetLimit(1 << 30))
	require.NoError(t, Check("small", 1<<20))
	require.NoError(t, Check("seven eighths", 7<<27))
	err := Check("the CSR arrays of a 1000000000×1000000000 matrix", 36e9)
	require.ErrorIs(t, err, ErrTooLarge)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, uint64(36e9), e.Need)
	assert.Equal(t, uint64(7<<27), e.Available)
	assert.Equal(t, "the CSR arrays of a 1000000000×1000000000 matrix needs 33.5 GiB, more than the 896 MiB this process can have (memory cap of BANDSOLVE_MEMORY_LIMIT or memguard.SetLimit)", err.Error())

	// Below the fast-path size, the cap still counts.
	SetLimit(1 << 20)
	require.ErrorIs(t, Check("two MiB", 2<<20), ErrTooLarge)
}

// No machine has 2^62 bytes: the system limits refuse it without a cap.
func TestCheckSystem(t *testing.T) {
	defer SetLimit(SetLimit(math.MaxUint64))
	err := Check("an absurd array", 1<<62)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorContains(t, err, "an absurd array needs 4 EiB, more than the")
	require.NoError(t, Check("a small array", 1<<10))
	if runtime.GOOS == "linux" {
		b := Current()
		assert.Greater(t, b.Physical, uint64(0))
		assert.Less(t, b.Physical, uint64(math.MaxUint64), "/proc/meminfo is read")
	}
}

// RLIMIT_AS counts: with the soft limit lowered to what the process
// already uses plus 1 GiB, about 1 GiB is left.
func TestAddressSpaceLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_AS is read on Linux")
	}
	used := vmSize()
	if used == 0 || used > 1<<40 {
		// The race detector maps terabytes of shadow memory.
		t.Skipf("address space in use: %d bytes", used)
	}
	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_AS, &old))
	if old.Cur < used+4<<30 {
		t.Skipf("RLIMIT_AS is already %d bytes", old.Cur)
	}
	lim := syscall.Rlimit{Cur: used + 2<<30, Max: old.Max}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_AS, &lim))
	got := addressSpace()
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_AS, &old))
	assert.InDelta(t, float64(2<<30), float64(got), float64(64<<20))
	b := Current()
	assert.Greater(t, b.AddressSpace, uint64(2<<30), "the limit is restored")
}
