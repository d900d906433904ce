//go:build cuda

package cuda

import (
	"fmt"
	"slices"
	"time"

	"gorgonia.org/cu"
)

// CopyBandwidth is the device's copy bandwidth for this package's
// benchmarks (their share-of-copy metrics): a device-to-device copy of
// bytes, timed with TimeEvents (no gate) reps times after one untimed
// copy; bytes read plus written (2·bytes) per second of the median time.
// The bench measures it with its own instrument (gpuclock.CopyBandwidth).
func (d *Device) CopyBandwidth(bytes int64, reps int) (float64, error) {
	if bytes < 1 || reps < 1 {
		return 0, fmt.Errorf("cuda: copy bandwidth needs bytes ≥ 1 and reps ≥ 1, got %d and %d", bytes, reps)
	}
	var ts []time.Duration
	err := d.Enqueue(func() error {
		src, err := cu.MemAlloc(bytes)
		if err != nil {
			return err
		}
		defer func() { _ = cu.MemFree(src) }()
		dst, err := cu.MemAlloc(bytes)
		if err != nil {
			return err
		}
		defer func() { _ = cu.MemFree(dst) }()
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return err
		}
		defer func() { _ = s.Destroy() }()
		if err := cu.MemsetD8Async(src, 1, bytes, s); err != nil {
			return err
		}
		ts, err = TimeEvents(s, 1, reps, nil, func() error { return cu.MemcpyDtoDAsync(dst, src, bytes, s) }, nil)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("cuda: copy bandwidth of %s: %w", d.Name(), err)
	}
	slices.Sort(ts)
	med := ts[reps/2]
	if reps%2 == 0 {
		med = (ts[reps/2-1] + ts[reps/2]) / 2
	}
	if med <= 0 {
		return 0, fmt.Errorf("cuda: copy bandwidth of %s: the copy took no measurable time", d.Name())
	}
	return 2 * float64(bytes) / med.Seconds(), nil
}
