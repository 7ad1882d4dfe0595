// Package retentions serves retention tags: the platform's four tags that every team has (never
// stored; see rules.go) under the names the team gave them (E16 renames, and the list), and
// whether the team has activated them (activate, and the enabled read).
package retentions

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// RetentionHandler implements the retention-tag operations of oas.Handler.
type RetentionHandler struct {
	db *db.DB
}

// NewHandler returns the retention-tag operations.
func NewHandler(database *db.DB) *RetentionHandler {
	return &RetentionHandler{db: database}
}

// ListRetentionTags returns the team's retention tags, in order.
func (h *RetentionHandler) ListRetentionTags(ctx context.Context) (*oas.RetentionTagList, error) {
	caller := auth.PrincipalFrom(ctx)
	tags, err := list(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.RetentionTagList{Retentions: tags}, nil
}

// UpdateRetentionTags renames the given tags, all or none, and answers the full list (E16).
//
// Errors: NotFound for an unknown id; Invalid for a tag that is not editable, an id given twice, or
// a name out of bounds (see checkUpdate).
func (h *RetentionHandler) UpdateRetentionTags(ctx context.Context, req *oas.RetentionTagUpdate) (*oas.RetentionTagList, error) {
	caller := auth.PrincipalFrom(ctx)
	renames, err := checkUpdate(req)
	if err != nil {
		return nil, err
	}
	var tags []oas.RetentionTag
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		for _, r := range renames {
			if err := setName(ctx, tx, caller.TeamID, r.id, r.name); err != nil {
				return err
			}
		}
		var err error
		tags, err = list(ctx, tx, caller.TeamID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.RetentionTagList{Retentions: tags}, nil
}

// ActivateRetentionTags turns retention tags on for the team and answers that they are active;
// activating again changes nothing (the first activation time stays).
func (h *RetentionHandler) ActivateRetentionTags(ctx context.Context) (*oas.RetentionTagsActivated, error) {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error { return activate(ctx, tx, caller.TeamID) })
	if err != nil {
		return nil, err
	}
	return &oas.RetentionTagsActivated{ActivateRetentions: true}, nil
}

// GetRetentionTagsEnabled answers whether the team has activated retention tags.
func (h *RetentionHandler) GetRetentionTagsEnabled(ctx context.Context) (*oas.RetentionTagsEnabled, error) {
	caller := auth.PrincipalFrom(ctx)
	on, err := activated(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.RetentionTagsEnabled{EnableTags: on}, nil
}
