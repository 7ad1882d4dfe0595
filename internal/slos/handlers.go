// Package slos serves service level objectives: the batch execute of creates, replaces and deletes
// in one transaction (E14), the batch get by id (E15, also at its public path), the single create,
// replace, filtered list, get and delete, the validating replace and the zero state. An SLO is stored as its JSON document; the server owns its id, creator, times and
// revision. Ids are lowercase UUIDs; every lookup by id matches its hex digits in either case.
package slos

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// Users names, in tx, what uses the team's SLO (e.g. `alert definition "Burn" (id …)`): an SLO
// with users cannot be deleted. The alert-definition area provides one; it runs after LockTeam.
type Users func(ctx context.Context, tx *db.Tx, teamID int64, sloID string) ([]string, error)

// SloHandler implements the SLO operations of oas.Handler.
type SloHandler struct {
	db    *db.DB
	users []Users
}

// NewHandler returns the SLO operations over database; users are asked before an SLO is deleted.
func NewHandler(database *db.DB, users ...Users) *SloHandler {
	return &SloHandler{db: database, users: users}
}

// BatchExecuteSlos runs every request in order in one transaction and answers one response per
// request, in the matching alternative (E14). When one request fails, nothing is changed and the
// answer is that failure, naming requests[i].
//
// Errors: Invalid when a request sets not exactly one alternative, and see checkSlo; NotFound
// when a replace or delete names no SLO of the team (also one deleted earlier in the batch).
func (h *SloHandler) BatchExecuteSlos(ctx context.Context, req *oas.BatchExecuteSloRequest) (*oas.BatchExecuteSloResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	var out []oas.SloExecutionResponse
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		out = make([]oas.SloExecutionResponse, 0, len(req.Requests))
		for i, r := range req.Requests {
			res, err := execute(ctx, tx, caller, fmt.Sprintf("requests[%d]", i), r, h.users)
			if err != nil {
				return err
			}
			out = append(out, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.BatchExecuteSloResponse{
		MatchingResponses: out,
		Status:            oas.SloResponseStatus{StatusCode: oas.SloResponseStatusStatusCodeOK, Details: oas.SloResponseStatusDetails{}},
	}, nil
}

// execute runs one request of a batch inside its transaction; where is "requests[i]".
func execute(ctx context.Context, tx *db.Tx, caller *auth.Principal, where string, r oas.SloExecutionRequest, users []Users) (oas.SloExecutionResponse, error) {
	var res oas.SloExecutionResponse
	set := 0
	for _, s := range []bool{r.CreateSloRequest.Set, r.ReplaceSloRequest.Set, r.DeleteSloRequest.Set} {
		if s {
			set++
		}
	}
	if set != 1 {
		return res, apierror.Invalidf("%s: must set exactly one of createSloRequest, replaceSloRequest and deleteSloRequest (got %d)", where, set)
	}
	switch {
	case r.CreateSloRequest.Set:
		prefix := where + ".createSloRequest.slo"
		s, err := checkSlo(prefix, r.CreateSloRequest.Value.Slo)
		if err != nil {
			return res, err
		}
		s, err = create(ctx, tx, caller, s)
		if err != nil {
			return res, err
		}
		res.CreateSloResponse = oas.NewOptSloCreated(oas.SloCreated{Slo: s})
	case r.ReplaceSloRequest.Set:
		prefix := where + ".replaceSloRequest.slo"
		s, err := checkReplace(prefix, r.ReplaceSloRequest.Value.Slo)
		if err != nil {
			return res, err
		}
		s, err = replace(ctx, tx, caller.TeamID, prefix, s)
		if err != nil {
			return res, err
		}
		res.ReplaceSloResponse = oas.NewOptSloReplaced(oas.SloReplaced{Slo: s, EffectedSloAlertIds: []string{}})
	default:
		id := strings.ToLower(string(r.DeleteSloRequest.Value.ID))
		if err := remove(ctx, tx, caller.TeamID, where+".deleteSloRequest.id", id, users); err != nil {
			return res, err
		}
		res.DeleteSloResponse = oas.NewOptSloDeleted(oas.SloDeleted{EffectedSloAlertIds: []string{}})
	}
	return res, nil
}

// CreateSlo stores a new SLO under a fresh id and answers it. silence_data_validations has no
// effect: this server runs no data validations.
//
// Errors: Invalid (see checkSlo).
func (h *SloHandler) CreateSlo(ctx context.Context, req *oas.Slo, _ oas.CreateSloParams) (*oas.SloCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := checkSlo("", *req)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		s, err = create(ctx, tx, caller, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.SloCreated{Slo: s}, nil
}

// ReplaceSlo replaces the SLO named by the body's id, keeping its createTime and creator and
// counting its revision up by one. silence_data_validations has no effect.
//
// Errors: Invalid when id is missing, and see checkSlo; NotFound when the team has no such SLO.
func (h *SloHandler) ReplaceSlo(ctx context.Context, req *oas.Slo, _ oas.ReplaceSloParams) (*oas.SloReplaced, error) {
	s, err := h.replaceOne(ctx, req)
	if err != nil {
		return nil, err
	}
	return &oas.SloReplaced{Slo: s, EffectedSloAlertIds: []string{}}, nil
}

// ValidateReplaceSloAlerts replaces the SLO exactly as ReplaceSlo does and answers the validation
// of the SLO's alerts under the new definition: none, since this server keeps no SLO alerts.
//
// Errors: as ReplaceSlo.
func (h *SloHandler) ValidateReplaceSloAlerts(ctx context.Context, req *oas.Slo) (*oas.SloAlertsValidationResponse, error) {
	if _, err := h.replaceOne(ctx, req); err != nil {
		return nil, err
	}
	return &oas.SloAlertsValidationResponse{AlertsValidationResult: []oas.SloAlertValidity{}}, nil
}

// replaceOne checks and stores one replace in its own transaction and returns the stored SLO.
func (h *SloHandler) replaceOne(ctx context.Context, req *oas.Slo) (oas.Slo, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := checkReplace("", *req)
	if err != nil {
		return s, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		s, err = replace(ctx, tx, caller.TeamID, "", s)
		return err
	})
	return s, err
}

// ListSlos answers the team's SLOs that pass every filter of the query object filters, by create
// time, then id.
//
// Errors: Invalid for filters that readFilters refuses.
func (h *SloHandler) ListSlos(ctx context.Context) (*oas.SloList, error) {
	filters, err := readFilters(ctx)
	if err != nil {
		return nil, err
	}
	out := []oas.Slo{}
	err = h.eachMatching(ctx, filters, func(s *oas.Slo) error {
		out = append(out, *s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.SloList{Slos: out}, nil
}

// StreamSlos writes the answer of ListSlos, the same bytes, while reading the SLOs: the server
// serves the list with it (see package streaming). Its errors are ListSlos's.
func (h *SloHandler) StreamSlos(ctx context.Context, out *streaming.Answer) error {
	filters, err := readFilters(ctx)
	if err != nil {
		return err
	}
	return out.Array("slos", func() error {
		return h.eachMatching(ctx, filters, func(s *oas.Slo) error { return out.Item(s) })
	})
}

// eachMatching calls yield with each of the team's SLOs that pass every filter, by create time,
// then id; it stops at yield's first error and returns it.
func (h *SloHandler) eachMatching(ctx context.Context, filters []match, yield func(*oas.Slo) error) error {
	caller := auth.PrincipalFrom(ctx)
	return eachSlo(ctx, h.db.Read(), caller.TeamID, func(s *oas.Slo) error {
		if !matchesAll(*s, filters) {
			return nil
		}
		return yield(s)
	})
}

// GetSloZeroState answers whether the team has no SLO yet.
func (h *SloHandler) GetSloZeroState(ctx context.Context) (*oas.SloZeroStateResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	some, err := hasSlos(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.SloZeroStateResponse{ZeroState: !some}, nil
}

// BatchGetSlosByList is E15 at its public path: the same operation as BatchGetSlos.
func (h *SloHandler) BatchGetSlosByList(ctx context.Context, params oas.BatchGetSlosByListParams) (*oas.SloBatch, error) {
	return h.BatchGetSlos(ctx, oas.BatchGetSlosParams(params))
}

// GetSlo answers one SLO.
//
// Errors: NotFound when the team has no such SLO.
func (h *SloHandler) GetSlo(ctx context.Context, params oas.GetSloParams) (*oas.SloEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	id := strings.ToLower(string(params.ID))
	s, err := getSlo(ctx, h.db.Read(), caller.TeamID, id)
	if err != nil {
		return nil, notFoundAs(err, "id", id)
	}
	return &oas.SloEnvelope{Slo: s}, nil
}

// DeleteSlo deletes one SLO.
//
// Errors: NotFound when the team has no such SLO.
func (h *SloHandler) DeleteSlo(ctx context.Context, params oas.DeleteSloParams) (*oas.SloDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return remove(ctx, tx, caller.TeamID, "id", strings.ToLower(string(params.ID)), h.users)
	})
	if err != nil {
		return nil, err
	}
	return &oas.SloDeleted{EffectedSloAlertIds: []string{}}, nil
}

// BatchGetSlos answers the team's SLOs named by ids, in request order and each once, and the ids
// that name none, in request order and each once (E15). Other teams' SLOs are not found.
func (h *SloHandler) BatchGetSlos(ctx context.Context, params oas.BatchGetSlosParams) (*oas.SloBatch, error) {
	caller := auth.PrincipalFrom(ctx)
	ids := make([]string, 0, len(params.Ids))
	seen := make(map[string]bool, len(params.Ids))
	keys := make([]string, 0, len(params.Ids))
	for _, raw := range params.Ids {
		id := string(raw)
		if key := strings.ToLower(id); !seen[key] {
			seen[key] = true
			ids = append(ids, id)
			keys = append(keys, key)
		}
	}
	found, err := sloMap(ctx, h.db.Read(), caller.TeamID, keys)
	if err != nil {
		return nil, err
	}
	out := &oas.SloBatch{Slos: []oas.Slo{}, NotFoundIds: []string{}}
	for i, id := range ids {
		if s, ok := found[keys[i]]; ok {
			out.Slos = append(out.Slos, s)
		} else {
			out.NotFoundIds = append(out.NotFoundIds, id)
		}
	}
	return out, nil
}

// checkReplace is checkSlo for a replace, which also requires the id.
func checkReplace(prefix string, in oas.Slo) (oas.Slo, error) {
	id, ok := in.ID.Get()
	if !ok || id == "" {
		return in, apierror.Invalidf("%s: required; it names the SLO to replace", field(prefix, "id"))
	}
	s, err := checkSlo(prefix, in)
	s.ID = oas.NewOptString(strings.ToLower(id))
	return s, err
}

// create stores a checked SLO under a new id, with the caller's key name as creator and
// revision 1, and returns it as stored.
func create(ctx context.Context, tx *db.Tx, caller *auth.Principal, s oas.Slo) (oas.Slo, error) {
	return createWithID(ctx, tx, caller, tx.NewID(), s)
}

// createWithID is create under the given id (an applied configuration document keeps its ids).
func createWithID(ctx context.Context, tx *db.Tx, caller *auth.Principal, id string, s oas.Slo) (oas.Slo, error) {
	s.ID = oas.NewOptString(id)
	s.Creator = oas.NewOptString(caller.KeyName)
	s.CreateTime = oas.NewOptDateTime(tx.Now)
	s.UpdateTime = oas.NewOptDateTime(tx.Now)
	s.Revision = oas.NewOptSloRevision(oas.SloRevision{Revision: oas.NewOptInt32(1), UpdateTime: oas.NewOptDateTime(tx.Now)})
	return s, insertSlo(ctx, tx, caller.TeamID, s)
}

// replace overwrites the team's SLO s.ID with the checked s, keeping createTime and creator and
// counting the revision up; prefix locates the SLO in the request for the NotFound message.
func replace(ctx context.Context, tx *db.Tx, teamID int64, prefix string, s oas.Slo) (oas.Slo, error) {
	id := s.ID.Or("")
	old, err := getSloForUpdate(ctx, tx, teamID, id)
	if err != nil {
		return s, notFoundAs(err, field(prefix, "id"), id)
	}
	s.Creator = old.Creator
	s.CreateTime = old.CreateTime
	s.UpdateTime = oas.NewOptDateTime(tx.Now)
	s.Revision = oas.NewOptSloRevision(oas.SloRevision{
		Revision:   oas.NewOptInt32(old.Revision.Value.Revision.Or(0) + 1),
		UpdateTime: oas.NewOptDateTime(tx.Now),
	})
	return s, notFoundAs(updateSlo(ctx, tx, teamID, s), field(prefix, "id"), id)
}

// remove deletes the team's SLO; where names the id's field for the NotFound message.
func remove(ctx context.Context, tx *db.Tx, teamID int64, where, id string, users []Users) error {
	if len(users) > 0 {
		if err := LockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		if ok, err := Exists(ctx, tx, teamID, id); err != nil || !ok {
			return notFoundAs(firstErr(err, db.ErrNotFound), where, id)
		}
		var names []string
		for _, u := range users {
			n, err := u(ctx, tx, teamID, id)
			if err != nil {
				return err
			}
			names = append(names, n...)
		}
		if len(names) > 0 {
			return apierror.Conflictf("%s: SLO %s is used by %s; change or delete those first", where, id, strings.Join(names, ", "))
		}
	}
	return notFoundAs(deleteSlo(ctx, tx, teamID, id), where, id)
}

func firstErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

func notFoundAs(err error, where, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no SLO %q", where, id)
	}
	return err
}
