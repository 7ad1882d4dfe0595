// Package recordingrules serves recording-rule sets (E4, E5, list, get, delete): named lists of
// Prometheus recording-rule groups, checked with the Prometheus PromQL parser and naming rules.
package recordingrules

import (
	"context"
	"errors"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// RuleSetHandler implements the recording-rule operations of oas.Handler.
type RuleSetHandler struct {
	db *db.DB
}

// NewHandler returns the recording-rule operations.
func NewHandler(database *db.DB) *RuleSetHandler { return &RuleSetHandler{db: database} }

// CreateRecordingRuleSet stores a new set in the caller's team and returns its id (E4).
//
// Errors: Invalid when a group or rule breaks a rule of buildSet.
func (h *RuleSetHandler) CreateRecordingRuleSet(ctx context.Context, req *oas.RecordingRuleSetInput) (*oas.RecordingRuleSetCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	// Checking (PromQL parsing) and encoding are done before the transaction: on SQLite write
	// transactions run one after another.
	id := h.db.NewID()
	set, err := buildSet(h.db.NewID, id, req)
	if err != nil {
		return nil, err
	}
	doc, err := set.MarshalJSON()
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(id) // minted before the transaction
		queueInsertSet(tx, caller.TeamID, set.ID, set.Name, doc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.RecordingRuleSetCreated{ID: id}, nil
}

// UpdateRecordingRuleSet replaces the name and groups of a set (E5).
//
// Errors: NotFound when the team has no such set; Invalid as for create.
func (h *RuleSetHandler) UpdateRecordingRuleSet(ctx context.Context, req *oas.RecordingRuleSetInput, params oas.UpdateRecordingRuleSetParams) error {
	caller := auth.PrincipalFrom(ctx)
	set, err := buildSet(h.db.NewID, params.ID, req)
	if err != nil {
		return err
	}
	doc, err := set.MarshalJSON()
	if err != nil {
		return err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		return replaceSet(ctx, tx, caller.TeamID, set.ID, set.Name, doc)
	})
	return notFoundAs(err, params.ID)
}

// ListRecordingRuleSets returns the team's sets, oldest first.
func (h *RuleSetHandler) ListRecordingRuleSets(ctx context.Context) (*oas.RecordingRuleSetList, error) {
	caller := auth.PrincipalFrom(ctx)
	sets := []oas.RecordingRuleSet{}
	err := eachSet(ctx, h.db.Read(), caller.TeamID, func(set *oas.RecordingRuleSet) error {
		sets = append(sets, *set)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.RecordingRuleSetList{Sets: sets}, nil
}

// StreamRecordingRuleSets writes the answer of ListRecordingRuleSets, the same bytes, while
// reading the sets: the server serves the list with it (see package streaming).
func (h *RuleSetHandler) StreamRecordingRuleSets(ctx context.Context, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	return out.Array("sets", func() error {
		return eachSet(ctx, h.db.Read(), caller.TeamID, func(set *oas.RecordingRuleSet) error {
			return out.Item(set)
		})
	})
}

// GetRecordingRuleSet returns one set.
//
// Errors: NotFound when the team has no such set.
func (h *RuleSetHandler) GetRecordingRuleSet(ctx context.Context, params oas.GetRecordingRuleSetParams) (*oas.RecordingRuleSet, error) {
	caller := auth.PrincipalFrom(ctx)
	set, err := getSet(ctx, h.db, caller.TeamID, params.ID)
	if err != nil {
		return nil, notFoundAs(err, params.ID)
	}
	return &set, nil
}

// AnswerRecordingRuleSet calls answer with the JSON of GetRecordingRuleSet's answer for the same
// request, byte for byte what the generated encoder writes for it, and returns answer's error;
// doc is valid only during the call. The stored document is that JSON already (insertSet and
// replaceSet store the set's generated encoding, and a set's JSON decodes and encodes again to
// the same bytes), so the hot path sends it as it is, without decoding it and encoding it again;
// a document that does not begin as that encoding does (a row written by other means) is
// decoded and encoded. The one exception to "byte for byte": the generated encoder writes a
// rule's labels in Go's random map order, so two answers of either path may order them
// differently.
//
// Errors: NotFound when the team has no such set.
func (h *RuleSetHandler) AnswerRecordingRuleSet(ctx context.Context, params oas.GetRecordingRuleSetParams, answer func(doc []byte) error) error {
	caller := auth.PrincipalFrom(ctx)
	err := readDocument(ctx, h.db, caller.TeamID, params.ID, func(doc []byte) error {
		if isEncodedSet(doc, params.ID) {
			return answer(doc)
		}
		var set oas.RecordingRuleSet
		if err := set.UnmarshalJSON(doc); err != nil {
			return fmt.Errorf("recording rule set %s: %w", params.ID, err)
		}
		encoded, err := set.MarshalJSON()
		if err != nil {
			return err
		}
		return answer(encoded)
	})
	return notFoundAs(err, params.ID)
}

// DeleteRecordingRuleSet deletes one set.
//
// Errors: NotFound when the team has no such set.
func (h *RuleSetHandler) DeleteRecordingRuleSet(ctx context.Context, params oas.DeleteRecordingRuleSetParams) error {
	return h.delete(ctx, params.ID)
}

// DeleteRecordingRuleSetByQuery deletes the set named by the id query parameter, as
// DeleteRecordingRuleSet does.
func (h *RuleSetHandler) DeleteRecordingRuleSetByQuery(ctx context.Context, params oas.DeleteRecordingRuleSetByQueryParams) error {
	return h.delete(ctx, params.ID)
}

func (h *RuleSetHandler) delete(ctx context.Context, id string) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error { return deleteSet(ctx, tx, caller.TeamID, id) })
	return notFoundAs(err, id)
}

func notFoundAs(err error, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("id: no recording rule set %q", id)
	}
	return err
}
