//go:build cuda

package nccl

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda"
)

// ErrDestroyed is returned by the calls of a communicator after Destroy
// or Abort.
var ErrDestroyed = errors.New("nccl: communicator is destroyed")

// Comm is one rank's NCCL communicator, bound to the rank's device. Its
// calls run on the device's thread with its context current
// (cuda.Device.Enqueue): calls of communicators on one device are never
// issued in parallel, as NCCL requires. A collective queues its work on
// the stream it is given and returns; the data is ready when that
// stream has done it.
type Comm struct {
	lib    *Lib
	dev    *cuda.Device
	h      unsafe.Pointer // ncclComm_t
	rank   int
	nranks int
}

// CommInitRank makes rank's communicator of a job of nranks ranks that
// share id (ncclCommInitRank), on dev: it runs with dev's context
// current, and returns once every rank of the job has called it, so the
// ranks must call it concurrently (one process each, or one goroutine
// each). Persistent work on dev is stopped first (cuda.Device.Do).
func (l *Lib) CommInitRank(dev *cuda.Device, nranks int, id UniqueID, rank int) (*Comm, error) {
	if err := checkRank(rank, nranks); err != nil {
		return nil, err
	}
	c := &Comm{lib: l, dev: dev, rank: rank, nranks: nranks}
	err := dev.Do(func() error {
		var err error
		c.h, err = l.initRank(nranks, &id, rank)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nccl: rank %d of %d on %s: %w", rank, nranks, dev.Name(), err)
	}
	return c, nil
}

// CommInitAll makes the communicators of a job whose ranks are the
// devices of one process, rank i on devs[i] (ncclCommInitAll: no unique
// id, no bootstrap). Drive them from one goroutine inside Lib.Group, or
// from one goroutine each; destroy them with DestroyAll.
func (l *Lib) CommInitAll(devs ...*cuda.Device) ([]*Comm, error) {
	if len(devs) == 0 {
		return nil, errors.New("nccl: CommInitAll needs at least one device")
	}
	ordinals := make([]int, len(devs))
	seen := map[int]bool{}
	for i, d := range devs {
		if d == nil {
			return nil, fmt.Errorf("nccl: device %d of CommInitAll is nil", i)
		}
		if seen[d.Ordinal()] {
			return nil, fmt.Errorf("nccl: GPU %d named twice in CommInitAll (NCCL takes one rank a GPU)", d.Ordinal())
		}
		seen[d.Ordinal()] = true
		ordinals[i] = d.Ordinal()
	}
	var hs []unsafe.Pointer
	// NCCL sets each device current itself; the devices' threads are
	// held so that nothing else runs on them meanwhile.
	err := doAll(devs, func() error {
		var err error
		hs, err = l.initAll(ordinals)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nccl: communicators of GPUs %v: %w", ordinals, err)
	}
	comms := make([]*Comm, len(devs))
	for i, d := range devs {
		comms[i] = &Comm{lib: l, dev: d, h: hs[i], rank: i, nranks: len(devs)}
	}
	return comms, nil
}

// doAll runs f with every device's lock held (cuda.Device.Do, nested),
// the first device's context current.
func doAll(devs []*cuda.Device, f func() error) error {
	if len(devs) == 0 {
		return f()
	}
	last := len(devs) - 1
	return devs[last].Do(func() error { return doAll(devs[:last], f) })
}

// Device returns the communicator's device.
func (c *Comm) Device() *cuda.Device { return c.dev }

// Rank returns the rank the communicator was made for; UserRank asks
// NCCL.
func (c *Comm) Rank() int { return c.rank }

// NRanks returns the number of ranks the communicator was made for;
// Count asks NCCL.
func (c *Comm) NRanks() int { return c.nranks }

// call runs f with the handle on the device's thread.
func (c *Comm) call(f func(h unsafe.Pointer) error) error {
	if c.h == nil {
		return ErrDestroyed
	}
	return c.dev.Enqueue(func() error { return f(c.h) })
}

// query returns the int that f (named op) gives of the communicator.
func (c *Comm) query(op string, f unsafe.Pointer) (int, error) {
	var v int
	err := c.call(func(h unsafe.Pointer) error {
		var err error
		v, err = c.lib.commInt(op, f, h)
		return err
	})
	return v, err
}

// Count returns the number of ranks of the communicator (ncclCommCount).
func (c *Comm) Count() (int, error) { return c.query("ncclCommCount", c.lib.commCount) }

// UserRank returns the rank of the communicator (ncclCommUserRank).
func (c *Comm) UserRank() (int, error) { return c.query("ncclCommUserRank", c.lib.commUserRank) }

// CuDevice returns the CUDA ordinal of the communicator's device
// (ncclCommCuDevice).
func (c *Comm) CuDevice() (int, error) { return c.query("ncclCommCuDevice", c.lib.commCuDevice) }

// AsyncError returns the error NCCL recorded for the communicator's
// work in flight (ncclCommGetAsyncError): nil while all is well, an
// *Error with Result RemoteError when a peer failed, say. A rank that
// gets one should Abort.
func (c *Comm) AsyncError() error {
	r, err := c.query("ncclCommGetAsyncError", c.lib.commGetAsyncError)
	if err != nil || r == 0 || Result(r) == InProgress {
		return err
	}
	return &Error{Op: "ncclCommGetAsyncError", Result: Result(r)}
}

// stream returns s's CUstream handle for NCCL.
func stream(s cu.Stream) unsafe.Pointer { return unsafe.Pointer(s.C()) }

// checkCall checks the common arguments of a call.
func checkCall(op string, count int, dt DataType, ptrs ...cu.DevicePtr) error {
	if count < 0 {
		return fmt.Errorf("nccl: %s of %d elements", op, count)
	}
	if dt.Size() == 0 {
		return fmt.Errorf("nccl: %s of %v elements: the package moves %v and %v", op, dt, Float32, Float64)
	}
	for _, p := range ptrs {
		if p == 0 && count > 0 {
			return fmt.Errorf("nccl: %s with a null device pointer", op)
		}
	}
	return nil
}

// AllGather queues on stream s the gather of every rank's count
// elements at send into recv, which receives count·NRanks elements,
// rank r's at recv + r·count (ncclAllGather). send may be recv's own
// slot of rank r (in place).
func (c *Comm) AllGather(send, recv cu.DevicePtr, count int, dt DataType, s cu.Stream) error {
	if err := checkCall("ncclAllGather", count, dt, send, recv); err != nil {
		return err
	}
	return c.wrap(c.call(func(h unsafe.Pointer) error {
		return c.lib.allGatherRaw(uintptr(send), uintptr(recv), count, dt, h, stream(s))
	}))
}

// AllReduce queues on stream s the reduction by op of the ranks' count
// elements at send, element by element, into every rank's recv
// (ncclAllReduce); send may equal recv.
func (c *Comm) AllReduce(send, recv cu.DevicePtr, count int, dt DataType, op RedOp, s cu.Stream) error {
	if err := checkCall("ncclAllReduce", count, dt, send, recv); err != nil {
		return err
	}
	return c.wrap(c.call(func(h unsafe.Pointer) error {
		return c.lib.allReduceRaw(uintptr(send), uintptr(recv), count, dt, op, h, stream(s))
	}))
}

// Send queues on stream s the sending of count elements at buf to rank
// peer (ncclSend), which must queue the matching Recv. Calls to several
// peers, or a Send and a Recv of one goroutine (a rank and itself
// included), go in one Lib.Group.
func (c *Comm) Send(buf cu.DevicePtr, count int, dt DataType, peer int, s cu.Stream) error {
	if err := checkCall("ncclSend", count, dt, buf); err != nil {
		return err
	}
	return c.wrap(c.call(func(h unsafe.Pointer) error {
		return c.lib.sendRaw(uintptr(buf), count, dt, peer, h, stream(s))
	}))
}

// Recv queues on stream s the receiving of count elements from rank
// peer into buf (ncclRecv); see Send.
func (c *Comm) Recv(buf cu.DevicePtr, count int, dt DataType, peer int, s cu.Stream) error {
	if err := checkCall("ncclRecv", count, dt, buf); err != nil {
		return err
	}
	return c.wrap(c.call(func(h unsafe.Pointer) error {
		return c.lib.recvRaw(uintptr(buf), count, dt, peer, h, stream(s))
	}))
}

// wrap names the rank and device in a call's error.
func (c *Comm) wrap(err error) error {
	if err == nil || errors.Is(err, ErrDestroyed) {
		return err
	}
	return fmt.Errorf("nccl: rank %d of %d on %s: %w", c.rank, c.nranks, c.dev.Name(), err)
}

// Destroy frees the communicator (ncclCommDestroy) once its queued work
// is done. Recent NCCL may wait there for the other ranks of the host,
// so the communicators of one process are destroyed together
// (DestroyAll). Destroy must not run concurrently with other calls of
// the communicator; afterwards they return ErrDestroyed, and a second
// Destroy does nothing.
func (c *Comm) Destroy() error {
	return c.end(c.lib.destroy)
}

// Abort ends the communicator at once (ncclCommAbort), dropping its
// queued work: for a rank whose peers failed, where Destroy could wait
// for ever.
func (c *Comm) Abort() error {
	return c.end(c.lib.abort)
}

func (c *Comm) end(f func(unsafe.Pointer) error) error {
	if c.h == nil {
		return nil
	}
	err := c.dev.Do(func() error { return f(c.h) })
	c.h = nil
	return c.wrap(err)
}

// DestroyAll destroys communicators of one process (those of
// CommInitAll, say) concurrently, each on its device's thread in a
// goroutine of its own, and returns when all are; the errors are joined.
func DestroyAll(comms []*Comm) error {
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for i, c := range comms {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Destroy()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
