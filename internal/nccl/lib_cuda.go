//go:build cuda

package nccl

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

// The NCCL types of the calls below, declared from nccl.h's public
// definitions so that no NCCL header is needed to build: ncclResult_t,
// ncclDataType_t and ncclRedOp_t are enums of int size; ncclComm_t is a
// pointer to an opaque struct and cudaStream_t a pointer (a CUstream);
// ncclUniqueId is a struct of NCCL_UNIQUE_ID_BYTES = 128 chars, which
// ncclCommInitRank takes by value. Device pointers travel from Go as
// uintptr_t.
typedef struct { char internal[128]; } nc_unique_id;

typedef int (*nc_get_version_t)(int *version);
typedef int (*nc_get_unique_id_t)(nc_unique_id *id);
typedef int (*nc_comm_init_rank_t)(void **comm, int nranks, nc_unique_id id, int rank);
typedef int (*nc_comm_init_all_t)(void **comms, int ndev, const int *devlist);
typedef int (*nc_comm_t)(void *comm);                  // ncclCommDestroy, ncclCommAbort
typedef int (*nc_comm_int_t)(void *comm, int *out);    // ncclCommCount, ncclCommUserRank, ncclCommCuDevice, ncclCommGetAsyncError
typedef int (*nc_all_gather_t)(const void *send, void *recv, size_t count, int dtype, void *comm, void *stream);
typedef int (*nc_all_reduce_t)(const void *send, void *recv, size_t count, int dtype, int op, void *comm, void *stream);
typedef int (*nc_send_t)(const void *buf, size_t count, int dtype, int peer, void *comm, void *stream);
typedef int (*nc_recv_t)(void *buf, size_t count, int dtype, int peer, void *comm, void *stream);
typedef int (*nc_void_t)(void);                         // ncclGroupStart, ncclGroupEnd
typedef const char *(*nc_error_string_t)(int result);
typedef const char *(*nc_last_error_t)(void *comm);

static int nc_get_version(void *f, int *v) { return ((nc_get_version_t)f)(v); }
static int nc_get_unique_id(void *f, void *id) { return ((nc_get_unique_id_t)f)((nc_unique_id *)id); }
static int nc_comm_init_rank(void *f, void **comm, int nranks, const void *id, int rank) {
	nc_unique_id u;
	memcpy(&u, id, sizeof u);
	return ((nc_comm_init_rank_t)f)(comm, nranks, u, rank);
}
static int nc_comm_init_all(void *f, void **comms, int ndev, const int *devs) { return ((nc_comm_init_all_t)f)(comms, ndev, devs); }
static int nc_comm(void *f, void *comm) { return ((nc_comm_t)f)(comm); }
static int nc_comm_int(void *f, void *comm, int *out) { return ((nc_comm_int_t)f)(comm, out); }
static int nc_all_gather(void *f, uintptr_t send, uintptr_t recv, size_t count, int dtype, void *comm, void *stream) {
	return ((nc_all_gather_t)f)((const void *)send, (void *)recv, count, dtype, comm, stream);
}
static int nc_all_reduce(void *f, uintptr_t send, uintptr_t recv, size_t count, int dtype, int op, void *comm, void *stream) {
	return ((nc_all_reduce_t)f)((const void *)send, (void *)recv, count, dtype, op, comm, stream);
}
static int nc_send(void *f, uintptr_t buf, size_t count, int dtype, int peer, void *comm, void *stream) {
	return ((nc_send_t)f)((const void *)buf, count, dtype, peer, comm, stream);
}
static int nc_recv(void *f, uintptr_t buf, size_t count, int dtype, int peer, void *comm, void *stream) {
	return ((nc_recv_t)f)((void *)buf, count, dtype, peer, comm, stream);
}
static int nc_void(void *f) { return ((nc_void_t)f)(); }
static const char *nc_error_string(void *f, int r) { return ((nc_error_string_t)f)(r); }
static const char *nc_last_error(void *f, void *comm) { return ((nc_last_error_t)f)(comm); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// LibVar names the variable that gives libnccl's path, tried before the
// sonames.
const LibVar = "BANDSOLVE_NCCL_LIB"

// Lib is a loaded libnccl with its entry points resolved.
type Lib struct {
	path    string
	version Version

	getVersion, getUniqueID, commInitRank, commInitAll     unsafe.Pointer
	commDestroy, commAbort, commCount, commUserRank        unsafe.Pointer
	commCuDevice, commGetAsyncError                        unsafe.Pointer
	allGather, allReduce, send, recv, groupStart, groupEnd unsafe.Pointer
	getErrorString                                         unsafe.Pointer
	getLastError                                           unsafe.Pointer // NCCL ≥ 2.13; nil before
}

// symbols maps the entry points the package needs (all but
// ncclGetLastError: NCCL 2.7 or later) to the fields of l.
func (l *Lib) symbols() map[string]*unsafe.Pointer {
	return map[string]*unsafe.Pointer{
		"ncclGetVersion": &l.getVersion, "ncclGetUniqueId": &l.getUniqueID,
		"ncclCommInitRank": &l.commInitRank, "ncclCommInitAll": &l.commInitAll,
		"ncclCommDestroy": &l.commDestroy, "ncclCommAbort": &l.commAbort,
		"ncclCommCount": &l.commCount, "ncclCommUserRank": &l.commUserRank,
		"ncclCommCuDevice": &l.commCuDevice, "ncclCommGetAsyncError": &l.commGetAsyncError,
		"ncclAllGather": &l.allGather, "ncclAllReduce": &l.allReduce,
		"ncclSend": &l.send, "ncclRecv": &l.recv,
		"ncclGroupStart": &l.groupStart, "ncclGroupEnd": &l.groupEnd,
		"ncclGetErrorString": &l.getErrorString,
	}
}

// candidates lists where Load looks for libnccl: $BANDSOLVE_NCCL_LIB,
// the sonames the dynamic loader finds (LD_LIBRARY_PATH, its cache),
// then the NVIDIA wheel of Python environments (nvidia/nccl/lib).
func candidates() []string {
	var out []string
	if p := os.Getenv(LibVar); p != "" {
		out = append(out, p)
	}
	out = append(out, "libnccl.so.2", "libnccl.so")
	var roots []string
	for _, r := range []string{"/usr/lib", "/usr/local/lib", "/opt/conda/lib"} {
		roots = append(roots, r+"/python3*/*-packages")
	}
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := os.Getenv(v); p != "" {
			roots = append(roots, p+"/lib/python3*/site-packages")
		}
	}
	for _, r := range roots {
		ms, _ := filepath.Glob(r + "/nvidia/nccl/lib/libnccl.so.2")
		out = append(out, ms...)
	}
	return out
}

