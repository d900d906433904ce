//go:build cudaemu

// A CPU emulation of the CUDA features that the partition kernels
// (ptx/src/segment.cuh, partition.cuh, stream.cuh, lanes.cuh, cstream.cuh)
// use, its scheduler, and the C entry points that package partemu calls.
//
// It builds on internal/bandemu's emu.h (the qualifiers, the index
// variables, the simple intrinsics) and differs from bandemu's scheduler in
// what the segment kernel needs:
//   - the blocks of a grid run concurrently, at most `resident` of them at
//     once (the slots of the GPU's SMs); a free slot takes a waiting block
//     chosen at random (seeded), since hardware may start blocks in any
//     order: one-pass blocks spin-wait for other blocks of their system;
//   - every thread is a fiber (ucontext) on a small stack from a pool;
//     a fiber runs until it meets a barrier, a warp operation or a
//     __nanosleep, then the scheduler moves on; each pass visits the
//     resident blocks in a random order;
//   - every block has its own dynamic shared memory (part_smem is the
//     running block's), filled with 0xff bytes (NaN) at its start and
//     followed by an inaccessible page;
//   - __syncthreads is a block barrier, __syncwarp, the shuffles and
//     __reduce_min_sync are barriers of the warp's 32 lanes (only full
//     warps call them here) that exchange values, and lanes that reach
//     different warp operations are reported;
//   - a pass in which no fiber did anything but sleep again means no
//     fiber can progress: the launch stops with a deadlock error.
// Fibers never run at the same time, so atomics are plain operations and
// fences do nothing.

// No fused multiply-adds (the PTX is built with -fmad=false); x86-64
// without -mfma has none anyway. Division is IEEE.
#pragma GCC optimize("fp-contract=off")

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../bandemu/emu.h"

using std::isfinite;

// ---- CUDA features beyond emu.h ----

struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(16) double2 {
    double x, y;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline double2 make_double2(double x, double y) { return double2{x, y}; }

template <typename T> inline T __ldcg(const T *p) { return *p; }
template <typename T> inline void __stcg(T *p, T v) { *p = v; }
inline void __threadfence() {}
inline void __threadfence_system() {}
void emu_nanosleep();
inline void __nanosleep(unsigned) { emu_nanosleep(); }

inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }

inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    const unsigned long long o = *p;
    *p = o + v;
    return o;
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
    const unsigned o = *p;
    *p = o + v;
    return o;
}
inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v) {
    const unsigned long long o = *p;
    if (v > o) *p = v;
    return o;
}
inline int atomicMin(int *p, int v) {
    const int o = *p;
    if (v < o) *p = v;
    return o;
}

// Warp operations: every lane posts a 64-bit value and waits for the
// warp's 32 lanes; the result is the posted values of the warp.
enum { EMU_OP_SYNC = 1, EMU_OP_SHFL_UP, EMU_OP_SHFL_DOWN, EMU_OP_REDUCE_MIN };
const unsigned long long *emu_warp_op(unsigned long long v, int op, unsigned mask);
unsigned emu_lane();

template <typename T> inline unsigned long long emu_bits(T v) {
    static_assert(sizeof(T) <= 8, "shuffles of at most 64 bits");
    unsigned long long u = 0;
    std::memcpy(&u, &v, sizeof(T));
    return u;
}
template <typename T> inline T emu_from_bits(unsigned long long u) {
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
}

// The shuffles as shfl.sync.up/down: within the caller's segment of width
// lanes, the source lane lane − delta (up) or lane + delta (down); a source
// outside the segment gives the caller's own value.
template <typename T> inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    const int lane = (int)emu_lane();
    const unsigned long long *s = emu_warp_op(emu_bits(v), EMU_OP_SHFL_UP, mask);
    const int lo = lane & ~(width - 1);
    const int j = lane - (int)(delta & 31);
    return emu_from_bits<T>(s[j >= lo ? j : lane]);
}
template <typename T> inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    const int lane = (int)emu_lane();
    const unsigned long long *s = emu_warp_op(emu_bits(v), EMU_OP_SHFL_DOWN, mask);
    const int hi = (lane & ~(width - 1)) | (width - 1);
    const int j = lane + (int)(delta & 31);
    return emu_from_bits<T>(s[j <= hi ? j : lane]);
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned v) {
    const unsigned long long *s = emu_warp_op(v, EMU_OP_REDUCE_MIN, mask);
    unsigned m = 0xffffffffu;
    for (int i = 0; i < 32; i++) m = min(m, (unsigned)s[i]);
    return m;
}
// emu.h's __syncwarp is a no-op (bandemu's kernels have no warp
// operations); here it is a warp barrier.
inline void emu_syncwarp(unsigned mask = 0xffffffffu) { emu_warp_op(0, EMU_OP_SYNC, mask); }
#define __syncwarp emu_syncwarp

