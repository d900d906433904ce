package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/internal/testfs"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o640))
	require.NoError(t, WriteFile(path, func(w io.Writer) error {
		_, err := w.Write([]byte("new content"))
		return err
	}))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new content", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the target's permissions are kept")
	assert.Equal(t, []string{"out.txt"}, entries(t, dir), "no temporary file left")
}

func TestFailedWriteKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("partial"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.EqualError(t, err, path+": boom (the existing file is unchanged)")
	got, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	assert.Equal(t, "old", string(got))
	assert.Equal(t, []string{"out.txt"}, entries(t, dir))

	// No file before: none after.
	fresh := filepath.Join(dir, "fresh.txt")
	err = WriteFile(fresh, func(io.Writer) error { return boom })
	assert.EqualError(t, err, fresh+": boom (no file written)")
	assert.NoFileExists(t, fresh)
}

func TestSymlinkTargetReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.txt")
	link := filepath.Join(dir, "link.txt")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	require.NoError(t, os.Symlink("target.txt", link))
	require.NoError(t, WriteFile(link, func(w io.Writer) error {
		_, err := w.Write([]byte("new"))
		return err
	}))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link stays a link")
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
}

func TestRefusesNonRegular(t *testing.T) {
	_, err := Create(t.TempDir())
	assert.ErrorContains(t, err, "not a regular file")
}

// A write that fills the disk fails with ENOSPC, and the file that was
// there keeps its content.
func TestDiskFull(t *testing.T) {
	dir := testfs.Small(t, 64<<10)
	path := filepath.Join(dir, "out.bin")
	old := bytes.Repeat([]byte("o"), 16<<10)
	require.NoError(t, os.WriteFile(path, old, 0o644))
	err := WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(make([]byte, 128<<10))
		return err
	})
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.EqualError(t, err, path+": no space left on device (the existing file is unchanged)")
	got, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	assert.Equal(t, old, got)
	assert.Equal(t, []string{"out.bin"}, entries(t, dir))
}

func TestCheckNotInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	require.NoError(t, os.WriteFile(in, []byte("x"), 0o644))
	hard := filepath.Join(dir, "hard.npy")
	require.NoError(t, os.Link(in, hard))
	sym := filepath.Join(dir, "sym.npy")
	require.NoError(t, os.Symlink(in, sym))
	other := filepath.Join(dir, "other.npy")
	require.NoError(t, os.WriteFile(other, []byte("y"), 0o644))

	err := CheckNotInput(in, other, in)
	require.ErrorIs(t, err, ErrSameFile)
	assert.EqualError(t, err, in+": output would overwrite an input")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "x"), 0o755))
	for _, out := range []string{hard, sym, dir + "/./x/../in.npy"} {
		err = CheckNotInput(out, in)
		require.ErrorIs(t, err, ErrSameFile, out)
		assert.EqualError(t, err, out+": output would overwrite an input (the same file as "+in+")")
	}
	assert.NoError(t, CheckNotInput(other, in, ""))
	assert.NoError(t, CheckNotInput(filepath.Join(dir, "new.npy"), in))
}
