package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrHeldElsewhere is Open's error, and on PostgreSQL a write transaction's, when another mgmtapi
// process holds the database in a way this one may not share: a server with
// Options.PostgresAlone holds it, or this process asks to hold it alone and another process uses
// it. FaultOf counts it as FaultUnavailable.
var ErrHeldElsewhere = errors.New("another mgmtapi process holds this PostgreSQL database")

// holdRetry is the pause between attempts to take the hold again after its connection was lost;
// holdStartWait is how long a refused hold is tried again at start, every holdStartRetry;
// holdProbeIdle and holdProbeInterval pace the TCP keep-alive probes of the hold's connection.
const (
	holdRetry         = time.Second
	holdStartWait     = time.Second
	holdStartRetry    = 50 * time.Millisecond
	holdProbeIdle     = 5 * time.Second
	holdProbeInterval = 2 * time.Second
)

// postgresHold is the advisory lock every mgmtapi process keeps on its PostgreSQL database (the
// schema its search_path names first) while it has it open: a shared lock for the replicas that
// use it together, an exclusive one for the server that uses it alone (Options.PostgresAlone).
// PostgreSQL grants the exclusive lock only while no other session holds either kind, and a
// shared one only while no session holds the exclusive one, so a server that holds the database
// alone is alone for as long as its hold lasts: every write to the database is then one of its
// own write transactions, which its answer cache fences.
//
// The lock belongs to a connection of its own, outside the pool, which watch watches. When
// PostgreSQL closes it (a restart, the connection killed), the lock is gone: the answer cache
// counts as written to (no answer kept or given) until the hold is taken again, and if another
// process took it in the meantime in a way this one may not share, this process's write
// transactions fail with ErrHeldElsewhere until it gets the hold back.
type postgresHold struct {
	config  *pgx.ConnConfig
	alone   bool
	answers *answerCache // nil unless alone
	// refused is set while the hold, lost, cannot be taken again because another process holds
	// the database in a conflicting way.
	refused atomic.Bool
	// taken and lost count the times the hold was taken and its connection lost, and pid is the
	// PostgreSQL backend of its connection (tests watch them).
	taken  atomic.Int64
	lost   atomic.Int64
	pid    atomic.Uint32
	cancel context.CancelFunc
	done   chan struct{}
}

// holdPostgres takes the hold on the database of config (exclusive when alone) and starts
// watching it. It returns ErrHeldElsewhere, wrapped with what holds it, when PostgreSQL refuses
// the lock.
func holdPostgres(ctx context.Context, config *pgx.ConnConfig, alone bool, answers *answerCache) (*postgresHold, error) {
	config = config.Copy()
	// The hold's connection is idle for good: TCP keep-alive probes every few seconds find a
	// connection the network cut without a word in about holdProbeIdle + 3 × holdProbeInterval,
	// instead of the system's default (two hours before the first probe).
	dialer := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: holdProbeIdle, Interval: holdProbeInterval, Count: 3}}
	config.DialFunc = dialer.DialContext
	h := &postgresHold{config: config, alone: alone, answers: answers, done: make(chan struct{})}
	conn, err := h.take(ctx)
	// A process that has just closed its hold (a server stopped before this one starts) leaves
	// PostgreSQL to drop the lock when that process's backend exits, a moment after: a refusal is
	// tried again for holdStartWait before it stands.
	for deadline := time.Now().Add(holdStartWait); errors.Is(err, ErrHeldElsewhere) && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(holdStartRetry):
		}
		conn, err = h.take(ctx)
	}
	if err != nil {
		return nil, err
	}
	watchCtx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.watch(watchCtx, conn)
	return h, nil
}

// take opens the hold's connection and takes the lock on it.
func (h *postgresHold) take(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, h.config)
	if err != nil {
		return nil, fmt.Errorf("hold the database: %w", err)
	}
	lock := "pg_try_advisory_lock_shared"
	if h.alone {
		lock = "pg_try_advisory_lock"
	}
	// The key names the schema, so that databases kept side by side in schemas of one
	// PostgreSQL database (tests do) are held apart.
	var taken bool
	err = conn.QueryRow(ctx, `SELECT `+lock+`(hashtextextended('mgmtapi.server:' || coalesce(current_schema(), ''), 0))`).Scan(&taken)
	if err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("hold the database: %w", err)
	}
	if !taken {
		_ = conn.Close(context.Background())
		if h.alone {
			return nil, fmt.Errorf("%w: another mgmtapi process uses it, and --postgres-access exclusive needs it alone (stop the others, or run this one with --postgres-access shared)", ErrHeldElsewhere)
		}
		return nil, fmt.Errorf("%w alone (a server run with --postgres-access exclusive): stop it, or run it with --postgres-access shared", ErrHeldElsewhere)
	}
	h.pid.Store(conn.PgConn().PID())
	h.taken.Add(1)
	return conn, nil
}

// watch waits for the hold's connection to end; until ctx ends, it takes the hold again on a new
// connection, at once and then every holdRetry, fencing the answer cache meanwhile.
func (h *postgresHold) watch(ctx context.Context, conn *pgx.Conn) {
	defer close(h.done)
	for {
		// No LISTEN was issued, so this returns only when the connection fails or ctx ends.
		_, err := conn.WaitForNotification(ctx)
		if err == nil {
			continue
		}
		_ = conn.Close(context.Background())
		if ctx.Err() != nil {
			return
		}
		if h.answers != nil {
			h.answers.writing() // another process may write from now on
		}
		h.lost.Add(1)
		// The first attempt is at once: while the hold is lost another process may take the
		// database in a way this one may not share, and this one's writes go on until it knows.
		for attempt := 0; conn == nil || attempt == 0; attempt++ {
			if attempt > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(holdRetry):
				}
			}
			var takeErr error
			conn, takeErr = h.take(ctx)
			h.refused.Store(errors.Is(takeErr, ErrHeldElsewhere))
		}
		if h.answers != nil {
			h.answers.written()
		}
	}
}

// heldElsewhere returns ErrHeldElsewhere while another process holds the database in a way this
// one may not share, nil otherwise.
func (h *postgresHold) heldElsewhere() error {
	if h != nil && h.refused.Load() {
		return fmt.Errorf("%w: this process's hold on it was lost and is refused", ErrHeldElsewhere)
	}
	return nil
}

// release stops the watch and closes the hold's connection, which drops the lock.
func (h *postgresHold) release() {
	h.cancel()
	<-h.done
}