// The running block's dynamic shared memory (partition.cuh declares
// part_smem only when PART_EMU is not defined).
#define part_smem (emu_dyn_smem())

#include "segment.cuh"
#include "stream.cuh"
#include "lanes.cuh"
#include "cstream.cuh"
#include "lseg.cuh"
#include "lstream.cuh"

// ---- The scheduler ----

emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

const size_t kStack = 64 << 10;
size_t page() {
    static const size_t p = (size_t)sysconf(_SC_PAGESIZE);
    return p;
}

// A stack with an inaccessible guard page below it, from a pool.
std::vector<unsigned char *> stacks;
unsigned char *get_stack() {
    if (!stacks.empty()) {
        unsigned char *s = stacks.back();
        stacks.pop_back();
        return s;
    }
    void *m = mmap(nullptr, kStack + page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("partemu: mmap stack");
        abort();
    }
    mprotect(m, page(), PROT_NONE);
    return (unsigned char *)m + page();
}
void put_stack(unsigned char *s) { stacks.push_back(s); }

// Shared memory of n bytes ending at an inaccessible page (n is a multiple
// of 16, so the start is 16-byte aligned).
struct Smem {
    unsigned char *map = nullptr, *p = nullptr;
    size_t len = 0;
    void alloc(size_t n, unsigned char fill) {
        const size_t body = (n + page() - 1) / page() * page();
        len = body + page();
        void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            perror("partemu: mmap shared memory");
            abort();
        }
        map = (unsigned char *)m;
        mprotect(map + body, page(), PROT_NONE);
        p = map + body - n;
        std::memset(p, fill, n);
    }
    ~Smem() {
        if (map) munmap(map, len);
    }
};

enum Wait { W_NONE, W_BAR, W_WARP, W_SLEEP, W_DONE };

struct Block;
struct Fiber {
    ucontext_t ctx; // not moved once made (glibc points into it)
    unsigned char *stack = nullptr;
    Block *blk = nullptr;
    unsigned tid = 0;
    int wait = W_NONE;
    unsigned wgen = 0; // the barrier generation it waits to change
};
struct Warp {
    unsigned live = 0, arrived = 0, gen = 0;
    int op[2] = {0, 0};             // the operation of generation gen (by parity)
    unsigned long long slot[2][32]; // the lanes' values of that generation
};
struct Block {
    unsigned idx = 0;
    Smem smem;
    std::unique_ptr<Fiber[]> fib;
    std::vector<Warp> warps;
    unsigned live = 0, arrived = 0, gen = 0;
};

ucontext_t sched;
Fiber *cur = nullptr;
const std::function<void()> *kernel = nullptr;
bool progress = false;
bool failed = false;
std::string err;
unsigned long long rng = 0;

unsigned long long next_rand() { // splitmix64
    unsigned long long z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void yield() { swapcontext(&cur->ctx, &sched); }

// fail stops the launch: the fiber is never resumed.
void fail(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!failed) err = buf;
    failed = true;
    for (;;) yield();
}

void release_if_complete(Block *b) {
    if (b->arrived > 0 && b->arrived == b->live) {
        b->arrived = 0;
        b->gen++;
    }
}

void trampoline() {
    (*kernel)();
    Fiber *f = cur;
    Block *b = f->blk;
    Warp &w = b->warps[f->tid >> 5];
    if (w.arrived > 0) fail("block %u thread %u exited while its warp waits in a warp operation", b->idx, f->tid);
    f->wait = W_DONE;
    b->live--;
    w.live--;
    progress = true;
    release_if_complete(b);
    yield();
}

} // namespace

