package nccl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ErrRefused is wrapped by the bootstrap's errors when the ranks'
// settings disagree: a rank that counts another number of ranks than
// rank 0, a rank out of range, a rank that joins twice, another version
// of the handshake. Rank 0 refuses every rank that has joined, so that
// the whole job stops with the same reason.
var ErrRefused = errors.New("nccl: bootstrap refused")

// The handshake. A rank other than 0 sends its hello: the magic, the
// protocol version, the number of ranks it counts and its rank (big
// endian, 20 bytes). Rank 0 answers once every rank has joined, or
// once it gives up: the magic, a status byte, then for statusOK the 128
// bytes of the id, else a 16-bit length and a message.
const (
	bootMagic    = "BSNCCLID"
	bootVersion  = 1
	helloBytes   = len(bootMagic) + 12
	statusOK     = 0
	statusRefuse = 1 // the settings disagree (ErrRefused)
	statusAbort  = 2 // rank 0 stopped waiting (its context ended, or it failed)
	maxMessage   = 1 << 12
)

// Timeouts of one connection: how long rank 0 waits for a connected
// rank's hello, and for its answer to be written.
var (
	helloTimeout = 10 * time.Second
	replyTimeout = 10 * time.Second
)

// onJoin, when not nil, is called by Serve with each rank it accepts
// (a hook of the tests, which order ranks by it).
var onJoin func(rank int)

// Bootstrap gives every rank of a job of nranks ranks the same NCCL
// unique id, over TCP. Rank 0 listens on addr (host:port; a port of 0 is
// of no use, as the others cannot know it), makes the id with newID
// (Lib.GetUniqueID, with its device current) and hands it to the
// nranks−1 other ranks once all of them have joined, then returns it.
// The other ranks dial addr, retrying until it answers, and return the
// id that rank 0 hands out; newID is not called there.
//
// ctx bounds the whole exchange: a rank that gives up returns an error
// wrapping ctx.Err(); rank 0 that gives up tells the ranks that have
// joined. Ranks whose settings disagree get errors wrapping ErrRefused.
// With nranks = 1, Bootstrap returns newID's id without a network.
func Bootstrap(ctx context.Context, addr string, rank, nranks int, newID func() (UniqueID, error)) (UniqueID, error) {
	if err := checkRank(rank, nranks); err != nil {
		return UniqueID{}, err
	}
	if rank != 0 {
		return Join(ctx, addr, rank, nranks)
	}
	if nranks == 1 {
		id, err := newID()
		if err != nil {
			return UniqueID{}, fmt.Errorf("nccl: making the unique id: %w", err)
		}
		return id, nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return UniqueID{}, fmt.Errorf("nccl: rank 0 listening on %s: %w", addr, err)
	}
	id, err := newID()
	if err != nil {
		_ = ln.Close()
		return UniqueID{}, fmt.Errorf("nccl: rank 0 making the unique id: %w", err)
	}
	if err := Serve(ctx, ln, nranks, id); err != nil {
		return UniqueID{}, err
	}
	return id, nil
}

func checkRank(rank, nranks int) error {
	if nranks < 1 {
		return fmt.Errorf("nccl: a job needs at least one rank, not %d", nranks)
	}
	if rank < 0 || rank >= nranks {
		return fmt.Errorf("nccl: rank %d out of range for %d ranks", rank, nranks)
	}
	return nil
}

// hello is what a connected rank sent.
type hello struct {
	conn    net.Conn
	version uint32
	nranks  int
	rank    int
	ours    bool // the magic matched: a rank of a bandsolve job
}

