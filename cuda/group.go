//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"strings"

	"gorgonia.org/cu"
)

// ErrGroup is wrapped by the errors of OpenGroup and NewGroup: an empty
// group, a GPU named twice, a nil or closed device.
var ErrGroup = errors.New("cuda: bad device group")

// Group is several GPUs of one host used together by one process: one
// Device per GPU, each with its own primary context, lock and thread (as
// Open gives), with peer access enabled between the GPUs whose
// interconnect allows it (Peer). A Group is a tridiag.Device: with
// package github.com/bandsolve/bandsolve/gpu imported, tridiag.NewPlan on
// a Group splits each batch into contiguous shares of systems, one a GPU,
// solved concurrently.
type Group struct {
	devs  []*Device
	owned bool
	// peer[i][j]: devs[i]'s context may access devs[j]'s memory.
	peer [][]bool
	// enabled[i][j]: the group enabled that access (Close disables it).
	enabled [][]bool
}

// OpenGroup opens the GPUs of ordinals (Open for each) as a group, in
// that order, and enables peer access between them where the hardware
// allows it. A GPU named twice is refused with an error wrapping
// ErrGroup. Close closes the devices.
func OpenGroup(ordinals ...int) (*Group, error) {
	if len(ordinals) == 0 {
		return nil, fmt.Errorf("%w: a group needs at least one GPU", ErrGroup)
	}
	seen := map[int]bool{}
	for _, o := range ordinals {
		if seen[o] {
			return nil, fmt.Errorf("%w: GPU %d named twice in %v", ErrGroup, o, ordinals)
		}
		seen[o] = true
	}
	devs := make([]*Device, 0, len(ordinals))
	for _, o := range ordinals {
		d, err := Open(o)
		if err != nil {
			for _, od := range devs {
				_ = od.Close()
			}
			return nil, fmt.Errorf("cuda: opening GPU %d of the group %v: %w", o, ordinals, err)
		}
		devs = append(devs, d)
	}
	g, err := newGroup(devs, true)
	if err != nil {
		for _, d := range devs {
			_ = d.Close()
		}
		return nil, err
	}
	return g, nil
}

// NewGroup makes a group of devices already open, in that order, and
// enables peer access between them where the hardware allows it. Two
// devices of the same GPU are refused with an error wrapping ErrGroup.
// Close leaves the devices open: they stay their opener's.
func NewGroup(devs ...*Device) (*Group, error) {
	if len(devs) == 0 {
		return nil, fmt.Errorf("%w: a group needs at least one GPU", ErrGroup)
	}
	seen := map[int]bool{}
	for i, d := range devs {
		if d == nil {
			return nil, fmt.Errorf("%w: device %d of the group is nil", ErrGroup, i)
		}
		if seen[d.ordinal] {
			return nil, fmt.Errorf("%w: GPU %d named twice", ErrGroup, d.ordinal)
		}
		seen[d.ordinal] = true
	}
	return newGroup(append([]*Device(nil), devs...), false)
}

// newGroup records which devices reach each other's memory and enables
// that access.
func newGroup(devs []*Device, owned bool) (*Group, error) {
	g := &Group{devs: devs, owned: owned, peer: make([][]bool, len(devs)), enabled: make([][]bool, len(devs))}
	for i, d := range devs {
		g.peer[i] = make([]bool, len(devs))
		g.enabled[i] = make([]bool, len(devs))
		for j, p := range devs {
			if i == j {
				continue
			}
			err := d.Enqueue(func() error {
				can, err := d.dev.CanAccessPeer(p.dev)
				if err != nil {
					return fmt.Errorf("cuda: can %s access %s: %w", d.Name(), p.Name(), err)
				}
				if can == 0 {
					return nil
				}
				switch err := p.ctx.EnablePeerAccess(0); {
				case err == nil:
					g.enabled[i][j] = true
				case errors.Is(err, cu.PeerAccessAlreadyEnabled):
				default:
					return fmt.Errorf("cuda: enabling the access of %s to %s: %w", d.Name(), p.Name(), err)
				}
				g.peer[i][j] = true
				return nil
			})
			if err != nil {
				if errors.Is(err, ErrClosed) {
					err = fmt.Errorf("%w: device %s is closed", ErrGroup, d.Name())
				}
				g.disablePeers()
				return nil, err
			}
		}
	}
	return g, nil
}

// Len returns the number of GPUs in the group.
func (g *Group) Len() int { return len(g.devs) }

// Device returns the group's i-th device (0 ≤ i < Len).
func (g *Group) Device(i int) *Device { return g.devs[i] }

// Devices returns the group's devices in order.
func (g *Group) Devices() []*Device { return append([]*Device(nil), g.devs...) }

