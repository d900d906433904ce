// Package props holds the properties of a CUDA device that the driver
// reports, in plain Go without the cuda build tag: package cuda fills
// them, package tuning chooses kernel launches from them (and records
// known devices' for tests without a GPU).
package props

// Device holds the properties of a GPU, as the CUDA driver reports them.
type Device struct {
	Name                    string
	Major, Minor            int   // compute capability
	SMs                     int   // multiprocessors
	TotalMem                int64 // bytes of device memory
	MaxThreadsPerBlock      int
	MaxThreadsPerSM         int
	MaxBlocksPerSM          int
	SharedPerBlock          int // bytes of shared memory a block gets without opting in
	SharedPerBlockOptin     int // bytes a block may get after raising its limit
	SharedPerSM             int // bytes of shared memory per multiprocessor
	RegsPerSM, RegsPerBlock int
	WarpSize                int
	L2Bytes                 int
	MemBusWidth             int // bits
	MemClockKHz             int
}

// MaxShared returns the most shared memory one block can use (the opt-in
// limit where the device has one).
func (d Device) MaxShared() int { return max(d.SharedPerBlock, d.SharedPerBlockOptin) }
