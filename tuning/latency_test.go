package tuning

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLatencyChunk(t *testing.T) {
	d := H100
	cases := []struct{ n, elem, g, want int }{
		{128, 4, 1, 4}, {512, 4, 64, 4}, {513, 4, 64, 8}, {2048, 4, 1, 8}, {2049, 4, 1, 0}, {4096, 4, 8, 0},
		{1, 8, 1, 4}, {1024, 8, 8, 4}, {1025, 8, 8, 8}, {4096, 8, 64, 8}, {4097, 8, 1, 0},
		// Batches of more than one system per two multiprocessors keep
		// the bandwidth plan.
		{128, 4, d.SMs/2 + 1, 0}, {128, 4, d.SMs / 2, 4}, {1024, 8, 4096, 0},
		{0, 4, 1, 0}, {128, 4, 0, 0}, {128, 2, 1, 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, LatencyChunk(d, c.n, c.elem, c.g, false, false), "n=%d elem=%d g=%d", c.n, c.elem, c.g)
	}
	// Systems stored systems first: adjacent ones (interleaved) up to 128
	// rows, no others.
	for _, c := range []struct {
		n, elem, g         int
		sysFirst, adjacent bool
		want               int
	}{
		{128, 4, 64, true, true, 4}, {64, 8, 8, true, true, 4}, {129, 4, 8, true, true, 0}, {1024, 8, 8, true, true, 0},
		{128, 4, 8, true, false, 0}, {1024, 4, 8, false, true, 8}, {128, 4, d.SMs/2 + 1, true, true, 0},
	} {
		assert.Equal(t, c.want, LatencyChunk(d, c.n, c.elem, c.g, c.sysFirst, c.adjacent), "%+v", c)
	}
}
