package incidents

import (
	"context"
	"database/sql"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// IncidentHandler serves the incidents operations.
type IncidentHandler struct {
	db *db.DB
}

// NewHandler returns the incidents operations over database.
func NewHandler(database *db.DB) *IncidentHandler {
	return &IncidentHandler{db: database}
}

// userID names the caller in events and assignments.
func userID(caller *auth.Principal) string { return "apikey:" + caller.KeyID }

// normalizeIDs lowercases ids (we store lowercase UUIDs) and drops repeats, keeping the order.
func normalizeIDs(in []oas.IncidentID) []string {
	seen := make(map[string]bool, len(in))
	out := make([]string, 0, len(in))
	for _, id := range in {
		s := strings.ToLower(string(id))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// GetIncident returns one incident with its events, oldest first (E19). The id is matched
// without regard to the case of its hex digits.
//
// Errors: NotFound when the team has no such incident.
func (h *IncidentHandler) GetIncident(ctx context.Context, params oas.GetIncidentParams) (*oas.IncidentResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id := strings.ToLower(string(params.ID))
	found, err := loadIncidents(ctx, h.db.Read(), h.db.Engine, caller.TeamID, []string{id}, h.db.Now())
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, apierror.NotFoundf("id: no incident %q", string(params.ID))
	}
	return &oas.IncidentResponse{Incident: found[0]}, nil
}

// ListIncidentEvents returns an incident's events, oldest first.
//
// Errors: NotFound when the team has no such incident.
func (h *IncidentHandler) ListIncidentEvents(ctx context.Context, params oas.ListIncidentEventsParams) (*oas.IncidentEventList, error) {
	caller := auth.PrincipalFrom(ctx)
	id := strings.ToLower(string(params.IncidentID))
	found, err := loadIncidents(ctx, h.db.Read(), h.db.Engine, caller.TeamID, []string{id}, h.db.Now())
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, apierror.NotFoundf("incident_id: no incident %q", string(params.IncidentID))
	}
	return &oas.IncidentEventList{IncidentEvents: found[0].Events}, nil
}

// BatchGetIncidents returns the team's incidents among the ids, by (lowercase) id, and the ids
// (as given) that name no incident of the team. Repeated ids are answered once.
func (h *IncidentHandler) BatchGetIncidents(ctx context.Context, params oas.BatchGetIncidentsParams) (*oas.IncidentBatch, error) {
	caller := auth.PrincipalFrom(ctx)
	ids := normalizeIDs(params.Ids)
	found, err := loadIncidents(ctx, h.db.Read(), h.db.Engine, caller.TeamID, ids, h.db.Now())
	if err != nil {
		return nil, err
	}
	res := &oas.IncidentBatch{Incidents: oas.IncidentBatchIncidents{}, NotFoundIds: []string{}}
	for _, inc := range found {
		res.Incidents[inc.ID] = inc
	}
	reported := map[string]bool{}
	for _, id := range params.Ids {
		lower := strings.ToLower(string(id))
		if _, ok := res.Incidents[lower]; !ok && !reported[lower] {
			reported[lower] = true
			res.NotFoundIds = append(res.NotFoundIds, string(id))
		}
	}
	return res, nil
}

// batch runs one lifecycle operation over ids, all or nothing: every id must name an incident of
// the team (else NotFound naming the first that does not), check must accept every incident (its
// error, a Conflict, is returned), then apply changes each incident in the same transaction. It
// answers the incidents after the change, in the order of ids.
func (h *IncidentHandler) batch(ctx context.Context, raw []oas.IncidentID, field string,
	check func(r row) error, apply func(tx *db.Tx, teamID int64, r row) error) (*oas.IncidentsResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	ids := normalizeIDs(raw)
	var out []oas.Incident
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		rows, err := loadRows(ctx, tx, tx.Engine, caller.TeamID, ids, true)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if _, ok := rows[id]; !ok {
				return apierror.NotFoundf("%s: no incident %q", field, string(raw[indexOf(raw, id, i)]))
			}
		}
		if check != nil {
			for _, id := range ids {
				if err := check(rows[id]); err != nil {
					return err
				}
			}
		}
		for _, id := range ids {
			if err := apply(tx, caller.TeamID, rows[id]); err != nil {
				return err
			}
		}
		out, err = loadIncidents(ctx, tx, tx.Engine, caller.TeamID, ids, tx.Now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.IncidentsResponse{Incidents: out}, nil
}

// indexOf finds the raw id that normalizes to id (at or after its position among unique ids).
func indexOf(raw []oas.IncidentID, id string, from int) int {
	for i := from; i < len(raw); i++ {
		if strings.ToLower(string(raw[i])) == id {
			return i
		}
	}
	for i := range raw {
		if strings.ToLower(string(raw[i])) == id {
			return i
		}
	}
	return 0
}

func isResolved(r row) bool {
	return r.status == string(oas.IncidentStatusINCIDENTSTATUSRESOLVED) || r.state == string(oas.IncidentStateINCIDENTSTATERESOLVED)
}

// setStatus writes a new state, status and closedAt (nil keeps it) with the state-update time.
func setStatus(ctx context.Context, tx *db.Tx, teamID int64, r row, state, status, key string, closedAt *int64) error {
	var closed any
	if closedAt != nil {
		closed = *closedAt
	}
	_, err := tx.ExecContext(ctx, `UPDATE incidents SET state = $3, status = $4, closed_at = COALESCE($5, closed_at),
		last_state_update_time = $6, last_state_update_key = $7 WHERE team_id = $1 AND id = $2`,
		teamID, r.id, state, status, closed, micros(tx.Now), key)
	if err != nil {
		return err
	}
	if err := noteTimeTie(ctx, tx, teamID, "updated", micros(tx.Now)); err != nil {
		return err
	}
	to := r.countKey()
	to.state, to.status = state, status
	moveCount(ctx, tx, teamID, r.countKey(), to)
	after := r.rollupEntry()
	after.key.state, after.key.status, after.update = state, status, micros(tx.Now)
	if closedAt != nil {
		after.closed = sql.NullInt64{Int64: *closedAt, Valid: true}
	}
	moveClosedTime(ctx, tx, teamID, r.rollupEntry(), after)
	if err := moveRollup(ctx, tx, teamID, r.rollupEntry(), after); err != nil {
		return err
	}
	switch {
	case status == string(oas.IncidentStatusINCIDENTSTATUSRESOLVED) && r.status != status,
		state == string(oas.IncidentStateINCIDENTSTATERESOLVED) && r.state != state:
		emit(ctx, tx, teamID, r.id, "resolved")
	case status == string(oas.IncidentStatusINCIDENTSTATUSACKNOWLEDGED) && r.status != status:
		emit(ctx, tx, teamID, r.id, "acknowledged")
	}
	return syncLabels(ctx, tx, teamID, r.id)
}

// emit hands the notification center that an incident was triggered, acknowledged or resolved,
// in the transaction that made it so (see db.Tx.Emit), with the incident as that transaction
// leaves it.
func emit(ctx context.Context, tx *db.Tx, teamID int64, id, kind string) {
	tx.Emit(ctx, db.Event{TeamID: teamID, EntityType: "ALERTS", EntityID: id, Kind: kind, Snapshot: snapshot(teamID, id)})
}

// snapshot reads the incident as an event's snapshot: the public object and its case.
func snapshot(teamID int64, id string) func(context.Context, *db.Tx) ([]byte, string, error) {
	return func(ctx context.Context, tx *db.Tx) ([]byte, string, error) {
		inc, caseID, err := Load(ctx, tx, teamID, id)
		if err != nil {
			return nil, "", err
		}
		doc, err := inc.MarshalJSON()
		return doc, caseID, err
	}
}

// setAssignee writes a new assignee (to "" removes it), keeping the counts and label rows in step.
func setAssignee(ctx context.Context, tx *db.Tx, teamID int64, r row, to, by string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE incidents SET assigned_to = $3, assigned_by = $4 WHERE team_id = $1 AND id = $2`,
		teamID, r.id, to, by); err != nil {
		return err
	}
	moved := r.countKey()
	moved.assignedTo = to
	moveCount(ctx, tx, teamID, r.countKey(), moved)
	after := r.rollupEntry()
	after.key.assignedTo = to
	if err := moveRollup(ctx, tx, teamID, r.rollupEntry(), after); err != nil {
		return err
	}
	return syncLabels(ctx, tx, teamID, r.id)
}

// AcknowledgeIncidents moves triggered incidents to status ACKNOWLEDGED with an ACKNOWLEDGE event;
// already acknowledged ones are left as they are. All or nothing.
//
// Errors: NotFound for an unknown id; Conflict when an incident is resolved.
func (h *IncidentHandler) AcknowledgeIncidents(ctx context.Context, req *oas.IncidentIDsRequest) (*oas.IncidentsResponse, error) {
	return h.acknowledge(ctx, req.IncidentIds, "incidentIds")
}

// acknowledge is AcknowledgeIncidents over ids; field names them in messages.
func (h *IncidentHandler) acknowledge(ctx context.Context, ids []oas.IncidentID, field string) (*oas.IncidentsResponse, error) {
	user := userID(auth.PrincipalFrom(ctx))
	return h.batch(ctx, ids, field,
		func(r row) error {
			if isResolved(r) {
				return apierror.Conflictf("%s: incident %s is resolved and cannot be acknowledged", field, r.id)
			}
			return nil
		},
		func(tx *db.Tx, teamID int64, r row) error {
			if r.status == string(oas.IncidentStatusINCIDENTSTATUSACKNOWLEDGED) {
				return nil
			}
			if err := setStatus(ctx, tx, teamID, r, r.state, string(oas.IncidentStatusINCIDENTSTATUSACKNOWLEDGED), user+":acknowledged", nil); err != nil {
				return err
			}
			ev := administrative(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPEACKNOWLEDGE, user)
			ev.Acknowledge = oas.NewOptIncidentEventAcknowledge(oas.IncidentEventAcknowledge{
				AcknowledgedBy: oas.NewOptIncidentUser(oas.IncidentUser{UserId: user})})
			return appendEvent(ctx, tx, teamID, r.id, ev)
		})
}

// ResolveIncidents sets the incidents' status to RESOLVED with an UPSERT_STATE RESOLVED event;
// the state and closedAt are kept, and resolved incidents are left as they are. All or nothing.
//
// Errors: NotFound for an unknown id.
func (h *IncidentHandler) ResolveIncidents(ctx context.Context, req *oas.IncidentIDsRequest) (*oas.IncidentsResponse, error) {
	return h.resolve(ctx, req.IncidentIds, "incidentIds")
}

// resolve is ResolveIncidents over ids; field names them in messages.
func (h *IncidentHandler) resolve(ctx context.Context, ids []oas.IncidentID, field string) (*oas.IncidentsResponse, error) {
	user := userID(auth.PrincipalFrom(ctx))
	return h.batch(ctx, ids, field, nil,
		func(tx *db.Tx, teamID int64, r row) error {
			if r.status == string(oas.IncidentStatusINCIDENTSTATUSRESOLVED) {
				return nil
			}
			if err := setStatus(ctx, tx, teamID, r, r.state, string(oas.IncidentStatusINCIDENTSTATUSRESOLVED), user+":resolved", nil); err != nil {
				return err
			}
			ev := administrative(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPEUPSERTSTATE, user)
			ev.UpsertState = upsertState(oas.IncidentEventUpsertStateStateTypeUPSERTINCIDENTSTATETYPERESOLVED, "")
			return appendEvent(ctx, tx, teamID, r.id, ev)
		})
}

// CloseIncidents ends the incidents: state and status RESOLVED, closedAt now, and a CLOSE event.
// Incidents already closed (by a user or by their source) are left as they are. All or nothing.
//
// Errors: NotFound for an unknown id.
func (h *IncidentHandler) CloseIncidents(ctx context.Context, req *oas.IncidentIDsRequest) (*oas.IncidentsResponse, error) {
	user := userID(auth.PrincipalFrom(ctx))
	return h.batch(ctx, req.IncidentIds, "incidentIds", nil,
		func(tx *db.Tx, teamID int64, r row) error {
			if r.closedAt.Valid {
				return nil
			}
			now := micros(tx.Now)
			if err := setStatus(ctx, tx, teamID, r, string(oas.IncidentStateINCIDENTSTATERESOLVED),
				string(oas.IncidentStatusINCIDENTSTATUSRESOLVED), user+":closed", &now); err != nil {
				return err
			}
			ev := administrative(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPECLOSE, user)
			ev.Close = oas.NewOptIncidentEventClose(oas.IncidentEventClose{ClosedBy: oas.NewOptIncidentUser(oas.IncidentUser{UserId: user})})
			return appendEvent(ctx, tx, teamID, r.id, ev)
		})
}

// AssignIncidents assigns the incidents (in any state) to assignedTo, replacing any assignee,
// with an ASSIGN event each. All or nothing.
//
// Errors: NotFound for an unknown id.
func (h *IncidentHandler) AssignIncidents(ctx context.Context, req *oas.IncidentAssignInput) (*oas.IncidentsResponse, error) {
	user := userID(auth.PrincipalFrom(ctx))
	to := req.AssignedTo.UserId
	return h.batch(ctx, req.IncidentIds, "incidentIds", nil,
		func(tx *db.Tx, teamID int64, r row) error {
			if err := setAssignee(ctx, tx, teamID, r, to, user); err != nil {
				return err
			}
			ev := administrative(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPEASSIGN, user)
			ev.Assignment = oas.NewOptIncidentEventAssignment(oas.IncidentEventAssignment{
				Assignment: oas.NewOptIncidentAssignment(oas.IncidentAssignment{
					AssignedTo: oas.IncidentUser{UserId: to}, AssignedBy: oas.IncidentUser{UserId: user}})})
			return appendEvent(ctx, tx, teamID, r.id, ev)
		})
}

// UnassignIncidents removes the incidents' assignee (in any state) with an UNASSIGN event each;
// incidents without an assignee are left as they are. All or nothing.
//
// Errors: NotFound for an unknown id.
func (h *IncidentHandler) UnassignIncidents(ctx context.Context, params oas.UnassignIncidentsParams) (*oas.IncidentsResponse, error) {
	user := userID(auth.PrincipalFrom(ctx))
	return h.batch(ctx, params.IncidentIds, "incident_ids", nil,
		func(tx *db.Tx, teamID int64, r row) error {
			if r.assignedTo == "" {
				return nil
			}
			if err := setAssignee(ctx, tx, teamID, r, "", ""); err != nil {
				return err
			}
			ev := administrative(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPEUNASSIGN, user)
			ev.Unassign = &oas.EmptyObject{}
			return appendEvent(ctx, tx, teamID, r.id, ev)
		})
}
