package nccl

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionFromCode(t *testing.T) {
	assert.Equal(t, Version{2, 21, 5, 22105}, VersionFromCode(22105))
	assert.Equal(t, "2.21.5", VersionFromCode(22105).String())
	assert.Equal(t, Version{2, 9, 6, 20906}, VersionFromCode(20906))
	// Before 2.9: major·1000.
	assert.Equal(t, Version{2, 8, 4, 2804}, VersionFromCode(2804))
}

func TestDataTypes(t *testing.T) {
	type meters float64
	type celsius float32
	assert.Equal(t, Float32, TypeOf[float32]())
	assert.Equal(t, Float64, TypeOf[float64]())
	assert.Equal(t, Float64, TypeOf[meters]())
	assert.Equal(t, Float32, TypeOf[celsius]())
	assert.Equal(t, 4, Float32.Size())
	assert.Equal(t, 8, Float64.Size())
	assert.Equal(t, 0, DataType(2).Size())
	assert.Equal(t, "ncclFloat64", Float64.String())
	assert.Equal(t, "ncclDataType_t(2)", DataType(2).String())
	assert.Equal(t, "ncclSum", Sum.String())
	assert.Equal(t, "ncclMin", Min.String())
	assert.Equal(t, "ncclRedOp_t(9)", RedOp(9).String())
}

func TestError(t *testing.T) {
	assert.Equal(t, "ncclInvalidUsage", InvalidUsage.String())
	assert.Equal(t, "ncclResult_t(42)", Result(42).String())
	e := &Error{Op: "ncclAllGather", Result: InvalidArgument, Text: "invalid argument (run with NCCL_DEBUG=WARN for details)",
		Detail: "AllGather: invalid sendbuff argument\n"}
	assert.Equal(t, "nccl: ncclAllGather: ncclInvalidArgument (4): invalid argument (run with NCCL_DEBUG=WARN for details): AllGather: invalid sendbuff argument", e.Error())
	e = &Error{Op: "ncclCommInitRank", Result: SystemError}
	assert.Equal(t, "nccl: ncclCommInitRank: ncclSystemError (2) (NCCL_DEBUG=WARN prints NCCL's reason)", e.Error())
	e.Text = "unhandled system error (run with NCCL_DEBUG=INFO for details)"
	assert.Equal(t, "nccl: ncclCommInitRank: ncclSystemError (2): unhandled system error (run with NCCL_DEBUG=INFO for details)", e.Error())
}
