//go:build !race

package sptrsv

const raceDetector = false