unsigned char *emu_dyn_smem() { return cur->blk->smem.p; }

void emu_syncthreads() {
    Fiber *f = cur;
    Block *b = f->blk;
    progress = true;
    if (++b->arrived == b->live) {
        b->arrived = 0;
        b->gen++;
        return;
    }
    f->wait = W_BAR;
    f->wgen = b->gen;
    yield();
    f->wait = W_NONE;
}

void emu_nanosleep() {
    cur->wait = W_SLEEP;
    yield();
    cur->wait = W_NONE;
}

unsigned emu_lane() { return cur->tid & 31; }

const unsigned long long *emu_warp_op(unsigned long long v, int op, unsigned mask) {
    Fiber *f = cur;
    Block *b = f->blk;
    Warp &w = b->warps[f->tid >> 5];
    if (mask != 0xffffffffu) fail("block %u thread %u: warp operation with mask %#x (only full warps)", b->idx, f->tid, mask);
    if (w.live != 32) fail("block %u thread %u: warp operation in a warp of %u live lanes", b->idx, f->tid, w.live);
    const unsigned g = w.gen;
    const int p = g & 1;
    if (w.arrived == 0)
        w.op[p] = op;
    else if (w.op[p] != op)
        fail("block %u warp %u: lanes in different warp operations (%d, %d)", b->idx, f->tid >> 5, w.op[p], op);
    w.slot[p][f->tid & 31] = v;
    progress = true;
    if (++w.arrived == w.live) {
        w.arrived = 0;
        w.gen++;
    } else {
        f->wait = W_WARP;
        f->wgen = g;
        yield();
        f->wait = W_NONE;
    }
    // The slots of generation g stay until every lane has passed the next
    // warp operation (which uses the other parity).
    return w.slot[p];
}

// emu_launch runs body for every thread of a grid of blocks, at most
// resident blocks at once (0: all), waiting blocks started in a random
// order from seed. It returns 0, or −1 with emu_error() set when a block
// failed a check or the grid deadlocked.
int emu_grid(unsigned nb, unsigned threads, size_t smem, unsigned resident, unsigned long long seed,
             const std::function<void()> &body) {
    gridDim = {nb, 1, 1};
    blockDim = {threads, 1, 1};
    kernel = &body;
    failed = false;
    err.clear();
    rng = seed;
    if (resident == 0 || resident > nb) resident = nb;
    smem = (smem + 15) & ~(size_t)15;

    std::vector<unsigned> pending(nb);
    for (unsigned i = 0; i < nb; i++) pending[i] = i;
    std::vector<std::unique_ptr<Block>> active;
    auto start = [&] {
        const size_t r = next_rand() % pending.size();
        auto b = std::make_unique<Block>();
        b->idx = pending[r];
        pending[r] = pending.back();
        pending.pop_back();
        b->smem.alloc(smem, 0xff);
        b->fib.reset(new Fiber[threads]);
        b->warps.resize((threads + 31) / 32);
        for (unsigned w = 0; w < b->warps.size(); w++) b->warps[w].live = min(32u, threads - 32 * w);
        b->live = threads;
        for (unsigned t = 0; t < threads; t++) {
            Fiber &f = b->fib[t];
            f.blk = b.get();
            f.tid = t;
            f.stack = get_stack();
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = f.stack;
            f.ctx.uc_stack.ss_size = kStack;
            f.ctx.uc_link = nullptr;
            makecontext(&f.ctx, trampoline, 0);
        }
        active.push_back(std::move(b));
    };
    auto finish = [&](Block &b) {
        for (unsigned t = 0; t < threads; t++) put_stack(b.fib[t].stack);
    };
    auto stop = [&] {
        for (auto &b : active) finish(*b);
        active.clear();
        cur = nullptr;
        kernel = nullptr;
        return -1;
    };

    while (active.size() < resident && !pending.empty()) start();
    int stall = 0;
    std::vector<Block *> order;
    while (!active.empty()) {
        progress = false;
        order.clear();
        for (auto &b : active) order.push_back(b.get());
        for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[next_rand() % i]);
        for (Block *b : order) {
            const unsigned off = (unsigned)(next_rand() % threads);
            for (unsigned k = 0; k < threads; k++) {
                Fiber &f = b->fib[(off + k) % threads];
                if (f.wait == W_DONE) continue;
                if (f.wait == W_BAR && f.wgen == b->gen) continue;
                if (f.wait == W_WARP && f.wgen == b->warps[f.tid >> 5].gen) continue;
                if (f.wait != W_SLEEP) progress = true; // it runs code it has not run
                cur = &f;
                threadIdx = {f.tid, 0, 0};
                blockIdx = {b->idx, 0, 0};
                swapcontext(&sched, &f.ctx);
                cur = nullptr;
                if (failed) return stop();
            }
        }
        for (size_t i = 0; i < active.size();) {
            if (active[i]->live == 0) {
                finish(*active[i]);
                active.erase(active.begin() + i);
                if (!pending.empty()) start();
                progress = true;
            } else {
                i++;
            }
        }
        if (progress) {
            stall = 0;
        } else if (++stall >= 4) {
            // Every live fiber waits at a barrier or sleeps in a loop
            // that read nothing new.
            char buf[256];
            unsigned sleeping = 0, barrier = 0, warp = 0;
            for (auto &b : active)
                for (unsigned t = 0; t < threads; t++) {
                    const int w = b->fib[t].wait;
                    sleeping += w == W_SLEEP, barrier += w == W_BAR, warp += w == W_WARP;
                }
            snprintf(buf, sizeof buf,
                     "deadlock: %zu resident blocks (%u threads sleeping, %u at __syncthreads, %u in warp "
                     "operations), %zu blocks not started",
                     active.size(), sleeping, barrier, warp, pending.size());
            err = buf;
            failed = true;
            return stop();
        }
    }
    cur = nullptr;
    kernel = nullptr;
    return 0;
}