var loaded = sync.OnceValues(load)

// Load opens libnccl with dlopen, once a process: $BANDSOLVE_NCCL_LIB
// when set, else libnccl.so.2, else libnccl.so (where the dynamic loader
// finds them), else the copy of a Python environment's NVIDIA wheel. It
// resolves the entry points the package uses (NCCL 2.7 or later). When
// no candidate loads with all of them, the error wraps ErrUnavailable
// and says what each gave.
func Load() (*Lib, error) { return loaded() }

func load() (*Lib, error) { return loadFrom(candidates()) }

// loadFrom returns the first of paths that loads with every entry point.
func loadFrom(paths []string) (*Lib, error) {
	var tried []string
	for _, path := range paths {
		cpath := C.CString(path)
		h := C.dlopen(cpath, C.RTLD_NOW|C.RTLD_LOCAL)
		C.free(unsafe.Pointer(cpath))
		if h == nil {
			tried = append(tried, dlerror(path))
			continue
		}
		l := &Lib{path: path}
		var missing []string
		for name, p := range l.symbols() {
			if *p = sym(h, name); *p == nil {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			tried = append(tried, fmt.Sprintf("%s lacks %s", path, strings.Join(missing, ", ")))
			C.dlclose(h)
			continue
		}
		l.getLastError = sym(h, "ncclGetLastError")
		var v C.int
		if err := l.check("ncclGetVersion", C.nc_get_version(l.getVersion, &v)); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", path, err))
			C.dlclose(h)
			continue
		}
		l.version = VersionFromCode(int(v))
		// The handle stays open for the life of the process.
		return l, nil
	}
	return nil, fmt.Errorf("%w (tried %s)", ErrUnavailable, strings.Join(tried, "; "))
}

func sym(h unsafe.Pointer, name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.dlsym(h, cname)
}

// dlerror returns dlopen's message for path (which names the file).
func dlerror(path string) string {
	if s := C.dlerror(); s != nil {
		return C.GoString(s)
	}
	return path + ": cannot be loaded"
}

// Path returns the file Load opened.
func (l *Lib) Path() string { return l.path }

// Version returns the library's version (ncclGetVersion).
func (l *Lib) Version() Version { return l.version }

// check turns a ncclResult_t into an *Error (nil for ncclSuccess), with
// the library's text for the code and its last error message.
func (l *Lib) check(op string, r C.int) error {
	if r == 0 {
		return nil
	}
	e := &Error{Op: op, Result: Result(r)}
	if s := C.nc_error_string(l.getErrorString, r); s != nil {
		e.Text = C.GoString(s)
	}
	if l.getLastError != nil {
		if s := C.nc_last_error(l.getLastError, nil); s != nil {
			e.Detail = C.GoString(s)
		}
	}
	return e
}

