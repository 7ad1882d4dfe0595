package server

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The bounds of the descriptor reserve and of a refusal (connLimiter).
const (
	// minDescriptorReserve is the least of the descriptor limit left to everything but client
	// connections: the database pool (PostgreSQL's 20 connections; SQLite's 9, with their WAL and
	// shared-memory files), the delivery worker's outgoing connections, the listener, the
	// extension catalog and log files, the runtime's own (epoll, pipes), and the connections
	// being refused at the moment.
	minDescriptorReserve = 64
	// minMaxConnections is the least cap derived, whatever the descriptor limit.
	minMaxConnections = 16
	// maxRefusing bounds the refusals being written at once; a connection arriving beyond it is
	// closed without an answer (each refusal holds its descriptor for up to refusalTime).
	maxRefusing = 16
	// refusalTime bounds one refusal: the TLS handshake (on a TLS port), writing the answer and
	// reading what the client sent until it closes.
	refusalTime = time.Second
	// refusalDrainBytes is the most a refusal reads of the client's request (a request head, and
	// the start of a body): enough for the client to be reading its answer, not a read-out of
	// an upload.
	refusalDrainBytes = 64 << 10
)

// DerivedMaxConnections is the cap on open client connections when none is configured: the
// process's descriptor limit (RLIMIT_NOFILE's soft limit, which the Go runtime raises to the hard
// one at start) less a reserve of max(64, limit/4) descriptors for everything else, and at least
// 16. It returns 0 (no cap) when the limit is unlimited or beyond what a cap would mean
// (over 2^30), and an error only when the limit cannot be read.
func DerivedMaxConnections() (int, error) {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return 0, fmt.Errorf("reading the descriptor limit (RLIMIT_NOFILE): %w", err)
	}
	return maxConnectionsFor(limit.Cur), nil
}

// maxConnectionsFor is DerivedMaxConnections for a descriptor limit.
func maxConnectionsFor(descriptors uint64) int {
	if descriptors > 1<<30 {
		return 0
	}
	limit := int(descriptors)
	return max(limit-max(minDescriptorReserve, limit/4), minMaxConnections)
}

// LimitConnections returns l holding at most maxConns client connections open at once (0: no
// cap; they are still counted). A connection accepted at the cap first makes room by closing the
// connection idle the longest (a keep-alive connection between requests); when none is idle, it
// is answered 503 with the Error body, Retry-After: 1 and Connection: close once its request's
// head is read (over TLS when srv serves TLS, negotiating HTTP/1.1), within one second, and closed; the refusals are logged at
// WARN at most once a second, with their count. /metrics has mgmtapi_connections_open,
// mgmtapi_connections_max, mgmtapi_connections_idle_closed_total and
// mgmtapi_connections_refused_total{answer="503"|"closed"} (closed: more than 16 refusals were
// being written at once).
//
// srv is the server that will serve the returned listener: LimitConnections sets its ConnState
// (calling the hook already set, if any) and reads its TLSConfig; call it once srv is configured,
// before RefusalListener (which keeps this hook) and Serve or ServeTLS, and once per Handler.
//
// Limitation: an idle connection is closed when net/http last reported it idle; a request whose
// first bytes arrive at that moment is lost with it, as with net/http's own IdleTimeout (Go's
// transport, among others, retries such a request on a new connection when it can).
func (h *Handler) LimitConnections(l net.Listener, srv *http.Server, maxConns int) net.Listener {
	cl := &connLimiter{Listener: l, h: h, max: maxConns, tlsConfig: srv.TLSConfig, next: srv.ConnState}
	if cl.max <= 0 {
		cl.max = math.MaxInt
	} else {
		h.metrics.connectionsMax.Set(float64(maxConns))
	}
	body, _ := json.Marshal(refusalBody{Code: http.StatusServiceUnavailable, Message: fmt.Sprintf(
		"connection: the server holds as many client connections as it may (%d) and none is idle; retry in a moment",
		maxConns)})
	cl.answer = fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"+
		"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	cl.idle.prev, cl.idle.next = &cl.idle, &cl.idle
	srv.ConnState = cl.connState
	return cl
}

type connLimiter struct {
	net.Listener
	h         *Handler
	max       int
	tlsConfig *tls.Config
	next      func(net.Conn, http.ConnState)
	// answer is the whole answer to a connection refused at the cap.
	answer []byte

	mu   sync.Mutex
	open int
	// idle is the ring of the idle connections, the longest idle first after it (its own conn
	// fields are unused).
	idle     limitedConn
	refusing atomic.Int32
	log      shedLog
}

// limitedConn is one connection accepted by a connLimiter.
type limitedConn struct {
	net.Conn
	l *connLimiter
	// prev and next link the connection in l.idle while it is idle (nil otherwise); closed is set
	// by its first Close. All three are guarded by l.mu.
	prev, next *limitedConn
	closed     bool
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if admitted := l.admit(c); admitted != nil {
			return admitted, nil
		}
	}
}

