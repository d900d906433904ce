//go:build cuda

package tridiaggpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bandsolve/bandsolve/tridiag"
)

// BenchmarkCheck times a device-buffer FP64 solve with Options.Check (η
// and κ̂ of every system) against the same solve unchecked, with κ̂ on
// the device (its workspace bound at the default and at 256 MiB) and on the
// host, for batches of 2^24 rows and one system of 2^20 rows (host only:
// one device thread would walk it for minutes); the crossing of the two
// paths is tuning.CondOnDevice's rule. Run on the GPU machine with
//
//	./tridiaggpu.test -test.run '^$' -test.bench Check -test.benchtime 3x
func BenchmarkCheck(b *testing.B) {
	for _, sh := range []tridiag.Shape{{N: 256, G: 65536}, {N: 1024, G: 16384}, {N: 4096, G: 4096}, {N: 65536, G: 256}, {N: 1 << 20, G: 1}} {
		shape := sh
		r := rand.New(rand.NewPCG(1, 2))
		a, bb, c, d := condSystems[float64](shape, r)
		for i := range bb {
			bb[i] = 4 + r.Float64() // dominant: every system passes
		}
		bufs := deviceBuffers(b, a, bb, c, d, make([]float64, len(d)))
		for _, path := range []struct {
			name  string
			check bool
			cfg   config
		}{
			{"none", false, config{}},
			{"device", true, config{condOnDevice: true}},
			{"device-256MiB", true, config{condOnDevice: true, condWorkBytes: 256 << 20}},
			{"host", true, config{condOnHost: true}},
		} {
			if path.cfg.condOnDevice && shape.G < 256 {
				continue
			}
			b.Run(fmt.Sprintf("N=%d/G=%d/%s", shape.N, shape.G, path.name), func(b *testing.B) {
				p, err := newPlan[float64](dev, shape, tridiag.Options{Check: path.check}, path.cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				solve := func() {
					if err := p.SolveDevice(context.Background(), bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]); err != nil {
						b.Fatal(err)
					}
				}
				solve()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					solve()
				}
				b.ReportMetric(float64(shape.N*shape.G)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MRows/s")
			})
		}
	}
}
