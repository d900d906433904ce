// Package npy reads and writes NumPy .npy files holding arrays of
// float32, float64, complex64 or complex128 values.
//
// # File format
//
// A .npy file (NumPy Enhancement Proposal 1, "format.rst") starts with a
// preamble followed by the raw array data:
//
//   - the magic string "\x93NUMPY";
//   - one byte each for the major and minor format version (1.0, 2.0 or 3.0);
//   - the length of the header text as a little-endian uint16 (version 1.0)
//     or uint32 (versions 2.0 and 3.0);
//   - the header text: a Python dict literal with exactly the keys 'descr'
//     (the dtype, e.g. '<f8'), 'fortran_order' (True or False) and 'shape'
//     (a tuple of integers), padded with spaces and terminated by '\n' so
//     that the whole preamble is a multiple of 64 bytes long. Versions 1.0
//     and 2.0 encode the header in latin-1, version 3.0 in UTF-8.
//
// The data follows immediately, in C (row-major) order, or in Fortran
// (column-major) order when 'fortran_order' is True.
//
// # Reading
//
// [Read] and [ReadFile] decode a file whose dtype matches the requested
// element type exactly ('<f4' or '>f4' for float32, '<f8' or '>f8' for
// float64, '<c8' or '>c8' for complex64, '<c16' or '>c16' for
// complex128); any other dtype is reported as an error wrapping
// [ErrDType].
// [ReadAny] accepts every supported dtype (little- or big-endian floats
// f4/f8, signed integers i1/i2/i4/i8 and unsigned integers u1/u2/u4/u8)
// and converts the values to float64; integers of magnitude above 2^53 may
// lose precision in that conversion; complex files (c8, c16) it refuses.
// [ReadAs] does the same into float32 or float64, as the caller chooses,
// or into complex64 or complex128, which take every dtype (real values
// with a zero imaginary part).
//
// Arrays stored in Fortran order are transposed into C order, so the
// returned data is always row-major. A scalar (shape ()) is returned with
// an empty, non-nil Shape and one element.
//
// The header is parsed by a small, strict parser for the subset of Python
// literal syntax that NumPy writes (strings in single or double quotes,
// integers, True/False/None, tuples and lists, trailing commas allowed).
// Keys may appear in any order; unknown, duplicate or missing keys are
// errors. Headers longer than 1 MiB are rejected.
//
// The header is never trusted for memory allocation. When the amount of
// remaining input is known (a regular file, *bytes.Reader, *bytes.Buffer
// or *strings.Reader), a header that claims more data than the input holds
// fails with [ErrTruncated] before any data is read. The array the header
// declares is then checked against the memory the process can have
// (physical memory, cgroup limit, RLIMIT_AS) and refused with an error
// wrapping [ErrMemory] that names the sizes; a stream of unknown length
// is read in bounded chunks, so memory grows only as bytes arrive.
// [ReadHeader] and [ReadFileHeader] read and check the header alone, so
// that a caller can look at shapes and dtypes (and choose the element
// type, [ReadAs]) before reading any data.
//
// # Writing
//
// [WriteFile] is atomic: it writes to a temporary file in the target's
// directory, flushes it to disk and renames it over the target only when
// the whole write succeeded, so a failure (a full disk) never leaves a
// partial file or destroys an existing one.
//
// [Write] and [WriteFile] produce format version 1.0 files with dtype
// '<f4', '<f8', '<c8' or '<c16' and fortran_order False, byte-for-byte
// identical to what numpy.save writes for the same array (including
// NumPy's spare header
// space for growing the first axis). Only a header too long for version
// 1.0 (which needs thousands of dimensions) is written as version 2.0.
//
// # Errors
//
// Errors wrap one of the sentinel errors [ErrNotNPY], [ErrHeader],
// [ErrDType] or [ErrTruncated] where applicable, so callers can test them
// with errors.Is; the message says what exactly was wrong.
package npy
