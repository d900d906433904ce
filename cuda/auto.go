//go:build cuda

package cuda

import (
	"github.com/bandsolve/bandsolve/tridiag"
)

// autoPreference lists the algorithms Auto would like for a spec, best
// first; the first one with a kernel is used.
func autoPreference(d *Device, spec tridiag.Spec, f64 bool) []tridiag.Algorithm {
	// One thread per system is right when there are enough systems to
	// fill the GPU and they are interleaved (coalesced).
	if spec.Layout.IsInterleaved(spec.G) && spec.G >= 8*d.props.SMs*32 {
		return []tridiag.Algorithm{tridiag.Thomas}
	}
	return []tridiag.Algorithm{tridiag.PCR, tridiag.TPR, tridiag.Thomas}
}
