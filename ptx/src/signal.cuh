// Completion signal of a solve: one thread writes the solve's sequence
// number and its status flag to a word of mapped, page-locked host memory,
// after every kernel of the solve (stream order). The host polls that word
// instead of copying the flag back and synchronising the stream, which
// saves two driver round trips per call.
#pragma once

#ifndef BS_DEVICE_ONLY
extern "C" __global__ void signal_done(const int *flag, volatile unsigned int *word, unsigned int seq) {
    // seq is odd-free (even); bit 0 carries "some system broke down".
    *word = seq | (*flag != 0 ? 1u : 0u);
    __threadfence_system();
}
#endif

// block_done_signal ends a single-kernel solve that signals completion
// itself (one launch per call instead of two): each block, once all its
// threads are done, counts itself in status[G+1]; the last block resets
// the counter and writes the completion word like signal_done. Nothing
// happens when word is null (timed runs, solves inside other plans). A
// grid of one block writes the word without counting.
// Call from every thread of every block, at the very end of the kernel.
// Not inlined: inlined, it made partition_p8_f64 spill on sm_80.
__device__ __noinline__ void block_done_signal(int *status, int G, volatile unsigned int *word, unsigned int seq) {
    if (word == nullptr) return;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        // Release this block's stores (made visible to thread 0 by the
        // barrier) before it is counted.
        __threadfence();
        const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
        if (blocks == 1) { // the only block: no count, the counter stays 0
            const int flag = *reinterpret_cast<volatile int *>(status + G);
            *word = seq | (flag != 0 ? 1u : 0u);
            __threadfence_system();
            return;
        }
        unsigned int *counter = reinterpret_cast<unsigned int *>(status + G + 1);
        if (atomicAdd(counter, 1u) == blocks - 1) {
            __threadfence();
            *counter = 0;
            const int flag = *reinterpret_cast<volatile int *>(status + G);
            // The reset reaches the device before the host learns of the
            // solve: a resident grid counts the next solve in this same
            // counter without a kernel boundary in between.
            __threadfence();
            *word = seq | (flag != 0 ? 1u : 0u);
            __threadfence_system();
        }
    }
}

#if !defined(BS_DEVICE_ONLY) && !defined(PART_EMU) // inline PTX: not in the CPU emulation
// gate_wait holds its stream (timed runs, cuda.Device.TimeEvents): one thread polls
// the mapped host word gate[0] until the host makes it non-zero, so that
// the work queued behind it starts only once all of it is queued and its
// events bracket GPU work alone, not the host's launch calls. It gives up
// after limitNs nanoseconds of the device's global timer and then writes
// 1 to gate[1] (the host reads it as "the gate expired"; the work ran,
// paced by the host as without a gate).
extern "C" __global__ void gate_wait(volatile unsigned int *gate, unsigned long long limitNs) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (gate[0] == 0u) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > limitNs) {
            gate[1] = 1u;
            __threadfence_system();
            return;
        }
        __nanosleep(200);
    }
}
#endif

#ifndef BS_DEVICE_ONLY
// Latency probes (cuda/probe.go, benchmarks only).
//
// probe_empty does nothing: the cost of a launch alone.
extern "C" __global__ void probe_empty() {}

// probe_echo is a persistent one-thread kernel: it polls the mapped host
// word in and copies every new value to the mapped host word out, until
// in holds 0xffffffff. It measures the round trip host → GPU → host
// without a launch.
extern "C" __global__ void probe_echo(volatile unsigned int *in, volatile unsigned int *out) {
    unsigned int last = 0;
    for (;;) {
        const unsigned int v = *in;
        if (v != last) {
            if (v == 0xffffffffu) return;
            last = v;
            *out = v;
            __threadfence_system();
        }
    }
}
#endif
