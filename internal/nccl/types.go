package nccl

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// ErrUnavailable is wrapped by the error of Load when libnccl cannot be
// loaded or lacks an entry point the package needs.
var ErrUnavailable = errors.New("nccl: libnccl is not available")

// UniqueIDBytes is the size of NCCL's unique id (NCCL_UNIQUE_ID_BYTES in
// nccl.h).
const UniqueIDBytes = 128

// UniqueID is NCCL's ncclUniqueId: the opaque 128 bytes that rank 0 makes
// (Lib.GetUniqueID) and every rank of the job passes to CommInitRank. It
// names rank 0's bootstrap address inside NCCL; Bootstrap hands it from
// rank 0 to the others.
type UniqueID [UniqueIDBytes]byte

// DataType is NCCL's ncclDataType_t, the element type of a call. The
// values are those of nccl.h (ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2,
// ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5, ncclFloat16 = 6,
// ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9); the package uses
// the two floating-point types of the project's arrays.
type DataType int32

// The element types of the project's device arrays.
const (
	Float32 DataType = 7 // ncclFloat32 (ncclFloat)
	Float64 DataType = 8 // ncclFloat64 (ncclDouble)
)

// Float constrains the element types of the calls.
type Float interface{ ~float32 | ~float64 }

// TypeOf returns the DataType of T.
func TypeOf[T Float]() DataType {
	var v T
	if unsafe.Sizeof(v) == 4 {
		return Float32
	}
	return Float64
}

// Size returns the bytes of one element, 0 for a type the package does
// not use.
func (d DataType) Size() int {
	switch d {
	case Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// String returns the C name of the type, e.g. "ncclFloat32".
func (d DataType) String() string {
	switch d {
	case Float32:
		return "ncclFloat32"
	case Float64:
		return "ncclFloat64"
	}
	return fmt.Sprintf("ncclDataType_t(%d)", int32(d))
}

// RedOp is NCCL's ncclRedOp_t, the reduction of AllReduce. The values are
// those of nccl.h (ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3).
type RedOp int32

// The reductions.
const (
	Sum  RedOp = 0 // ncclSum
	Prod RedOp = 1 // ncclProd
	Max  RedOp = 2 // ncclMax
	Min  RedOp = 3 // ncclMin
)

// String returns the C name of the reduction, e.g. "ncclSum".
func (o RedOp) String() string {
	switch o {
	case Sum:
		return "ncclSum"
	case Prod:
		return "ncclProd"
	case Max:
		return "ncclMax"
	case Min:
		return "ncclMin"
	}
	return fmt.Sprintf("ncclRedOp_t(%d)", int32(o))
}

// Result is NCCL's ncclResult_t, the status every call returns. The
// values are those of nccl.h.
type Result int32

// The results NCCL documents.
const (
	Success            Result = 0 // ncclSuccess
	UnhandledCudaError Result = 1 // ncclUnhandledCudaError: a CUDA call failed
	SystemError        Result = 2 // ncclSystemError: a system call failed
	InternalError      Result = 3 // ncclInternalError: an internal check failed
	InvalidArgument    Result = 4 // ncclInvalidArgument: an argument has an invalid value
	InvalidUsage       Result = 5 // ncclInvalidUsage: the call is used wrongly
	RemoteError        Result = 6 // ncclRemoteError: a remote rank failed or the network did (NCCL ≥ 2.13)
	InProgress         Result = 7 // ncclInProgress: a non-blocking call is still running (NCCL ≥ 2.14)
)

var resultNames = [...]string{"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
	"ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"}

// String returns the C name of the result, e.g. "ncclInvalidArgument".
func (r Result) String() string {
	if r >= 0 && int(r) < len(resultNames) {
		return resultNames[r]
	}
	return fmt.Sprintf("ncclResult_t(%d)", int32(r))
}

// Error is a failed NCCL call.
type Error struct {
	Op     string // the entry point, e.g. "ncclAllGather"
	Result Result // what it returned
	Text   string // ncclGetErrorString of Result ("" when not known)
	// Detail is ncclGetLastError: the library's last message (NCCL ≥
	// 2.13), which NCCL documents may be of an earlier call.
	Detail string
}

// Error returns e.g. "nccl: ncclAllGather: ncclInvalidArgument (4):
// invalid argument: <detail>", with a hint to set NCCL_DEBUG=WARN when
// the library gave neither a detail nor that hint.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nccl: %s: %v (%d)", e.Op, e.Result, int32(e.Result))
	if e.Text != "" {
		b.WriteString(": " + e.Text)
	}
	if d := strings.TrimSpace(e.Detail); d != "" {
		b.WriteString(": " + d)
	} else if !strings.Contains(e.Text, "NCCL_DEBUG") {
		b.WriteString(" (NCCL_DEBUG=WARN prints NCCL's reason)")
	}
	return b.String()
}

// Version is the version of a loaded libnccl.
type Version struct {
	Major, Minor, Patch int
	Code                int // what ncclGetVersion returned
}

// VersionFromCode splits ncclGetVersion's code: major·10000 + minor·100 +
// patch from NCCL 2.9 on, major·1000 + minor·100 + patch before.
func VersionFromCode(code int) Version {
	div := 1000
	if code >= 10000 {
		div = 10000
	}
	return Version{Major: code / div, Minor: code % div / 100, Patch: code % 100, Code: code}
}

// String returns "major.minor.patch".
func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }
