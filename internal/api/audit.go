package api

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/server"
)

// The audit log (see docs/operations.md): every request that may change state (any method but
// GET and HEAD) carries a db.AuditEntry from routing on. withAudit fills in the request's part;
// the security handler the caller's part once the key is accepted (auditCaller, auditOperator);
// db.InTx writes the record in each write transaction that commits for the request. A request
// refused before that, or whose operation fails, writes none.

// newAuditEntry is the audit entry of r, a request for op with the path parameters args, which
// ServeHTTP puts on its context. The caller sends only requests that may change state (no GET or
// HEAD).
func newAuditEntry(r *http.Request, op *operation, args []string) *db.AuditEntry {
	return &db.AuditEntry{
		Operation: op.id,
		PathIDs:   append([]string(nil), args...),
		RequestID: server.RequestID(r.Context()),
		Client:    auditClient(r),
		Status:    op.successStatus,
	}
}

// auditClient is the request's client address as IP access sees it (server.ClientAddr: the peer,
// or the client a trusted proxy names), else the host of the peer's address.
func auditClient(r *http.Request) string {
	if addr, ok := server.ClientAddr(r.Context()); ok {
		return addr.String()
	}
	return clientAddress(r.RemoteAddr)
}

// clientAddress is the host of the peer's address (the port says nothing about who called).
func clientAddress(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}

// auditCaller names the team key that the request's audit entry, if any, records.
func auditCaller(ctx context.Context, p *auth.Principal) {
	if e := db.AuditFrom(ctx); e != nil {
		e.TeamID, e.KeyID, e.KeyName = p.TeamID, p.KeyID, p.KeyName
	}
}

// operatorKeyID is the key id (and name) that audit records and log lines give the operator key.
const operatorKeyID = "operator"

// auditOperator names the operator key in the request's audit entry, if any, and the team its
// path names: the first path parameter of every /admin/v1/teams/{team_id} operation. A team being
// created names itself (db.Tx.AuditTeam).
func auditOperator(ctx context.Context) {
	e := db.AuditFrom(ctx)
	if e == nil {
		return
	}
	e.KeyID, e.KeyName = operatorKeyID, operatorKeyID
	if len(e.PathIDs) > 0 {
		if team, err := strconv.ParseInt(e.PathIDs[0], 10, 64); err == nil {
			e.TeamID = team
		}
	}
}
