// The fiber scheduler of the CUDA kernels' CPU emulations (bandemu,
// spikeemu through bandemu's emu.cc, complexemu): every thread of a block
// is a fiber (ucontext) on its own stack; emu_launch runs the blocks one
// after another, and within a block every live fiber in turn up to its
// next barrier (emu_syncthreads) or its end. The block's dynamic shared
// memory (emu_dyn_smem) is filled with fill bytes at its start. Include it
// in one translation unit, after the declarations of emu_dim3 and of the
// globals threadIdx, blockIdx, blockDim and gridDim.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace {
const size_t kStack = 256 << 10;
std::vector<unsigned char> dyn;
ucontext_t sched;
struct Fiber {
    ucontext_t ctx;
    std::vector<unsigned char> stack;
    bool done;
    unsigned int x, y, z;
};
std::vector<Fiber> fibers;
int current = -1;
const std::function<void()> *kernel;

void trampoline() {
    (*kernel)();
    fibers[current].done = true;
    swapcontext(&fibers[current].ctx, &sched);
}
} // namespace

unsigned char *emu_dyn_smem() { return dyn.data(); }

void emu_syncthreads() {
    if (current < 0) return;
    swapcontext(&fibers[current].ctx, &sched);
}

void emu_launch(emu_dim3 grid, emu_dim3 block, size_t smem, const std::function<void()> &body, unsigned char fill) {
    gridDim = grid;
    blockDim = block;
    kernel = &body;
    const size_t nt = (size_t)block.x * block.y * block.z;
    fibers.resize(nt);
    for (auto &f : fibers)
        if (f.stack.size() != kStack) f.stack.resize(kStack);
    for (unsigned int bz = 0; bz < grid.z; bz++)
        for (unsigned int by = 0; by < grid.y; by++)
            for (unsigned int bx = 0; bx < grid.x; bx++) {
                blockIdx = {bx, by, bz};
                dyn.assign(smem + 16, fill);
                size_t i = 0;
                for (unsigned int z = 0; z < block.z; z++)
                    for (unsigned int y = 0; y < block.y; y++)
                        for (unsigned int x = 0; x < block.x; x++, i++) {
                            Fiber &f = fibers[i];
                            f.done = false;
                            f.x = x, f.y = y, f.z = z;
                            getcontext(&f.ctx);
                            f.ctx.uc_stack.ss_sp = f.stack.data();
                            f.ctx.uc_stack.ss_size = f.stack.size();
                            f.ctx.uc_link = nullptr;
                            makecontext(&f.ctx, trampoline, 0);
                        }
                // Round robin: each pass runs every live fiber up to its
                // next barrier or its end.
                for (;;) {
                    bool live = false;
                    for (size_t k = 0; k < nt; k++) {
                        if (fibers[k].done) continue;
                        live = true;
                        current = (int)k;
                        threadIdx = {fibers[k].x, fibers[k].y, fibers[k].z};
                        swapcontext(&sched, &fibers[k].ctx);
                    }
                    current = -1;
                    if (!live) break;
                }
            }
}
