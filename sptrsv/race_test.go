//go:build race

package sptrsv

// raceDetector: the race detector slows the locality solves of the suite
// about fifteenfold, so TestLocalitySuite runs one of its capacities.
const raceDetector = true