// Serve is rank 0's side of Bootstrap on a listener already open (one
// whose port was 0, say, or one a parent process passed down): it waits
// until the nranks−1 other ranks have joined, checks their hellos,
// hands id to each and returns nil. It returns an error, after telling
// the ranks that have joined, when a rank's settings disagree (wrapping
// ErrRefused) or when ctx ends first (wrapping ctx.Err()). Connections
// that are not a rank's hello are closed and ignored. Serve closes ln.
func Serve(ctx context.Context, ln net.Listener, nranks int, id UniqueID) error {
	defer ln.Close()
	if nranks < 1 {
		return fmt.Errorf("nccl: a job needs at least one rank, not %d", nranks)
	}
	if nranks == 1 {
		return nil
	}
	addr := ln.Addr().String()
	stopClose := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stopClose()

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		pending = map[net.Conn]bool{} // connected, hello not yet taken
		closing bool                  // Serve is returning: close new connections
		hellos  = make(chan hello)
		acceptE = make(chan error, 1)
		done    = make(chan struct{})
	)
	defer func() {
		close(done)
		_ = ln.Close()
		mu.Lock()
		closing = true
		for c := range pending {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				acceptE <- err
				return
			}
			mu.Lock()
			if closing {
				mu.Unlock()
				_ = c.Close()
				continue
			}
			pending[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := readHello(c)
				select {
				case hellos <- h:
				case <-done:
				}
			}()
		}
	}()

	joined := map[int]net.Conn{}
	// stop answers every rank that has joined (and extra, a rank just
	// refused) with status and msg, closes them and returns err.
	stop := func(err error, status byte, msg string, extra net.Conn) error {
		conns := make([]net.Conn, 0, len(joined)+1)
		for _, c := range joined {
			conns = append(conns, c)
		}
		if extra != nil {
			conns = append(conns, extra)
		}
		for _, c := range conns {
			_ = writeReply(c, status, nil, msg)
			_ = c.Close()
		}
		return err
	}
	// gaveUp stops when ctx has ended.
	gaveUp := func() error {
		why := fmt.Sprintf("rank 0 stopped waiting: %d of %d ranks joined, missing %v", len(joined)+1, nranks, missing(joined, nranks))
		return stop(fmt.Errorf("nccl: rank 0 at %s: %s: %w", addr, why, ctx.Err()), statusAbort, why+": "+ctx.Err().Error(), nil)
	}
	for len(joined) < nranks-1 {
		select {
		case h := <-hellos:
			mu.Lock()
			delete(pending, h.conn)
			mu.Unlock()
			if !h.ours {
				_ = h.conn.Close()
				continue
			}
			from := h.conn.RemoteAddr().String()
			var why string
			switch {
			case h.version != bootVersion:
				why = fmt.Sprintf("rank %d (from %s) speaks version %d of the handshake, rank 0 version %d", h.rank, from, h.version, bootVersion)
			case h.nranks != nranks:
				why = fmt.Sprintf("rank %d (from %s) counts %d ranks, rank 0 counts %d", h.rank, from, h.nranks, nranks)
			case h.rank < 1 || h.rank >= nranks:
				why = fmt.Sprintf("rank %d (from %s) is out of range for %d ranks (the others are 1 to %d)", h.rank, from, nranks, nranks-1)
			case joined[h.rank] != nil:
				why = fmt.Sprintf("rank %d joined twice (from %s and %s)", h.rank, joined[h.rank].RemoteAddr(), from)
			}
			if why != "" {
				return stop(fmt.Errorf("%w: rank 0 at %s: %s", ErrRefused, addr, why), statusRefuse, why, h.conn)
			}
			joined[h.rank] = h.conn
			if onJoin != nil {
				onJoin(h.rank)
			}
		case <-ctx.Done():
			return gaveUp()
		case err := <-acceptE:
			if ctx.Err() != nil {
				return gaveUp()
			}
			why := fmt.Sprintf("rank 0 could not accept connections: %v", err)
			return stop(fmt.Errorf("nccl: rank 0 at %s: %s", addr, why), statusAbort, why, nil)
		}
	}
	var errs []error
	for r, c := range joined {
		if err := writeReply(c, statusOK, id[:], ""); err != nil {
			errs = append(errs, fmt.Errorf("nccl: rank 0 at %s handing the id to rank %d: %w", addr, r, err))
		}
		_ = c.Close()
	}
	return errors.Join(errs...)
}

// missing lists the ranks other than 0 that have not joined.
func missing(joined map[int]net.Conn, nranks int) []int {
	var out []int
	for r := 1; r < nranks; r++ {
		if joined[r] == nil {
			out = append(out, r)
		}
	}
	return out
}

