package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// AuditEntry is what the API layer knows of a mutation request before its handler runs: who made
// it, which operation, on what, from where. Put on the request's context with WithAudit, it makes
// every write transaction that commits for the request carry one audit record (see InTx), written
// in that transaction: the change and its record commit together or not at all.
//
// The API layer fills it in two steps on the same value: the request's part (operation, path ids,
// request id, client) when it routes the request, and the caller's part (team, key) when the key
// is authenticated. A transaction writes a record only once KeyID is set, so the writes that
// authentication itself may make are never recorded as the request's.
type AuditEntry struct {
	// TeamID is the team the change belongs to: the caller's team, or for an operator operation
	// the team its path names (0 when neither: a team being created declares it, see
	// Tx.AuditTeam).
	TeamID int64
	// KeyID and KeyName name the key that authenticated the request (never its value); the
	// operator key is "operator".
	KeyID, KeyName string
	// Operation is the operationId of the request.
	Operation string
	// PathIDs are the values of the path's parameters, in the path's order.
	PathIDs []string
	// RequestID is the request's X-Request-Id (given or made).
	RequestID string
	// Client is the address of the peer that sent the request.
	Client string
	// Status is the status the operation answers when its change is committed.
	Status int
}

type auditKey struct{}

// WithAudit returns a context whose write transactions record e (see AuditEntry).
func WithAudit(ctx context.Context, e *AuditEntry) context.Context {
	return context.WithValue(ctx, auditKey{}, e)
}

// WithoutAudit returns a context whose write transactions record nothing, for work done on
// behalf of a request that is not its change.
func WithoutAudit(ctx context.Context) context.Context {
	if AuditFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, auditKey{}, (*AuditEntry)(nil))
}

// WithLazyCommit returns a context whose write transactions need not wait for their commit to
// reach the disk. A batch of the group committer commits so only when every member of it asked
// to. On SQLite, InTx then returns once the commit is in the write-ahead log in the operating
// system's cache, without its fsync (synchronous NORMAL), and the members that wait for the disk
// start the next batch. On PostgreSQL the batch commits with synchronous_commit off: COMMIT
// returns before its WAL is flushed. A crash of mgmtapi loses none of it; a power cut, or a crash
// of the operating system or of PostgreSQL, may undo it, and the next commit that waits for the
// disk makes it durable with its own (both logs are written in order, so no ordinary commit after
// it is kept without it). It is for work whose loss is repaired by doing it again, never for a
// request's change: the delivery worker's leases, routings and outcomes (a lost outcome sends
// its notification again; deliveries are at least once), so that they hold the single SQLite
// writer, or PostgreSQL's WAL flush, for a moment rather than for an fsync.
func WithLazyCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, lazyCommitKey{}, true)
}

type lazyCommitKey struct{}

// lazyCommit says whether ctx carries WithLazyCommit.
func lazyCommit(ctx context.Context) bool {
	lazy, _ := ctx.Value(lazyCommitKey{}).(bool)
	return lazy
}

// AuditFrom returns the entry WithAudit put on ctx, or nil.
func AuditFrom(ctx context.Context) *AuditEntry {
	e, _ := ctx.Value(auditKey{}).(*AuditEntry)
	return e
}

// txAudit is the audit state of one transaction: the request's entry and what the transaction
// itself adds to it. It lives on the Tx, so a PostgreSQL transaction run again starts it afresh
// and a group-commit member's record is written inside its own savepoint.
type txAudit struct {
	entry  *AuditEntry
	teamID int64    // declared by the area (Tx.AuditTeam); wins over entry.TeamID when set
	ids    []string // minted by Tx.NewID or declared by Tx.AuditResource, in order
}

// maxAuditIDs bounds the resource ids one record keeps: the path's, then the first ones minted or
// declared (a batch may mint one per item).
const maxAuditIDs = 100

// startAudit arms tx's audit state when ctx carries an authenticated entry.
func (tx *Tx) startAudit(ctx context.Context) {
	if e := AuditFrom(ctx); e != nil && e.KeyID != "" {
		tx.audit = &txAudit{entry: e}
	}
}

