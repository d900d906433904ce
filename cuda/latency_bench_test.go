//go:build cuda

package cuda

import "testing"

// BenchmarkLatencyFloor splits the floor under a small call: an empty cgo
// call, Device.do around nothing, and in C (no Go on the path) the launch
// of the one-thread signal_done kernel waited for by polling the mapped
// word, by cuStreamSynchronize or by cuEventQuery in a spin loop (launch-µs
// is the launch call alone), a persistent kernel's round trip through
// mapped host memory (no launch), and the event-timed empty kernel.
func BenchmarkLatencyFloor(b *testing.B) {
	b.Run("cgo-noop", func(b *testing.B) {
		for b.Loop() {
			probeNoop()
		}
	})
	b.Run("do-noop", func(b *testing.B) {
		for b.Loop() {
			_ = dev.Enqueue(func() error { return nil })
		}
	})
	for _, m := range []struct {
		name     string
		mode     int
		blocking bool
	}{{"c-poll", 0, false}, {"c-poll-blockingstream", 0, true}, {"c-sync", 1, false}, {"c-eventspin", 2, false}} {
		b.Run(m.name, func(b *testing.B) {
			if _, err := dev.probeFloorRun(m.mode, 200, m.blocking); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			r, err := dev.probeFloorRun(m.mode, b.N, m.blocking)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.total/1e3, "µs/call")
			b.ReportMetric(r.launch/1e3, "launch-µs")
		})
	}
	b.Run("c-echo-persistent", func(b *testing.B) {
		ns, err := dev.probeEcho(b.N)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ns/1e3, "µs/call")
	})
	b.Run("event-empty-kernel", func(b *testing.B) {
		var ns float64
		for b.Loop() {
			var err error
			if ns, err = dev.probeEventEmpty(101); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(ns/1e3, "kernel-µs")
	})
	b.Run("event-empty-kernel-gated", func(b *testing.B) {
		var ns float64
		for b.Loop() {
			var err error
			if ns, err = dev.probeEventEmptyGated(GateMaxReps - 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(ns/1e3, "kernel-µs")
	})
}