// readHello reads a connected rank's hello; ours is false when the
// bytes are not one.
func readHello(c net.Conn) hello {
	h := hello{conn: c}
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	var b [helloBytes]byte
	if _, err := io.ReadFull(c, b[:]); err != nil || string(b[:len(bootMagic)]) != bootMagic {
		return h
	}
	_ = c.SetReadDeadline(time.Time{})
	p := b[len(bootMagic):]
	h.ours = true
	h.version = binary.BigEndian.Uint32(p)
	h.nranks = int(int32(binary.BigEndian.Uint32(p[4:])))
	h.rank = int(int32(binary.BigEndian.Uint32(p[8:])))
	return h
}

// writeReply writes rank 0's answer: the id for statusOK, msg otherwise.
func writeReply(c net.Conn, status byte, id []byte, msg string) error {
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	b := append([]byte(bootMagic), status)
	if status == statusOK {
		b = append(b, id...)
	} else {
		if len(msg) > maxMessage {
			msg = msg[:maxMessage]
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(msg)))
		b = append(b, msg...)
	}
	_, err := c.Write(b)
	return err
}

// Join is the side of Bootstrap of a rank other than 0: it dials rank 0
// at addr, retrying until it answers or ctx ends, sends its hello and
// waits for the id, which rank 0 hands out once every rank has joined.
// An error wraps ErrRefused when rank 0 refused the rank's settings,
// ctx.Err() when ctx ended first.
func Join(ctx context.Context, addr string, rank, nranks int) (UniqueID, error) {
	if err := checkRank(rank, nranks); err != nil {
		return UniqueID{}, err
	}
	if rank == 0 {
		return UniqueID{}, errors.New("nccl: rank 0 makes the id and serves it; Join is for the other ranks")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return UniqueID{}, fmt.Errorf("nccl: rank %d: rank 0's address %q: %w", rank, addr, err)
	}
	c, err := dial(ctx, addr)
	if err != nil {
		return UniqueID{}, fmt.Errorf("nccl: rank %d could not reach rank 0 at %s: %w", rank, addr, err)
	}
	defer c.Close()
	// ctx's end unblocks the reads and writes below.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fail := func(what string, err error) (UniqueID, error) {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return UniqueID{}, fmt.Errorf("nccl: rank %d %s rank 0 at %s: %w", rank, what, addr, err)
	}
	b := append([]byte(bootMagic), make([]byte, 12)...)
	p := b[len(bootMagic):]
	binary.BigEndian.PutUint32(p, bootVersion)
	binary.BigEndian.PutUint32(p[4:], uint32(nranks))
	binary.BigEndian.PutUint32(p[8:], uint32(rank))
	if _, err := c.Write(b); err != nil {
		return fail("sending its hello to", err)
	}
	var head [len(bootMagic) + 1]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("the connection closed before an answer")
		}
		return fail("waiting for the id from", err)
	}
	if string(head[:len(bootMagic)]) != bootMagic {
		return fail("reading the answer of", errors.New("not a bandsolve bootstrap (the magic differs)"))
	}
	if status := head[len(bootMagic)]; status != statusOK {
		var n [2]byte
		msg := "(no reason given)"
		if _, err := io.ReadFull(c, n[:]); err == nil {
			m := make([]byte, binary.BigEndian.Uint16(n[:]))
			if _, err := io.ReadFull(c, m); err == nil {
				msg = string(m)
			}
		}
		if status == statusRefuse {
			return UniqueID{}, fmt.Errorf("%w: rank %d: rank 0 at %s refused the job: %s", ErrRefused, rank, addr, msg)
		}
		return UniqueID{}, fmt.Errorf("nccl: rank %d: rank 0 at %s gave up: %s", rank, addr, msg)
	}
	var id UniqueID
	if _, err := io.ReadFull(c, id[:]); err != nil {
		return fail("reading the id from", err)
	}
	return id, nil
}

// dial connects to addr, retrying with a growing pause (up to half a
// second) until it succeeds or ctx ends; the error then wraps ctx.Err()
// and names the last failure.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	pause := 20 * time.Millisecond
	var last error
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		if ctx.Err() == nil {
			last = err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			if last == nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w (last attempt: %v)", ctx.Err(), last)
		case <-t.C:
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}
