//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/cuda/props"
	"github.com/bandsolve/bandsolve/ptx"
)

// ErrClosed reports use of a device after Close.
var ErrClosed = errors.New("cuda: device is closed")

// ErrOutOfMemory is wrapped by allocation failures.
var ErrOutOfMemory = errors.New("cuda: out of device memory")

// Device is one GPU with its CUDA context and the loaded kernels.
//
// CUDA makes a context current per OS thread. Every driver call of the
// device goes through do, which pins the calling goroutine to its thread,
// makes the context current there and holds the device's lock, so calls
// are serialised and never meet an InvalidContext, without handing work to
// another goroutine (a hand-off costs tens of microseconds per call).
type Device struct {
	ordinal int
	props   props.Device

	dev    cu.Device
	mu     sync.Mutex // serialises driver calls; guards what follows
	closed bool
	ctx    cu.CUContext // the device's primary context, retained by Open
	mod    cu.Module
	mods   []cu.Module // ptx.Modules, each loaded on first use (zero until then)
	fns    map[string]cu.Function
	attr   map[string]int // dynamic shared memory limit set per function

	// The persistent work of the device (AddPersistent): pmu guards the
	// set, running counts those running.
	pmu        sync.Mutex
	persistent map[Persistent]struct{}
	running    atomic.Int32

	// values: state other packages attach to the device (Value).
	vmu    sync.Mutex
	values map[any]any
}

// Count returns the number of CUDA devices.
func Count() (int, error) { return cu.NumDevices() }

// Open opens device ordinal (0 is the first GPU): it retains the device's
// primary context, the one the CUDA runtime and libraries built on it
// (CuPy, PyTorch, JAX, cuSPARSE) use, so that memory and streams pass
// between bandsolve and other CUDA code in the process; it loads the
// kernels and reads the device's properties. Close releases the context.
func Open(ordinal int) (*Device, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: no device %d (%d present)", ordinal, n)
	}
	d := &Device{ordinal: ordinal, fns: map[string]cu.Function{}, attr: map[string]int{},
		persistent: map[Persistent]struct{}{}, values: map[any]any{}}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.init(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Device) init() error {
	dev, err := cu.GetDevice(d.ordinal)
	if err != nil {
		return fmt.Errorf("cuda: device %d: %w", d.ordinal, err)
	}
	d.dev = dev
	d.ctx, err = dev.RetainPrimaryCtx()
	if err != nil {
		return fmt.Errorf("cuda: retaining the primary context of device %d: %w", d.ordinal, err)
	}
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		_ = dev.ReleasePrimaryCtx()
		return fmt.Errorf("cuda: making the primary context of device %d current: %w", d.ordinal, err)
	}
	if d.props, err = readProps(dev); err != nil {
		_ = dev.ReleasePrimaryCtx()
		return err
	}
	d.mods = make([]cu.Module, len(ptx.Modules))
	if _, err = d.module(0); err != nil {
		_ = dev.ReleasePrimaryCtx()
		return err
	}
	return nil
}

func readProps(dev cu.Device) (props.Device, error) {
	var p props.Device
	var err error
	if p.Name, err = dev.Name(); err != nil {
		return p, fmt.Errorf("cuda: device name: %w", err)
	}
	if p.TotalMem, err = dev.TotalMem(); err != nil {
		return p, fmt.Errorf("cuda: device memory: %w", err)
	}
	attrs := []struct {
		a cu.DeviceAttribute
		v *int
	}{
		{cu.ComputeCapabilityMajor, &p.Major}, {cu.ComputeCapabilityMinor, &p.Minor},
		{cu.MultiprocessorCount, &p.SMs}, {cu.MaxThreadsPerBlock, &p.MaxThreadsPerBlock},
		{cu.MaxThreadsPerMultiprocessor, &p.MaxThreadsPerSM},
		{cu.MaxSharedMemoryPerBlock, &p.SharedPerBlock},
		{attrSharedPerBlockOptin, &p.SharedPerBlockOptin}, {attrMaxBlocksPerSM, &p.MaxBlocksPerSM},
		{cu.MaxSharedMemoryPerMultiprocessor, &p.SharedPerSM},
		{cu.MaxRegistersPerMultiprocessor, &p.RegsPerSM}, {cu.MaxRegistersPerBlock, &p.RegsPerBlock},
		{cu.WarpSize, &p.WarpSize}, {cu.L2CacheSize, &p.L2Bytes},
		{cu.GlobalMemoryBusWidth, &p.MemBusWidth}, {cu.MemoryClockRate, &p.MemClockKHz},
	}
	for _, a := range attrs {
		if *a.v, err = dev.Attribute(a.a); err != nil {
			return p, fmt.Errorf("cuda: device attribute %v: %w", a.a, err)
		}
	}
	return p, nil
}

// Enqueue runs f with the device's context current on the calling
// goroutine's OS thread and the device's lock held, and returns f's error.
// It is the call for work that queues kernels and copies without waiting
// for persistent work (AddPersistent) to end; f must not call another
// method of the device that takes its lock (Enqueue, Do, Alloc, ...).
// Calls that may wait for all of the device's work go through Do.
func (d *Device) Enqueue(f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("cuda: making the context of device %d current: %w", d.ordinal, err)
	}
	return f()
}