// AuditResource adds ids to the resource ids of the audit record this transaction writes, for the
// ids not minted by NewID (numbered ids, ids made before the transaction). Outside an audited
// request it does nothing.
func (tx *Tx) AuditResource(ids ...string) {
	if tx.audit != nil {
		tx.audit.ids = append(tx.audit.ids, ids...)
	}
}

// AuditTeam names the team of the audit record this transaction writes, for an operation whose
// team neither the caller's key nor the path gives (a team being created). Outside an audited
// request it does nothing.
func (tx *Tx) AuditTeam(teamID int64) {
	if tx.audit != nil {
		tx.audit.teamID = teamID
	}
}

// auditInsert is the statement that writes a transaction's audit record.
const auditInsert = auditInsertInto + `($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// auditInsertInto is the start of every INSERT of audit records, up to its VALUES.
const auditInsertInto = `INSERT INTO audit_records (at, team_id, key_id, key_name, operation, resource_ids, request_id, client, status) VALUES `

// auditInsertTexts are the texts of auditInsertRows for each engine, built once.
var auditInsertTexts = func() map[Engine][]string {
	texts := map[Engine][]string{}
	for _, engine := range []Engine{SQLite, Postgres} {
		texts[engine] = make([]string, auditRowsPerStatement+1)
		for n := 1; n <= auditRowsPerStatement; n++ {
			var b strings.Builder
			b.WriteString(auditInsertInto)
			for i := range n {
				if i > 0 {
					b.WriteString(", ")
				}
				if engine == SQLite {
					b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
					continue
				}
				b.WriteString("(")
				for c := range 9 {
					if c > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "$%d", i*9+c+1)
				}
				b.WriteString(")")
			}
			texts[engine][n] = b.String()
		}
	}
	return texts
}()

// auditInsertRows is auditInsert for n records (1 to auditRowsPerStatement), their arguments
// one record's after the other's. On SQLite its parameters are the anonymous ones: the driver
// looks the name of every numbered parameter up before binding it, which a statement of
// hundreds of them makes quadratic.
func auditInsertRows(engine Engine, n int) string { return auditInsertTexts[engine][n] }

// batchAuditInserts gives insert the INSERTs that write the audit records of a batch's kept
// members, in their order, up to auditRowsPerStatement records each (members without a record
// have a nil audit). It stops at insert's first error.
func batchAuditInserts(engine Engine, kept []*groupMember, insert func(query string, args []any) error) error {
	var rows []any
	n := 0
	for i, k := range kept {
		if k.audit != nil {
			rows = append(rows, k.audit...)
			n++
		}
		if n == auditRowsPerStatement || n > 0 && i == len(kept)-1 {
			if err := insert(auditInsertRows(engine, n), rows); err != nil {
				return err
			}
			rows, n = nil, 0
		}
	}
	return nil
}

// auditArgs returns the arguments of auditInsert for the transaction's record, or nil when the
// transaction serves no audited request.
func (tx *Tx) auditArgs() ([]any, error) {
	a := tx.audit
	if a == nil {
		return nil, nil
	}
	e := a.entry
	team := e.TeamID
	if a.teamID != 0 {
		team = a.teamID
	}
	ids := make([]string, 0, len(e.PathIDs)+len(a.ids))
	ids = append(ids, e.PathIDs...)
	for _, id := range a.ids {
		if len(ids) == maxAuditIDs {
			break
		}
		ids = append(ids, id)
	}
	resources, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("audit record: %w", err)
	}
	return []any{tx.Now.UnixMicro(), team, e.KeyID, e.KeyName, e.Operation, string(resources), e.RequestID, e.Client, e.Status}, nil
}

// writeAudit inserts the transaction's audit record; the last work before its commit (or before
// its savepoint is released). A failure fails the transaction: no change without its record.
func (tx *Tx) writeAudit(ctx context.Context) error {
	args, err := tx.auditArgs()
	if args == nil || err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, auditInsert, args...); err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	return nil
}