// admit returns c counted, after closing the longest idle connection when at the cap, or nil
// when c was refused.
func (l *connLimiter) admit(c net.Conn) net.Conn {
	l.mu.Lock()
	var evicted *limitedConn
	if l.open >= l.max {
		if evicted = l.idle.next; evicted == &l.idle {
			l.mu.Unlock()
			l.refuse(c)
			return nil
		}
		evicted.unlinkLocked()
	}
	l.open++
	l.mu.Unlock()
	l.h.metrics.connectionsOpen.Inc()
	if evicted != nil {
		_ = evicted.Close()
		l.h.metrics.connectionsIdleClosed.Inc()
	}
	return &limitedConn{Conn: c, l: l}
}

// connState keeps l.idle: a connection enters it when net/http reports it idle and leaves it
// with any other state.
func (l *connLimiter) connState(nc net.Conn, state http.ConnState) {
	if c := asLimitedConn(nc); c != nil {
		l.mu.Lock()
		if state == http.StateIdle && c.prev == nil && !c.closed {
			c.prev, c.next = l.idle.prev, &l.idle
			l.idle.prev.next = c
			l.idle.prev = c
		} else if state != http.StateIdle && c.prev != nil {
			c.unlinkLocked()
		}
		l.mu.Unlock()
	}
	if l.next != nil {
		l.next(nc, state)
	}
}

// asLimitedConn finds the limitedConn under nc, the connection net/http reports: it may be one,
// or hold one (RefusalListener's connection, a *tls.Conn).
func asLimitedConn(nc net.Conn) *limitedConn {
	for range 4 {
		switch c := nc.(type) {
		case *limitedConn:
			return c
		case interface{ NetConn() net.Conn }:
			nc = c.NetConn()
		default:
			return nil
		}
	}
	return nil
}

func (c *limitedConn) unlinkLocked() {
	c.prev.next, c.next.prev = c.next, c.prev
	c.prev, c.next = nil, nil
}

// Close closes the connection and, the first time, gives its place back.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	first := !c.closed
	c.closed = true
	if first {
		if c.prev != nil {
			c.unlinkLocked()
		}
		c.l.open--
	}
	c.l.mu.Unlock()
	if first {
		c.l.h.metrics.connectionsOpen.Dec()
	}
	return err
}

// CloseWrite half-closes the connection, as net/http does before closing after some answers.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the underlying connection's copy path (sendfile, splice).
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// refuse answers c 503 and closes it, in a goroutine of its own (Accept goes on), or closes it
// at once when maxRefusing refusals are being written.
func (l *connLimiter) refuse(c net.Conn) {
	if l.refusing.Add(1) > maxRefusing {
		l.refusing.Add(-1)
		_ = c.Close()
		l.h.metrics.connectionsRefused.WithLabelValues("closed").Inc()
		l.logRefusal()
		return
	}
	l.h.metrics.connectionsRefused.WithLabelValues("503").Inc()
	l.logRefusal()
	go func() {
		defer l.refusing.Add(-1)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refusalTime))
		var conn net.Conn = c
		if l.tlsConfig != nil {
			config := l.tlsConfig.Clone()
			config.NextProtos = []string{"http/1.1"}
			tc := tls.Server(c, config)
			if tc.Handshake() != nil {
				return
			}
			conn = tc
		}
		// The answer follows the request's head (a client such as Go's takes bytes that come
		// before its request for a broken connection); then half-close, and read what the client
		// still sends until it closes: closing with data unread would reset the connection and
		// could discard the answer before it is read.
		read, ok := readRequestHead(conn)
		if !ok {
			return
		}
		if _, err := conn.Write(l.answer); err != nil {
			return
		}
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.CopyN(io.Discard, conn, refusalDrainBytes-read)
	}()
}

// readRequestHead reads from conn up to the empty line that ends a request's header fields, at
// most refusalDrainBytes; it returns the bytes read and whether the empty line was found (false
// too when the client closed or the deadline passed first).
func readRequestHead(conn net.Conn) (int64, bool) {
	var buf [4096]byte
	var read int64
	var tail []byte // the last 3 bytes read, for an empty line split across reads
	for read < refusalDrainBytes {
		n, err := conn.Read(buf[:])
		if n > 0 {
			read += int64(n)
			chunk := append(tail, buf[:n]...)
			if bytes.Contains(chunk, []byte("\r\n\r\n")) {
				return read, true
			}
			tail = append(tail[:0], chunk[max(len(chunk)-3, 0):]...)
		}
		if err != nil {
			return read, false
		}
	}
	return read, false
}

// logRefusal counts a refusal and logs the count at WARN at most once a second.
func (l *connLimiter) logRefusal() {
	if n, due := l.log.count(time.Now()); due {
		l.h.opts.Logger.Warn("connection cap reached: new connections refused with 503 since the last such line",
			"refused", n, "max_connections", l.max)
	}
}