// Do runs f with the device's CUDA context current on the calling
// goroutine's OS thread and the device's lock held, and returns f's error.
// It lets other CUDA code (a peer library, a custom kernel) share the
// device: f must not call Do or any other method of the device that takes
// its lock. Persistent work (AddPersistent) is stopped first, so that f
// may wait for the device's work.
func (d *Device) Do(f func() error) error {
	d.StopPersistent()
	return d.Enqueue(f)
}

// Properties returns what the driver reports of the device.
func (d *Device) Properties() props.Device { return d.props }

// Ordinal returns the device's index.
func (d *Device) Ordinal() int { return d.ordinal }

// Name describes the device, e.g. "cuda:0 NVIDIA H200 (sm_90, 132 SMs)".
func (d *Device) Name() string {
	return fmt.Sprintf("cuda:%d %s (sm_%d%d, %d SMs)", d.ordinal, d.props.Name, d.props.Major, d.props.Minor, d.props.SMs)
}

// MemInfo returns the free and total device memory in bytes.
func (d *Device) MemInfo() (free, total int64, err error) {
	err = d.Enqueue(func() error {
		var e error
		free, total, e = cu.MemInfo()
		return e
	})
	return
}

// Synchronize waits for all work on the device to finish; persistent work
// (AddPersistent) is stopped first.
func (d *Device) Synchronize() error {
	d.StopPersistent()
	return d.Enqueue(func() error { return cu.Synchronize() })
}

// Close unloads the kernels and releases the primary context (it is
// destroyed when no other user holds it). Buffers and plans of the device
// must not be used afterwards; their methods then return ErrClosed.
func (d *Device) Close() error {
	d.StopPersistent()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("cuda: closing device %d: %w", d.ordinal, err)
	}
	for _, m := range d.mods {
		if m != (cu.Module{}) {
			_ = m.Unload()
		}
	}
	return d.dev.ReleasePrimaryCtx()
}

// function returns kernel name from its PTX module (ptx.ModuleOf), the
// module loaded (JIT-compiled) on first use so that programs that do not
// need its kernels do not pay for them (device thread).
func (d *Device) function(name string) (cu.Function, error) {
	if f, ok := d.fns[name]; ok {
		return f, nil
	}
	i, ok := ptx.ModuleOf(name)
	if !ok {
		return cu.Function{}, fmt.Errorf("cuda: no kernel %s in bandsolve's PTX", name)
	}
	mod, err := d.module(i)
	if err != nil {
		return cu.Function{}, err
	}
	f, err := mod.Function(name)
	if err != nil {
		return f, fmt.Errorf("cuda: kernel %s not in the %s PTX module: %w", name, ptx.Modules[i].Name, err)
	}
	d.fns[name] = f
	return f, nil
}

// module returns ptx.Modules[i], loading it on first use (device thread).
func (d *Device) module(i int) (cu.Module, error) {
	if d.mods[i] != (cu.Module{}) {
		return d.mods[i], nil
	}
	m := ptx.Modules[i]
	if d.props.Major < m.MinMajor {
		return cu.Module{}, fmt.Errorf("cuda: the %s kernels need compute capability %d.0, %s has %d.%d", m.Name, m.MinMajor, d.props.Name, d.props.Major, d.props.Minor)
	}
	mod, err := cu.LoadData(m.PTX)
	if err != nil {
		return cu.Module{}, fmt.Errorf("cuda: loading the %s kernels' PTX on %s: %w", m.Name, d.props.Name, err)
	}
	d.mods[i] = mod
	return mod, nil
}

// Persistent is work that keeps running on the device until it is
// stopped, such as a persistent grid serving solves from mapped memory. A
// call that waits for all of the device's work (Do, Synchronize,
// Buffer.Free, Close) stops it first, or it would wait forever.
type Persistent interface {
	// Stop ends the work and waits for it; it must not call Do.
	Stop() error
}

// AddPersistent registers p, to be stopped before calls that wait for
// the device's work; RemovePersistent unregisters it.
func (d *Device) AddPersistent(p Persistent) {
	d.pmu.Lock()
	d.persistent[p] = struct{}{}
	d.pmu.Unlock()
}

// RemovePersistent unregisters p.
func (d *Device) RemovePersistent(p Persistent) {
	d.pmu.Lock()
	delete(d.persistent, p)
	d.pmu.Unlock()
}

// PersistentRunning adds delta (+1 when a persistent work starts, -1 when
// it stops) to the count of those running, which lets StopPersistent and
// SyncLegacyStream return at once when none runs.
func (d *Device) PersistentRunning(delta int32) { d.running.Add(delta) }

// StopPersistent stops every persistent work of the device.
func (d *Device) StopPersistent() {
	if d.running.Load() == 0 {
		return
	}
	d.pmu.Lock()
	ps := make([]Persistent, 0, len(d.persistent))
	for p := range d.persistent {
		ps = append(ps, p)
	}
	d.pmu.Unlock()
	for _, p := range ps {
		_ = p.Stop()
	}
}

// Value returns the value attached to the device under key, made by mk on
// first use (an error from mk is returned and nothing is kept). Packages
// keep per-device state this way (what a device's kernels support, say)
// without global maps; keys should be values of a package's own type.
func (d *Device) Value(key any, mk func() (any, error)) (any, error) {
	d.vmu.Lock()
	defer d.vmu.Unlock()
	if v, ok := d.values[key]; ok {
		return v, nil
	}
	v, err := mk()
	if err != nil {
		return nil, err
	}
	d.values[key] = v
	return v, nil
}
