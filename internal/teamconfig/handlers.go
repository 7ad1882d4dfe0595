package teamconfig

import (
	"context"
	"fmt"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Handler exports and applies configuration documents.
type Handler struct {
	db       *db.DB
	areas    []Area
	singles  map[string]bool
	describe DescribeBody
}

// DescribeBody words why the body of operation was refused, as the operation itself would
// answer it (internal/api's wording of decoder and validator errors).
type DescribeBody func(operation string, body []byte, err error) string

// NewHandler returns the handler over areas, which it orders as AreaOrder. It fails on an area
// whose key is not in AreaOrder or is given twice.
func NewHandler(database *db.DB, describe DescribeBody, areas ...Area) (*Handler, error) {
	h := &Handler{db: database, describe: describe, singles: map[string]bool{}}
	for _, a := range areas {
		if !slices.Contains(AreaOrder, a.Key()) {
			return nil, fmt.Errorf("teamconfig: area %q is not in AreaOrder", a.Key())
		}
		if slices.ContainsFunc(h.areas, func(b Area) bool { return b.Key() == a.Key() }) {
			return nil, fmt.Errorf("teamconfig: area %q given twice", a.Key())
		}
		if _, ok := a.(Single); ok {
			h.singles[a.Key()] = true
		}
		h.areas = append(h.areas, a)
	}
	slices.SortFunc(h.areas, func(x, y Area) int {
		return slices.Index(AreaOrder, x.Key()) - slices.Index(AreaOrder, y.Key())
	})
	return h, nil
}

// Areas returns the keys of the areas the handler covers, in document order.
func (h *Handler) Areas() []string {
	keys := make([]string, len(h.areas))
	for i, a := range h.areas {
		keys[i] = a.Key()
	}
	return keys
}

// ExportDocument answers the caller's team's configuration document, JSON when asJSON, YAML
// otherwise.
//
// Errors: Forbidden when the caller lacks the read permission of an area.
func (h *Handler) ExportDocument(ctx context.Context, asJSON bool) ([]byte, error) {
	caller := auth.PrincipalFrom(ctx)
	exported, err := h.export(ctx, h.db.Read(), caller)
	if err != nil {
		return nil, err
	}
	return encodeDocument(exported, h.singles, asJSON)
}

// ApplyDocument applies the document body (YAML or JSON) to the caller's team and answers the
// plan; see apply.
//
// Errors: Invalid for a document that is not one; those of apply.
func (h *Handler) ApplyDocument(ctx context.Context, body []byte, dryRun, prune bool) (*oas.ConfigurationPlan, error) {
	caller := auth.PrincipalFrom(ctx)
	doc, err := parseDocument(body, h.singles)
	if err != nil {
		return nil, err
	}
	changes, err := h.apply(ctx, caller, doc, dryRun, prune)
	if err != nil {
		return nil, err
	}
	plan := &oas.ConfigurationPlan{DryRun: dryRun, Changes: make([]oas.ConfigurationChange, 0, len(changes))}
	for _, c := range changes {
		change := oas.ConfigurationChange{Area: c.Area, ID: c.ID, Action: oas.ConfigurationChangeAction(c.Action)}
		if c.Name != "" {
			change.Name = oas.NewOptString(c.Name)
		}
		if c.MatchedBy != "" {
			change.MatchedBy = oas.NewOptConfigurationChangeMatchedBy(oas.ConfigurationChangeMatchedBy(c.MatchedBy))
		}
		if c.Note != "" {
			change.Note = oas.NewOptString(c.Note)
		}
		for _, f := range c.Fields {
			field := oas.ConfigurationFieldChange{Path: f.Path}
			if f.Before != "" {
				field.Before = oas.NewOptString(f.Before)
			}
			if f.After != "" {
				field.After = oas.NewOptString(f.After)
			}
			change.Fields = append(change.Fields, field)
		}
		plan.Changes = append(plan.Changes, change)
		switch c.Action {
		case ActionCreate:
			plan.Summary.Create++
		case ActionUpdate:
			plan.Summary.Update++
		case ActionDelete:
			plan.Summary.Delete++
		case ActionUnchanged:
			plan.Summary.Unchanged++
		}
	}
	return plan, nil
}
