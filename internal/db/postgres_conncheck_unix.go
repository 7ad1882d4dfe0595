//go:build unix

package db

import (
	"context"
	"crypto/tls"
	"database/sql/driver"
	"errors"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// discardClosedConn is the PostgreSQL pool's check of a connection it is about to hand out again:
// a connection the server has closed (a restart or shutdown terminates every backend, sending
// 57P01 and closing the socket) has bytes or an end of stream waiting on its idle socket, while a
// live idle connection has none. Peeking at the socket without waiting (one non-blocking recv
// that leaves the bytes in place) finds it; database/sql then discards it and hands out another,
// or opens a fresh one, instead of failing the next BEGIN or query with the dead connection's
// error. The check costs one system call and no round trip.
func discardClosedConn(_ context.Context, conn *pgx.Conn) error {
	if peerClosed(conn.PgConn().Conn()) {
		return driver.ErrBadConn
	}
	return nil
}

// peerClosed reports whether the idle connection c has anything to read (the server sends
// nothing unasked to an idle session but its goodbye) or has reached its end.
func peerClosed(c net.Conn) bool {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	_ = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		case err != nil, n >= 0:
			closed = true
		}
		return true // never wait for the socket to become readable
	})
	return closed
}
