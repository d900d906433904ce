// Package atomicfile writes output files so that a reader never sees a
// partial file and a failed write never destroys an existing one: the
// data goes to a temporary file in the target's directory, which is
// flushed to disk (fsync) and renamed over the target only after the
// whole write succeeded. On any failure the temporary file is removed and
// the target is left as it was, present or absent.
//
// It also refuses an output path that names one of the inputs (the same
// file by device and inode, so hard links, symbolic links and different
// spellings of one path are caught too).
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSameFile is wrapped by the error of CheckNotInput when the output is
// one of the inputs.
var ErrSameFile = errors.New("output would overwrite an input")

// File is an output file being written. Write to it, then Commit to put
// it in place, or Abort to drop it; Abort after Commit does nothing, so
// `defer f.Abort()` is the usual pattern.
type File struct {
	f      *os.File
	path   string // the target, symbolic links resolved
	name   string // as the caller gave it, for error messages
	mode   fs.FileMode
	keep   bool // the target exists: keep its permissions
	closed bool
}

// Create starts writing the file at path. The temporary file lives next
// to the target (same directory, so the rename is atomic) under a hidden
// name; a symbolic link at path is followed, so that the link stays and
// its target is replaced. Permissions are those of the existing target,
// or 0666 less the umask for a new file, as os.Create gives.
func Create(path string) (*File, error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := &File{path: target, name: path, mode: 0o666}
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s); refusing to replace it", path, fi.Mode().Type())
		}
		out.mode, out.keep = fi.Mode().Perm(), true
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	var suffix [6]byte
	for range 100 {
		if _, err := rand.Read(suffix[:]); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(suffix[:]))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, out.mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: creating a temporary file in %s: %w", path, dir, err)
		}
		out.f = f
		return out, nil
	}
	return nil, fmt.Errorf("%s: no free temporary file name in %s", path, dir)
}

// Name returns the path given to Create.
func (f *File) Name() string { return f.name }

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.closed {
		return 0, fmt.Errorf("%s: write after Commit or Abort", f.name)
	}
	n, err := f.f.Write(p)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the temporary name means nothing to the user
	}
	return n, err
}

// outcome says what became of the target after a failure.
func (f *File) outcome() string {
	if f.keep {
		return "the existing file is unchanged"
	}
	return "no file written"
}

// Commit flushes the temporary file to disk, closes it and renames it
// over the target. On failure the temporary file is removed and the
// target is untouched; the error names the target.
func (f *File) Commit() error {
	if f.closed {
		return fmt.Errorf("%s: Commit after Commit or Abort", f.name)
	}
	f.closed = true
	tmp := f.f.Name()
	fail := func(what string, err error) error {
		_ = f.f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("%s: %s: %w (%s)", f.name, what, err, f.outcome())
	}
	if f.keep {
		// O_CREATE applied the umask; give back the target's bits.
		if err := f.f.Chmod(f.mode); err != nil {
			return fail("setting permissions", err)
		}
	}
	if err := f.f.Sync(); err != nil {
		return fail("flushing to disk", err)
	}
	if err := f.f.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%s: closing: %w (%s)", f.name, err, f.outcome())
	}
	if err := os.Rename(tmp, f.path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%s: renaming into place: %w (%s)", f.name, err, f.outcome())
	}
	// Make the rename itself durable; a directory that cannot be synced
	// (some file systems refuse) leaves the rename done all the same.
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the target as it
// was. It does nothing after Commit.
func (f *File) Abort() {
	if f.closed {
		return
	}
	f.closed = true
	_ = f.f.Close()
	_ = os.Remove(f.f.Name())
}

// WriteFile writes the output of write to path atomically: write gets the
// temporary file, and the target is replaced only when write returns nil
// and the file is safely on disk.
func WriteFile(path string, write func(w io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return fmt.Errorf("%s: %w (%s)", path, err, f.outcome())
	}
	return f.Commit()
}

// CheckNotInput returns an error wrapping ErrSameFile when out is the same
// file as one of inputs (os.SameFile: device and inode), naming both
// paths. An output that does not exist yet, and empty input paths, pass;
// an input that cannot be read is left for its reader to report.
func CheckNotInput(out string, inputs ...string) error {
	oi, err := os.Stat(out)
	if err != nil {
		return nil
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		ii, err := os.Stat(in)
		if err != nil {
			continue
		}
		if os.SameFile(oi, ii) {
			if in == out {
				return fmt.Errorf("%s: %w", out, ErrSameFile)
			}
			return fmt.Errorf("%s: %w (the same file as %s)", out, ErrSameFile, in)
		}
	}
	return nil
}
