package retentions

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// MaxNameLength is the most characters (code points) a retention tag name may have.
const MaxNameLength = 100

// defaults are the platform's retention tags, in order. Every team has them: they are not stored,
// so a team created at any time has them on either engine; only a team's renames are stored. The
// ids are UUIDs because data-plan policies name a tag in archiveRetention.id, which is one.
var defaults = []oas.RetentionTag{
	{ID: "00000000-0000-4000-8000-000000000001", Name: "Default", Editable: false, Order: 1},
	{ID: "00000000-0000-4000-8000-000000000002", Name: "Short", Editable: true, Order: 2},
	{ID: "00000000-0000-4000-8000-000000000003", Name: "Intermediate", Editable: true, Order: 3},
	{ID: "00000000-0000-4000-8000-000000000004", Name: "Long", Editable: true, Order: 4},
}

// tag returns the platform's tag with that id.
func tag(id string) (oas.RetentionTag, bool) {
	for _, t := range defaults {
		if t.ID == id {
			return t, true
		}
	}
	return oas.RetentionTag{}, false
}

// rename is one checked element of an update.
type rename struct{ id, name string }

// checkUpdate validates an update before anything is read: every id given once, every tag known
// and editable, every name within its bounds. A tag that is not editable may be given with its
// own name (a list read and written back): it is left out of the renames.
//
// Errors: Invalid naming retentionUpdateElements[i] and the field; NotFound for an unknown id.
func checkUpdate(req *oas.RetentionTagUpdate) ([]rename, error) {
	out := make([]rename, 0, len(req.RetentionUpdateElements))
	seen := map[string]int{}
	for i, e := range req.RetentionUpdateElements {
		path := func(field string) string { return "retentionUpdateElements[" + strconv.Itoa(i) + "]." + field }
		if j, dup := seen[e.ID]; dup {
			return nil, apierror.Invalidf("%s: %q is also retentionUpdateElements[%d].id; give each tag once", path("id"), e.ID, j)
		}
		seen[e.ID] = i
		t, ok := tag(e.ID)
		if !ok {
			return nil, apierror.NotFoundf("%s: no retention tag %q", path("id"), e.ID)
		}
		if !t.Editable {
			if e.Name == t.Name {
				// Sent back unchanged, as a client that read the list and writes it all back
				// does: nothing to change (a tag that is not editable keeps its platform name).
				continue
			}
			return nil, apierror.Invalidf("%s: retention tag %q (%s) is not editable", path("id"), e.ID, t.Name)
		}
		if n := utf8.RuneCountInString(e.Name); n < 1 || n > MaxNameLength {
			return nil, apierror.Invalidf("%s: length must be 1 to %d characters (got %d)", path("name"), MaxNameLength, n)
		}
		if strings.TrimSpace(e.Name) == "" {
			return nil, apierror.Invalidf("%s: must contain a non-whitespace character", path("name"))
		}
		out = append(out, rename{id: e.ID, name: e.Name})
	}
	return out, nil
}
