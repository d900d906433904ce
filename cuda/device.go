//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"gorgonia.org/cu"

	"github.com/bandsolve/bandsolve/ptx"
	"github.com/bandsolve/bandsolve/tuning"
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
	props   tuning.Device

	mu     sync.Mutex // serialises driver calls; guards what follows
	closed bool
	ctx    cu.CUContext
	mod    cu.Module
	bmod   cu.Module // the banded kernels (ptx.Banded), loaded on first use
	bload  bool
	cmod   cu.Module // the cluster kernels (ptx.Cluster), loaded on first use
	cload  bool
	// clusters: the cluster sizes the device runs, per precision (f64).
	clusters map[bool]clusterInfo
	fns      map[string]cu.Function
	attr     map[string]int // dynamic shared memory limit set per function
	gate     *gate          // TimeEvents' gate, made on first use
	// hostPaced: Plan.Time without its gate (SetHostPaced).
	hostPaced atomic.Bool

	// The resident grids of plans (resident.go): resMu guards the set,
	// resRunning counts those running.
	resMu      sync.Mutex
	residents  map[*resident]struct{}
	resRunning atomic.Int32
}

// Count returns the number of CUDA devices.
func Count() (int, error) { return cu.NumDevices() }

// Open creates a context on device ordinal (0 is the first GPU), loads the
// kernels and reads the device's properties.
func Open(ordinal int) (*Device, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: no device %d (%d present)", ordinal, n)
	}
	d := &Device{ordinal: ordinal, fns: map[string]cu.Function{}, attr: map[string]int{}, clusters: map[bool]clusterInfo{}}
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
	d.ctx, err = dev.MakeContext(cu.SchedAuto)
	if err != nil {
		return fmt.Errorf("cuda: creating context on device %d: %w", d.ordinal, err)
	}
	if d.props, err = readProps(dev); err != nil {
		_ = d.ctx.Destroy()
		return err
	}
	d.mod, err = cu.LoadData(ptx.Tridiag)
	if err != nil {
		_ = d.ctx.Destroy()
		return fmt.Errorf("cuda: loading the tridiagonal kernels' PTX on %s: %w", d.props.Name, err)
	}
	return nil
}

func readProps(dev cu.Device) (tuning.Device, error) {
	var p tuning.Device
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

// do runs f with the device's context current on the calling goroutine's
// OS thread and the device's lock held, and returns f's error.
func (d *Device) do(f func() error) error {
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
// device: f must not call Do or any other method of the device. Resident
// grids (Plan.SetResident) are stopped first, so that f may wait for the
// device's work.
func (d *Device) Do(f func() error) error {
	d.stopResidents()
	return d.do(f)
}

// Properties returns what the driver reports of the device.
func (d *Device) Properties() tuning.Device { return d.props }

// Ordinal returns the device's index.
func (d *Device) Ordinal() int { return d.ordinal }

// Name describes the device, e.g. "cuda:0 NVIDIA H200 (sm_90, 132 SMs)".
func (d *Device) Name() string {
	return fmt.Sprintf("cuda:%d %s (sm_%d%d, %d SMs)", d.ordinal, d.props.Name, d.props.Major, d.props.Minor, d.props.SMs)
}

// MemInfo returns the free and total device memory in bytes.
func (d *Device) MemInfo() (free, total int64, err error) {
	err = d.do(func() error {
		var e error
		free, total, e = cu.MemInfo()
		return e
	})
	return
}

// Synchronize waits for all work on the device to finish; resident grids
// (Plan.SetResident) are stopped first.
func (d *Device) Synchronize() error {
	d.stopResidents()
	return d.do(func() error { return cu.Synchronize() })
}

// Close destroys the context. Buffers and plans of the device must not be
// used afterwards; their methods then return ErrClosed.
func (d *Device) Close() error {
	d.stopResidents()
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
	if d.gate != nil {
		d.gate.free()
	}
	_ = d.mod.Unload()
	if d.cload {
		_ = d.cmod.Unload()
	}
	if d.bload {
		_ = d.bmod.Unload()
	}
	return d.ctx.Destroy()
}

// function returns the kernel name from the loaded modules (device
// thread): the tridiagonal module, for names that start with "band_" the
// banded one and for "segc" the cluster one (compute capability ≥ 9.0),
// each loaded (JIT-compiled) on first use so that programs that do not
// need them do not pay for them.
func (d *Device) function(name string) (cu.Function, error) {
	if f, ok := d.fns[name]; ok {
		return f, nil
	}
	mod := d.mod
	if strings.HasPrefix(name, "segc") {
		if d.props.Major < 9 {
			return cu.Function{}, fmt.Errorf("cuda: kernel %s needs thread-block clusters (compute capability 9.0), %s has %d.%d", name, d.props.Name, d.props.Major, d.props.Minor)
		}
		if !d.cload {
			m, err := cu.LoadData(ptx.Cluster)
			if err != nil {
				return cu.Function{}, fmt.Errorf("cuda: loading the cluster kernels' PTX on %s: %w", d.props.Name, err)
			}
			d.cmod, d.cload = m, true
		}
		mod = d.cmod
	} else if strings.HasPrefix(name, "band_") {
		if !d.bload {
			m, err := cu.LoadData(ptx.Banded)
			if err != nil {
				return cu.Function{}, fmt.Errorf("cuda: loading the banded kernels' PTX on %s: %w", d.props.Name, err)
			}
			d.bmod, d.bload = m, true
		}
		mod = d.bmod
	}
	f, err := mod.Function(name)
	if err != nil {
		return f, fmt.Errorf("cuda: kernel %s not in the PTX module: %w", name, err)
	}
	d.fns[name] = f
	return f, nil
}
