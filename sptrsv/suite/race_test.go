//go:build race

package suite

// raceDetector: the race detector multiplies the memory and time of the
// full-size matrices (2.4 GB and 30 s for TestFixed), so it skips them.
const raceDetector = true
