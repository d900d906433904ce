package tuning_test

import (
	"fmt"

	"github.com/bandsolve/bandsolve/tuning"
)

// The largest system one block of the partition kernel holds on an H100,
// in FP64, with the default chunk size and with chunks of 8 rows.
func ExamplePartitionMaxN() {
	fmt.Println(tuning.PartitionMaxN(tuning.H100, 8, 0, false))
	fmt.Println(tuning.PartitionMaxN(tuning.H100, 8, 8, false))
	// Output:
	// 7248
	// 4096
}

// A launch of the lanes segment kernel with the block's systems forced.
func ExampleLanesSegmentLaunch_WithSystems() {
	l, err := tuning.LanesSegmentLaunchFor(tuning.H100, 8192, 4, 1<<11, 0, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.Rows, l.Systems, l.Threads, l.SharedBytes)
	w, err := l.WithSystems(8)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Rows, w.Systems, w.Threads, w.SharedBytes)
	_, err = l.WithSystems(32) // 1024 threads: above the kernel's bound
	fmt.Println(err != nil)
	// Output:
	// 512 16 512 26256
	// 512 8 256 13136
	// true
}