// emu_launch (emu.h): every block resident, started in index order.
void emu_launch(emu_dim3 grid, emu_dim3 block, size_t smem, const std::function<void()> &body) {
    if (emu_grid(grid.x * grid.y * grid.z, block.x * block.y * block.z, smem, 0, 0, body) != 0) {
        fprintf(stderr, "partemu: %s\n", err.c_str());
        abort();
    }
}

// ---- Entry points for Go ----

extern "C" {

const char *emu_error() { return err.c_str(); }

#define EMU_SEGMENT(T, S)                                                                                           \
    int emu_segment_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca,    \
                        T cb, T cc, int isConst, int *status, int M, int Q, int mode, unsigned long long *ctl,       \
                        T *RA, T *RB, T *RC, T *RD, T *XR, int *nst, unsigned *word, unsigned seq, int threads,    \
                        int smem, int resident, unsigned long long seed) {                                          \
        return emu_grid((unsigned)(G * Q), (unsigned)threads, (size_t)smem, (unsigned)resident, seed, [&] {        \
            segment_p16_##S(a, b, c, d, x, n, G, es, bs, ca, cb, cc, isConst, status, M, Q, mode, ctl, RA, RB, RC,  \
                            RD, XR, nst, word, seq);                                                                \
        });                                                                                                         \
    }

EMU_SEGMENT(float, f32)
EMU_SEGMENT(double, f64)

// emu_lseg_*: lseg_p16_* (lseg.cuh) over ⌈G/S⌉·Q blocks.
#define EMU_LSEG(T, S)                                                                                              \
    int emu_lseg_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca,       \
                     T cb, T cc, int isConst, int *status, int M, int Q, int spb, int mode, unsigned long long *ctl, \
                     T *RA, T *RB, T *RC, T *RD, T *XR, int *nst, unsigned *word, unsigned seq, int threads,        \
                     int smem, int resident, unsigned long long seed) {                                             \
        const unsigned groups = (unsigned)((G + spb - 1) / spb);                                                    \
        return emu_grid(groups * (unsigned)Q, (unsigned)threads, (size_t)smem, (unsigned)resident, seed, [&] {       \
            lseg_p16_##S(a, b, c, d, x, n, G, es, bs, ca, cb, cc, isConst, status, M, Q, spb, mode, ctl, RA, RB, RC, \
                         RD, XR, nst, word, seq);                                                                   \
        });                                                                                                         \
    }

EMU_LSEG(float, f32)
EMU_LSEG(double, f64)

