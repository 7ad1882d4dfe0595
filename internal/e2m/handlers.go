// Package e2m serves events-to-metrics (E2M) rules: definitions of metrics that the platform would
// derive from matching logs or spans. It offers create, list, get, replace and delete of single
// rules and an atomic batch of creates, replaces and deletes. Rule ids are lowercase UUIDs chosen
// by the server (looked up in either hex case); names are unique within a team. This server
// ingests no events, so rules are only stored and answered: `permutations.hasExceededLimit` is
// always false.
package e2m

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// E2MHandler implements the events-to-metrics operations of oas.Handler.
type E2MHandler struct {
	db *db.DB
}

// NewHandler returns the events-to-metrics operations.
func NewHandler(database *db.DB) *E2MHandler {
	return &E2MHandler{db: database}
}

// ListE2M returns the team's rules by create time, then id.
func (h *E2MHandler) ListE2M(ctx context.Context) (*oas.E2MList, error) {
	caller := auth.PrincipalFrom(ctx)
	out := []oas.E2M{}
	err := eachRule(ctx, h.db.Read(), caller.TeamID, func(r stored) error {
		out = append(out, r.wire())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.E2MList{E2m: out}, nil
}

// StreamE2M writes the answer of ListE2M, the same bytes, while reading the rules: the server
// serves the list with it (see package streaming).
func (h *E2MHandler) StreamE2M(ctx context.Context, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	return out.Array("e2m", func() error {
		return eachRule(ctx, h.db.Read(), caller.TeamID, func(r stored) error {
			w := r.wire()
			return out.Item(&w)
		})
	})
}

// GetE2M returns one of the team's rules; the id matches in either hex case.
//
// Errors: NotFound when the team has no such rule.
func (h *E2MHandler) GetE2M(ctx context.Context, params oas.GetE2MParams) (*oas.E2MEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	id := strings.ToLower(string(params.ID))
	r, err := getRule(ctx, h.db.Read(), caller.TeamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notFound("id", id)
	}
	if err != nil {
		return nil, err
	}
	return &oas.E2MEnvelope{E2m: r.wire()}, nil
}

// CreateE2M stores a new rule under a fresh id and answers it.
//
// Errors: Invalid (see checkCreate); Conflict when the team has a rule of that name;
// LimitExceeded when the team holds MaxRules rules.
func (h *E2MHandler) CreateE2M(ctx context.Context, req *oas.E2MCreateParams) (*oas.E2MEnvelope, error) {
	r, err := checkCreate("", req)
	if err != nil {
		return nil, err
	}
	res, err := h.execute(ctx, []op{{kind: opCreate, rule: r, limit: req.PermutationsLimit}})
	if err != nil {
		return nil, err
	}
	return &res[0].Created.Value, nil
}

// ReplaceE2M (E21) makes the body the content of the rule named by its id. The create time stays;
// the update time becomes now; the permutation limit stays unless the body gives one.
//
// Errors: as CreateE2M's Invalid and Conflict; NotFound when the team has no such rule.
func (h *E2MHandler) ReplaceE2M(ctx context.Context, req *oas.E2M) (*oas.E2MEnvelope, error) {
	r, err := checkReplace("", req)
	if err != nil {
		return nil, err
	}
	res, err := h.execute(ctx, []op{{kind: opReplace, rule: r, id: string(r.ID), idPath: "id", limit: req.PermutationsLimit}})
	if err != nil {
		return nil, err
	}
	return &res[0].Replaced.Value, nil
}

// DeleteE2M deletes one of the team's rules and answers its id.
//
// Errors: NotFound when the team has no such rule.
func (h *E2MHandler) DeleteE2M(ctx context.Context, params oas.DeleteE2MParams) (*oas.E2MDeleted, error) {
	res, err := h.execute(ctx, []op{{kind: opDelete, id: strings.ToLower(string(params.ID)), idPath: "id"}})
	if err != nil {
		return nil, err
	}
	return &res[0].Deleted.Value, nil
}

// AtomicBatchExecuteE2M (E22) runs the requests in order in one transaction: all take effect or
// none does. Every request is checked first (the first broken one is the answer); then the
// replaces and deletes must find their rules (a rule deleted earlier in the batch is gone); then
// the team's rules once the batch has run must have unique names and number at most MaxRules.
//
// Errors, each naming requests[i]: Invalid (a request holding not exactly one alternative, or a
// body failing checkCreate/checkReplace); NotFound for a replace or delete of an id the team does
// not hold at that point; Conflict when two rules would share a name, naming the later request
// that set it; LimitExceeded when the team would hold more than MaxRules rules.
func (h *E2MHandler) AtomicBatchExecuteE2M(ctx context.Context, req *oas.E2MBatchRequest) (*oas.E2MBatchResponse, error) {
	ops := make([]op, 0, len(req.Requests))
	for i, rq := range req.Requests {
		at := fmt.Sprintf("requests[%d]", i)
		n := 0
		for _, set := range []bool{rq.Create.Set, rq.Replace.Set, rq.Delete.Set} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, apierror.Invalidf("%s: must hold exactly one of create, replace and delete (got %d)", at, n)
		}
		switch {
		case rq.Create.Set:
			prefix := at + ".create.e2m."
			p := rq.Create.Value.E2m
			r, err := checkCreate(prefix, &p)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op{kind: opCreate, prefix: prefix, rule: r, limit: p.PermutationsLimit})
		case rq.Replace.Set:
			prefix := at + ".replace.e2m."
			e := rq.Replace.Value.E2m
			r, err := checkReplace(prefix, &e)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op{kind: opReplace, prefix: prefix, rule: r, id: string(r.ID), idPath: prefix + "id", limit: e.PermutationsLimit})
		default:
			ops = append(ops, op{kind: opDelete, prefix: at + ".delete.",
				id: strings.ToLower(string(rq.Delete.Value.ID)), idPath: at + ".delete.id"})
		}
	}
	res, err := h.execute(ctx, ops)
	if err != nil {
		return nil, err
	}
	return &oas.E2MBatchResponse{MatchingResponses: res}, nil
}