// GetUniqueID makes a new unique id (ncclGetUniqueId), on rank 0, to be
// handed to every rank of the job (Bootstrap). It sets up NCCL's
// bootstrap network; call it with rank 0's device current (inside
// cuda.Device.Enqueue) so that NCCL's first use of the CUDA runtime
// finds that device's context and opens no other.
func (l *Lib) GetUniqueID() (UniqueID, error) {
	var id UniqueID
	if err := l.check("ncclGetUniqueId", C.nc_get_unique_id(l.getUniqueID, unsafe.Pointer(&id[0]))); err != nil {
		return UniqueID{}, err
	}
	return id, nil
}

// GroupStart starts a group of NCCL calls (ncclGroupStart): the calls
// up to the matching GroupEnd are queued together. NCCL keeps the group
// per OS thread: the goroutine must stay on its thread from GroupStart
// to GroupEnd (runtime.LockOSThread), which Group does.
func (l *Lib) GroupStart() error { return l.check("ncclGroupStart", C.nc_void(l.groupStart)) }

// GroupEnd ends a group (ncclGroupEnd): it queues the group's calls on
// their streams and returns; their work is done when the streams are.
func (l *Lib) GroupEnd() error { return l.check("ncclGroupEnd", C.nc_void(l.groupEnd)) }

// Group runs f between GroupStart and GroupEnd with the goroutine locked
// to its OS thread. It is how one goroutine drives several ranks: the
// collectives of communicators of CommInitAll, or a Send and the Recv
// that matches it (to the same rank included). GroupEnd runs even when f
// fails; the errors are joined.
func (l *Lib) Group(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := l.GroupStart(); err != nil {
		return err
	}
	ferr := f()
	return errors.Join(ferr, l.GroupEnd())
}

// The calls on a communicator handle, for comm_cuda.go. Device pointers
// are uintptr; stream is a CUstream (nil: the legacy default stream).

func (l *Lib) initRank(nranks int, id *UniqueID, rank int) (unsafe.Pointer, error) {
	var h unsafe.Pointer
	err := l.check("ncclCommInitRank", C.nc_comm_init_rank(l.commInitRank, &h, C.int(nranks), unsafe.Pointer(&id[0]), C.int(rank)))
	return h, err
}

func (l *Lib) initAll(ordinals []int) ([]unsafe.Pointer, error) {
	devs := make([]C.int, len(ordinals))
	for i, o := range ordinals {
		devs[i] = C.int(o)
	}
	hs := make([]unsafe.Pointer, len(ordinals))
	err := l.check("ncclCommInitAll", C.nc_comm_init_all(l.commInitAll, &hs[0], C.int(len(devs)), &devs[0]))
	return hs, err
}

func (l *Lib) destroy(h unsafe.Pointer) error {
	return l.check("ncclCommDestroy", C.nc_comm(l.commDestroy, h))
}

func (l *Lib) abort(h unsafe.Pointer) error {
	return l.check("ncclCommAbort", C.nc_comm(l.commAbort, h))
}

// commInt calls f, one of the entry points that return an int of a
// communicator (ncclCommCount, ncclCommUserRank, ncclCommCuDevice,
// ncclCommGetAsyncError), named op.
func (l *Lib) commInt(op string, f, h unsafe.Pointer) (int, error) {
	var v C.int
	err := l.check(op, C.nc_comm_int(f, h, &v))
	return int(v), err
}

func (l *Lib) allGatherRaw(send, recv uintptr, count int, dt DataType, h, stream unsafe.Pointer) error {
	return l.check("ncclAllGather", C.nc_all_gather(l.allGather, C.uintptr_t(send), C.uintptr_t(recv), C.size_t(count), C.int(dt), h, stream))
}

func (l *Lib) allReduceRaw(send, recv uintptr, count int, dt DataType, op RedOp, h, stream unsafe.Pointer) error {
	return l.check("ncclAllReduce", C.nc_all_reduce(l.allReduce, C.uintptr_t(send), C.uintptr_t(recv), C.size_t(count), C.int(dt), C.int(op), h, stream))
}

func (l *Lib) sendRaw(buf uintptr, count int, dt DataType, peer int, h, stream unsafe.Pointer) error {
	return l.check("ncclSend", C.nc_send(l.send, C.uintptr_t(buf), C.size_t(count), C.int(dt), C.int(peer), h, stream))
}

func (l *Lib) recvRaw(buf uintptr, count int, dt DataType, peer int, h, stream unsafe.Pointer) error {
	return l.check("ncclRecv", C.nc_recv(l.recv, C.uintptr_t(buf), C.size_t(count), C.int(dt), C.int(peer), h, stream))
}
