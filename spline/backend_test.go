package spline_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bandsolve/bandsolve/spline"
	"github.com/bandsolve/bandsolve/tridiag"
)

// recorder is a device whose evaluators run on the CPU and count the
// calls that reach them.
type recorder struct {
	name               string
	evals, ints, close int
}

func (r *recorder) Name() string { return r.name }

type recorderBackend struct{ r *recorder }

func (b recorderBackend) NewEngine32() (spline.Engine[float32], error) {
	return nil, errors.New("recorder: no float32 engine")
}

func (b recorderBackend) NewEngine64() (spline.Engine[float64], error) {
	cpu, err := spline.NewEvaluator[float64](nil)
	if err != nil {
		return nil, err
	}
	return &recorderEngine{b.r, cpu}, nil
}

type recorderEngine struct {
	r   *recorder
	cpu *spline.Evaluator[float64]
}

func (e *recorderEngine) Eval(ctx context.Context, cv *spline.Curves[float64], pts spline.Points[float64], out spline.Out[float64]) error {
	e.r.evals++
	return e.cpu.Eval(ctx, cv, pts, out)
}

func (e *recorderEngine) Integrate(ctx context.Context, cv *spline.Curves[float64], a, b, out []float64) error {
	e.r.ints++
	return e.cpu.Integrate(ctx, cv, a, b, out)
}

func (e *recorderEngine) Close() error {
	e.r.close++
	return e.cpu.Close()
}

func init() {
	spline.RegisterBackend(func(dev tridiag.Device) (spline.Backend, bool) {
		r, ok := dev.(*recorder)
		return recorderBackend{r}, ok
	})
}

// A registered backend's engine receives the calls whose shapes are
// right, and nothing else; its errors come back wrapped; Close closes it
// once, and a closed evaluator refuses work with ErrDevice.
func TestBackendEngine(t *testing.T) {
	dev := &recorder{name: "recorder"}
	_, err := spline.NewEvaluator[float32](dev)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no float32 engine")

	ev, err := spline.NewEvaluator[float64](dev)
	require.NoError(t, err)
	assert.Equal(t, tridiag.Device(dev), ev.Device())
	cv, err := spline.FitBatch(3, []float64{0, 1, 2}, []float64{0, 1, 0, 1, 2, 3}, spline.Natural())
	require.NoError(t, err)
	ctx := context.Background()
	ts := []float64{0.5, 1.5}
	got := make([]float64, 4)
	require.NoError(t, ev.Eval(ctx, cv, spline.SharedPoints(ts), spline.Out[float64]{Value: got}))
	for k := range 2 {
		for j, tj := range ts {
			assert.Equal(t, cv.Eval(k, tj), got[k*2+j])
		}
	}
	assert.ErrorIs(t, ev.Eval(ctx, cv, spline.SharedPoints(ts), spline.Out[float64]{Value: got[:3]}), spline.ErrInput)
	require.NoError(t, ev.Eval(ctx, cv, spline.SharedPoints[float64](nil), spline.Out[float64]{Value: got}))
	assert.Equal(t, 1, dev.evals, "only the well-formed, non-empty call reaches the engine")

	area := make([]float64, 2)
	require.NoError(t, ev.Integrate(ctx, cv, []float64{0}, []float64{2}, area))
	assert.Equal(t, cv.Integral(1, 0, 2), area[1])
	assert.ErrorIs(t, ev.Integrate(ctx, cv, []float64{0, 1, 2}, []float64{2}, area), spline.ErrInput)
	assert.Equal(t, 1, dev.ints)

	require.NoError(t, ev.Close())
	require.NoError(t, ev.Close())
	assert.Equal(t, 1, dev.close)
	assert.ErrorIs(t, ev.Eval(ctx, cv, spline.SharedPoints(ts), spline.Out[float64]{Value: got}), spline.ErrDevice)
	assert.ErrorIs(t, ev.Integrate(ctx, cv, []float64{0}, []float64{2}, area), spline.ErrDevice)
}

// station is a device of this example: it evaluates on the CPU and says
// so.
type station struct{}

func (station) Name() string { return "station" }

type stationBackend struct{}

func (stationBackend) NewEngine32() (spline.Engine[float32], error) {
	return spline.NewEvaluator[float32](nil)
}

func (stationBackend) NewEngine64() (spline.Engine[float64], error) {
	return spline.NewEvaluator[float64](nil)
}

// A device joins the evaluators through RegisterBackend, as package gpu
// does for a *cuda.Device; NewEvaluator then evaluates on it. (Any
// Evaluator is an Engine: this device hands its batches to the CPU's.)
func ExampleRegisterBackend() {
	spline.RegisterBackend(func(dev tridiag.Device) (spline.Backend, bool) {
		_, ok := dev.(station)
		return stationBackend{}, ok
	})
	ev, err := spline.NewEvaluator[float64](station{})
	if err != nil {
		panic(err)
	}
	defer ev.Close()
	cv, err := spline.FitBatch(2, []float64{0, 1}, []float64{0, 2}, spline.Natural())
	if err != nil {
		panic(err)
	}
	v := make([]float64, 2)
	if err := ev.Eval(context.Background(), cv, spline.SharedPoints([]float64{0.25, 3}), spline.Out[float64]{Value: v}); err != nil {
		panic(err)
	}
	fmt.Println(ev.Device().Name(), v)
	// Output: station [0.5 6]
}