// Peer reports whether the group's i-th device reads and writes the
// memory of its j-th directly (peer access over NVLink or PCIe); false
// for i = j. CopyPeer works between any two devices, staged through the
// host where there is no peer access.
func (g *Group) Peer(i, j int) bool { return g.peer[i][j] }

// Name describes the group, e.g. "group of 2 GPUs: cuda:0 NVIDIA H100
// 80GB HBM3 (sm_90, 132 SMs), cuda:1 NVIDIA H100 80GB HBM3 (sm_90, 132
// SMs)".
func (g *Group) Name() string {
	names := make([]string, len(g.devs))
	for i, d := range g.devs {
		names[i] = d.Name()
	}
	unit := "GPUs"
	if len(g.devs) == 1 {
		unit = "GPU"
	}
	return fmt.Sprintf("group of %d %s: %s", len(g.devs), unit, strings.Join(names, ", "))
}

// Synchronize waits for the work of every device of the group.
func (g *Group) Synchronize() error {
	var errs []error
	for _, d := range g.devs {
		if err := d.Synchronize(); err != nil {
			errs = append(errs, fmt.Errorf("cuda: synchronising %s: %w", d.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// Close disables the peer access the group enabled and, for a group of
// OpenGroup, closes the devices. Buffers and plans of the group's devices
// must be freed and closed first.
func (g *Group) Close() error {
	g.disablePeers()
	if !g.owned {
		return nil
	}
	var errs []error
	for _, d := range g.devs {
		if err := d.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	g.owned = false
	return errors.Join(errs...)
}

// disablePeers undoes the peer access the group enabled.
func (g *Group) disablePeers() {
	for i, d := range g.devs {
		for j, p := range g.devs {
			if !g.enabled[i][j] {
				continue
			}
			_ = d.Enqueue(func() error { return p.ctx.DisablePeerAccess() })
			g.enabled[i][j], g.peer[i][j] = false, false
		}
	}
}

// CopyPeer copies src into dst (lengths must match), the two buffers on
// any devices of the process: a direct peer copy where the devices have
// peer access, staged by the driver otherwise. It is ordered after the
// work queued on both devices' default streams and returns when the copy
// is done.
func CopyPeer[T Elem](dst, src *Buffer[T]) error {
	if dst.n != src.n {
		return fmt.Errorf("cuda: copying a buffer of %d elements into one of %d", src.n, dst.n)
	}
	if dst.ptr == 0 || src.ptr == 0 {
		return fmt.Errorf("%w: peer copy of a freed buffer", ErrRange)
	}
	if dst.dev == src.dev {
		return dst.CopyFromBuffer(src)
	}
	bytes := int64(dst.n) * elemSize[T]()
	src.dev.StopPersistent()
	dst.dev.StopPersistent()
	return dst.dev.Enqueue(func() error {
		if err := cu.MemcpyPeer(dst.ptr, dst.dev.ctx, src.ptr, src.dev.ctx, bytes); err != nil {
			return fmt.Errorf("cuda: copying %d B from %s to %s: %w", bytes, src.dev.Name(), dst.dev.Name(), err)
		}
		if err := cu.Synchronize(); err != nil {
			return fmt.Errorf("cuda: waiting for a copy from %s to %s: %w", src.dev.Name(), dst.dev.Name(), err)
		}
		return nil
	})
}

// CopyPeerAsync queues the copy of src into dst (lengths must match) on
// stream s, of either buffer's device, and returns at once: a direct
// peer copy where the devices have peer access. The copy is ordered
// with the work of s only; the caller orders it with the other device's
// work (synchronising that device's stream first, or with events).
func CopyPeerAsync[T Elem](s *Stream, dst, src *Buffer[T]) error {
	if dst.n != src.n {
		return fmt.Errorf("cuda: copying a buffer of %d elements into one of %d", src.n, dst.n)
	}
	if dst.ptr == 0 || src.ptr == 0 {
		return fmt.Errorf("%w: peer copy of a freed buffer", ErrRange)
	}
	if s == nil || (s.dev != dst.dev && s.dev != src.dev) {
		return fmt.Errorf("%w: a peer copy's stream must be of the source's or the destination's device", ErrRange)
	}
	bytes := int64(dst.n) * elemSize[T]()
	return s.dev.Enqueue(func() error {
		if err := cu.MemcpyPeerAsync(dst.ptr, dst.dev.ctx, src.ptr, src.dev.ctx, bytes, s.h); err != nil {
			return fmt.Errorf("cuda: queueing a copy of %d B from %s to %s: %w", bytes, src.dev.Name(), dst.dev.Name(), err)
		}
		return nil
	})
}
