//go:build !unix

package db

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// discardClosedConn checks nothing where sockets cannot be peeked at: a connection PostgreSQL
// closed fails its next use, and the write transaction that finds it is tried again once (see
// inTxRetried).
func discardClosedConn(context.Context, *pgx.Conn) error { return nil }