type opKind int

const (
	opCreate opKind = iota
	opReplace
	opDelete
)

// op is one checked request of a batch (a single create, replace or delete is a batch of one).
type op struct {
	kind   opKind
	prefix string // path of the request's rule body ("" for a single operation), ending in "."
	idPath string // path of the id a replace or delete names
	id     string // lowercase; for a create, the id to give the rule ("" for a fresh one)
	rule   oas.E2M
	limit  oas.OptE2MPermutationsLimit
}

// entry is one of the team's rules while a batch runs.
type entry struct {
	s       stored
	origin  int  // index of the op that last wrote it; -1 when untouched
	live    bool // false once deleted
	existed bool // a row held it before the batch
}

// execute runs ops in one transaction, serialised with the team's other E2M writes, and answers
// one response per op. Nothing changes unless every op succeeds.
func (h *E2MHandler) execute(ctx context.Context, ops []op) ([]oas.E2MExecutionResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	var out []oas.E2MExecutionResponse
	err := h.db.InTx(ctx, func(tx *db.Tx) (err error) {
		out, err = executeIn(ctx, tx, caller.TeamID, ops)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// executeIn runs ops in tx, serialised with the team's other E2M writes, and answers one
// response per op; the caller rolls tx back on an error. A create takes the op's id when it has
// one (an applied configuration document keeps its ids), a fresh one otherwise.
func executeIn(ctx context.Context, tx *db.Tx, teamID int64, ops []op) ([]oas.E2MExecutionResponse, error) {
	out := make([]oas.E2MExecutionResponse, len(ops))
	err := func() error {
		if err := serializeTeam(ctx, tx, teamID); err != nil {
			return err
		}
		var ids, names []string
		for _, o := range ops {
			if o.kind != opCreate {
				ids = append(ids, o.id)
			}
			if o.kind != opDelete {
				names = append(names, string(o.rule.Name))
			}
		}
		// Only the rules the batch names by id, and those holding a name it sets, can take part
		// in a clash or a 404; every other rule of the team stays as it is and is only counted.
		index, err := loadIndex(ctx, tx, teamID, ids, names)
		if err != nil {
			return err
		}
		rules, reservedBefore, err := teamUsage(ctx, tx, teamID)
		if err != nil {
			return err
		}
		total := int(rules)
		othersReserved := reservedBefore
		for _, r := range index {
			othersReserved -= int64(r.limit) // the batch's rules are counted from state
		}
		state := make(map[string]*entry, len(index)+len(ops))
		for id, r := range index {
			state[id] = &entry{s: stored{rule: oas.E2M{Name: oas.E2MName(r.name)}, limit: r.limit, createdAt: r.createdAt},
				origin: -1, live: true, existed: true}
		}
		lastCreate := -1
		for i, o := range ops {
			switch o.kind {
			case opCreate:
				r := o.rule
				r.ID = oas.E2MUUID(strings.ToLower(tx.NewID()))
				if o.id != "" {
					r.ID = oas.E2MUUID(o.id)
				}
				e := &entry{s: stored{rule: r, limit: int32(o.limit.Or(DefaultPermutationsLimit)), createdAt: tx.Now, updatedAt: tx.Now},
					origin: i, live: true}
				state[string(r.ID)] = e
				out[i].Created = oas.NewOptE2MEnvelope(oas.E2MEnvelope{E2m: e.s.wire()})
				lastCreate = i
			case opReplace:
				e, ok := state[o.id]
				if !ok || !e.live {
					return notFound(o.idPath, o.id)
				}
				limit := e.s.limit
				if l, ok := o.limit.Get(); ok {
					limit = int32(l)
				}
				e.s = stored{rule: o.rule, limit: limit, createdAt: e.s.createdAt, updatedAt: tx.Now}
				e.origin = i
				out[i].Replaced = oas.NewOptE2MEnvelope(oas.E2MEnvelope{E2m: e.s.wire()})
			case opDelete:
				e, ok := state[o.id]
				if !ok || !e.live {
					return notFound(o.idPath, o.id)
				}
				e.live, e.origin = false, i
				out[i].Deleted = oas.NewOptE2MDeleted(oas.E2MDeleted{ID: oas.E2MUUID(o.id)})
			}
		}
		if err := checkEndState(ops, state, total-len(index), othersReserved, reservedBefore, lastCreate); err != nil {
			return err
		}
		return write(ctx, tx, teamID, ops, state)
	}()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkEndState requires the team's rules after the batch (those in state plus the others it
// leaves alone, which reserve othersReserved permutations) to number at most MaxRules, to reserve
// at most MaxTeamPermutations permutations unless that is no more than they reserved before
// (reservedBefore; a team over the bound may still lower it), and to have unique names. A clash
// is blamed on the latest request that set one of the clashing names, and the earliest such
// request is reported; a permutation excess on the latest request that wrote a rule.
func checkEndState(ops []op, state map[string]*entry, others int, othersReserved, reservedBefore int64, lastCreate int) error {
	holders := map[string][]*entry{}
	live := others
	reserved := othersReserved
	lastLimit := -1
	for _, e := range state {
		if e.live {
			live++
			reserved += int64(e.s.limit)
			holders[string(e.s.rule.Name)] = append(holders[string(e.s.rule.Name)], e)
			if e.origin > lastLimit {
				lastLimit = e.origin
			}
		}
	}
	if live > MaxRules && lastCreate >= 0 {
		at := strings.TrimSuffix(ops[lastCreate].prefix, ".")
		if at == "" {
			at = "body"
		}
		return apierror.LimitExceededf("%s: the team may hold at most %d events-to-metrics rules; this would leave %d; delete some first",
			at, MaxRules, live)
	}
	if reserved > MaxTeamPermutations && reserved > reservedBefore && lastLimit >= 0 {
		at := strings.TrimSuffix(ops[lastLimit].prefix, ".")
		if at == "" {
			at = "body"
		}
		return apierror.LimitExceededf("%s: the team's events-to-metrics rules may reserve at most %d label permutations together (the sum of their permutations limits); this would reserve %d; lower some permutationsLimit or delete rules first",
			at, MaxTeamPermutations, reserved)
	}
	blame, clash := len(ops), ""
	for name, es := range holders {
		if len(es) < 2 {
			continue
		}
		latest := slices.MaxFunc(es, func(a, b *entry) int { return a.origin - b.origin }).origin
		if latest < blame {
			blame, clash = latest, name
		}
	}
	if clash != "" {
		return apierror.Conflictf("%sname: another events-to-metrics rule of the team is named %q", ops[blame].prefix, clash)
	}
	return nil
}

// write makes the rows match state: rows of replaced and deleted rules go, then replaced and
// created rules are inserted in request order (a replaced rule keeps its id and create time).
func write(ctx context.Context, tx *db.Tx, teamID int64, ops []op, state map[string]*entry) error {
	var inserts []*entry
	for id, e := range state {
		if e.origin < 0 {
			continue
		}
		if e.existed {
			if err := deleteRule(ctx, tx, teamID, id); err != nil {
				return err
			}
		}
		if e.live {
			inserts = append(inserts, e)
		}
	}
	slices.SortFunc(inserts, func(a, b *entry) int { return a.origin - b.origin })
	for _, e := range inserts {
		if err := insertRule(ctx, tx, teamID, e.s); err != nil {
			if db.IsConflict(err) {
				return apierror.Conflictf("%sname: another events-to-metrics rule of the team is named %q", ops[e.origin].prefix, e.s.rule.Name)
			}
			return err
		}
	}
	return nil
}

func notFound(path, id string) error {
	return apierror.NotFoundf("%s: no events-to-metrics rule %s", path, id)
}
