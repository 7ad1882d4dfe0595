package db

import (
	"context"
	"database/sql/driver"
	"time"
)

// pgConnectWait bounds how long opening a PostgreSQL connection keeps trying while PostgreSQL
// cannot be used (it refuses connections, is shutting down or starting up: FaultUnavailable),
// at pauses of pgConnectPause doubling: a restart of a second or less is then a delay for the
// requests that need a new connection during it, reads and writes and key lookups alike, not a
// 503. Past it the error is the request's 503.
const (
	pgConnectWait  = 2 * time.Second
	pgConnectPause = 25 * time.Millisecond
)

// patientConnector opens PostgreSQL connections for database/sql, trying again for up to
// pgConnectWait while PostgreSQL cannot be used, unless the context says not to wait
// (withoutConnectWait: /readyz wants to know now). Any other failure (a refused password, a
// missing database) is answered at once.
type patientConnector struct{ driver.Connector }

func (c patientConnector) Connect(ctx context.Context) (driver.Conn, error) {
	waited, pause := time.Duration(0), pgConnectPause
	for {
		conn, err := c.Connector.Connect(ctx)
		if err == nil || FaultOf(err) != FaultUnavailable || ctx.Value(noConnectWait{}) != nil ||
			waited+pause > pgConnectWait {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
		waited, pause = waited+pause, 2*pause
	}
}

// noConnectWait marks a context whose connections are opened once, without waiting.
type noConnectWait struct{}

// withoutConnectWait returns ctx marked so that a PostgreSQL connection opened for it is tried
// once (see patientConnector).
func withoutConnectWait(ctx context.Context) context.Context {
	return context.WithValue(ctx, noConnectWait{}, true)
}
