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
		// Beyond one system per two multiprocessors: short systems and
		// batches of many rows an SM keep the bandwidth plan.
		{64, 4, d.SMs/2 + 1, 0}, {64, 4, d.SMs / 2, 4}, {128, 4, d.SMs/2 + 1, 4}, {1024, 8, 4096, 0},
		{0, 4, 1, 0}, {128, 4, 0, 0}, {128, 2, 1, 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, LatencyChunk(d, c.n, c.elem, c.g, false, false), "n=%d elem=%d g=%d", c.n, c.elem, c.g)
	}
	// More systems than half the SMs (H100: 132): by rows an SM.
	for _, c := range []struct{ n, elem, g, want int }{
		{128, 4, 1024, 4}, {512, 4, 256, 4}, {512, 4, 512, 0}, {1024, 4, 128, 8}, {1024, 4, 512, 8},
		{2048, 4, 256, 8}, {2048, 4, 512, 0}, {64, 4, 1024, 0}, {64, 8, 100, 0},
		{128, 8, 1024, 4}, {1024, 8, 128, 4}, {512, 8, 512, 8}, {1024, 8, 1024, 8}, {2048, 8, 512, 8},
		{2048, 8, 1024, 0}, {4096, 8, 128, 8}, {4096, 8, 256, 8}, {4096, 8, 512, 0}, {4096, 8, 66, 8},
	} {
		assert.Equal(t, c.want, LatencyChunk(d, c.n, c.elem, c.g, false, false), "n=%d elem=%d g=%d", c.n, c.elem, c.g)
	}
	// Systems stored systems first: adjacent ones (interleaved) up to 128
	// rows and from 1024 on, at most one a two SMs; no others.
	for _, c := range []struct {
		n, elem, g         int
		sysFirst, adjacent bool
		want               int
	}{
		{128, 4, 64, true, true, 4}, {64, 8, 8, true, true, 4}, {129, 4, 8, true, true, 0}, {1023, 8, 8, true, true, 0},
		{128, 4, 8, true, false, 0}, {1024, 4, 8, false, true, 8}, {128, 4, d.SMs/2 + 1, true, true, 0},
		{1024, 4, 64, true, true, 4}, {1025, 4, 8, true, true, 8}, {2048, 4, 64, true, true, 8},
		{4096, 4, 8, true, true, 8}, {4096, 4, 9, true, true, 0}, {4097, 4, 1, true, true, 0},
		{1024, 8, 8, true, true, 4}, {2048, 8, 64, true, true, 4}, {2049, 8, 1, true, true, 0},
		{2048, 4, d.SMs/2 + 1, true, true, 0}, {2048, 8, 8, true, false, 0},
	} {
		assert.Equal(t, c.want, LatencyChunk(d, c.n, c.elem, c.g, c.sysFirst, c.adjacent), "%+v", c)
	}
}

func TestLatencyConstChunk16(t *testing.T) {
	d := H100
	for _, c := range []struct {
		n, g int
		want bool
	}{
		{128, 1024, false}, {1024, 128, false}, {512, 256, false}, {1024, 512, true}, {2048, 256, true},
		{4096, 128, true}, {4096, 64, false}, {1024, d.SMs/2 + 1, false}, {2048, d.SMs/2 + 1, true},
	} {
		assert.Equal(t, c.want, LatencyConstChunk16(d, c.n, c.g), "n=%d g=%d", c.n, c.g)
	}
}