// emu_part_*: the partition kernels that solve whole systems, one block a
// system or a group of systems (partemu.Kernel: 0 … 3 partition_p4/p8/p16/
// p32, 4 partition_lanes_p16, 5 partition_const_p16, 6
// partition_stream_p16, 7 and 8 partition_cstream_p16, _warp_p16, 9
// partition_lanes_stream_p16_s8, 10 and 11 partition_cstream_rows_p16,
// _warp_rows_p16),
// grid blocks of threads threads; it returns 1 for a kernel the precision
// lacks.
#define EMU_PART_ARGS(T)                                                                                           \
    int kernel, const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb,    \
        T cc, int isConst, int *status, int spb, int tps, int grid, int threads, int smem, int resident,            \
        unsigned long long seed
#define EMU_PART_CALL(name) name(a, b, c, d, x, n, G, es, bs, ca, cb, cc, isConst, status, spb, tps, nullptr, 0)
#define EMU_PART_CONST(name) name(d, x, n, G, es, bs, ca, cb, cc, status, spb, tps, nullptr, 0)

static int emu_part_run(int grid, int threads, int smem, int resident, unsigned long long seed,
                        const std::function<void()> &body) {
    return emu_grid((unsigned)grid, (unsigned)threads, (size_t)smem, (unsigned)resident, seed, body);
}

int emu_part_f32(EMU_PART_ARGS(float)) {
    std::function<void()> body;
    switch (kernel) {
    case 0: body = [&] { EMU_PART_CALL(partition_p4_f32); }; break;
    case 1: body = [&] { EMU_PART_CALL(partition_p8_f32); }; break;
    case 2: body = [&] { EMU_PART_CALL(partition_p16_f32); }; break;
    case 3: body = [&] { EMU_PART_CALL(partition_p32_f32); }; break;
    case 4: body = [&] { EMU_PART_CALL(partition_lanes_p16_f32); }; break;
    case 5: body = [&] { EMU_PART_CONST(partition_const_p16_f32); }; break;
    case 6: body = [&] { partition_stream_p16_f32(a, b, c, d, x, n, G, es, bs, status, nullptr, 0); }; break;
    case 7: body = [&] { EMU_PART_CONST(partition_cstream_p16_f32); }; break;
    case 8: body = [&] { EMU_PART_CONST(partition_cstream_warp_p16_f32); }; break;
    case 9: body = [&] { EMU_PART_CALL(partition_lanes_stream_p16_s8_f32); }; break;
    case 10: body = [&] { EMU_PART_CONST(partition_cstream_rows_p16_f32); }; break;
    case 11: body = [&] { EMU_PART_CONST(partition_cstream_warp_rows_p16_f32); }; break;
    default: return 1;
    }
    return emu_part_run(grid, threads, smem, resident, seed, body);
}

int emu_part_f64(EMU_PART_ARGS(double)) {
    std::function<void()> body;
    switch (kernel) {
    case 0: body = [&] { EMU_PART_CALL(partition_p4_f64); }; break;
    case 1: body = [&] { EMU_PART_CALL(partition_p8_f64); }; break;
    case 2: body = [&] { EMU_PART_CALL(partition_p16_f64); }; break;
    case 4: body = [&] { EMU_PART_CALL(partition_lanes_p16_f64); }; break;
    case 5: body = [&] { EMU_PART_CONST(partition_const_p16_f64); }; break;
    case 6: body = [&] { partition_stream_p16_f64(a, b, c, d, x, n, G, es, bs, status, nullptr, 0); }; break;
    case 7: body = [&] { EMU_PART_CONST(partition_cstream_p16_f64); }; break;
    case 8: body = [&] { EMU_PART_CONST(partition_cstream_warp_p16_f64); }; break;
    case 9: body = [&] { EMU_PART_CALL(partition_lanes_stream_p16_s8_f64); }; break;
    case 10: body = [&] { EMU_PART_CONST(partition_cstream_rows_p16_f64); }; break;
    case 11: body = [&] { EMU_PART_CONST(partition_cstream_warp_rows_p16_f64); }; break;
    default: return 1;
    }
    return emu_part_run(grid, threads, smem, resident, seed, body);
}
}
