package views

import (
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// MaxID is the largest view id; a team whose numbering reaches it can create no more views.
const MaxID = 2147483647

// MaxViews is the most views a team may hold: the list answers at most this many.
const MaxViews = 100000

// checkView enforces what the OpenAPI document cannot express (its bounds are checked by the
// generated decoder): at most one kind of time selection, and custom times that are RFC 3339
// date-times.
//
// Errors: Invalid naming timeSelection or timeSelection.customSelection.fromTime/toTime.
func checkView(req *oas.ViewRequest) error {
	ts := req.TimeSelection
	if ts.QuickSelection.Set && ts.CustomSelection.Set {
		return apierror.Invalidf("timeSelection: give at most one of quickSelection and customSelection, not both")
	}
	if c, ok := ts.CustomSelection.Get(); ok {
		for _, f := range []struct{ field, v string }{{"fromTime", c.FromTime}, {"toTime", c.ToTime}} {
			if _, err := time.Parse(time.RFC3339Nano, f.v); err != nil {
				return apierror.Invalidf("timeSelection.customSelection.%s: must be an RFC 3339 date-time (got %q)", f.field, f.v)
			}
		}
	}
	return nil
}

// view is a stored view: its id, its folder and the rest of its request body.
type view struct {
	id       int32
	folderID string
	doc      oas.ViewRequest
}

func (v view) wire() oas.View {
	out := oas.View{
		ID:            v.id,
		Name:          v.doc.Name,
		SearchQuery:   v.doc.SearchQuery,
		TimeSelection: v.doc.TimeSelection,
		Filters:       v.doc.Filters,
		IsCompactMode: v.doc.IsCompactMode,
		ViewType:      v.doc.ViewType,
	}
	if v.folderID != "" {
		out.FolderId = oas.NewOptString(v.folderID)
	}
	return out
}
