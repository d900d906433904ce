//go:build !race

package suite

const raceDetector = false
