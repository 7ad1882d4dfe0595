package promrules

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// AddFilePart appends a part to the rule file for the duration of a test (the SLO groups join the
// same way) and returns the function that removes it.
func AddFilePart(what, permission string, groups func(ctx context.Context, q db.Querier, teamID int64) ([]Group, []LeftOut, error)) (remove func()) {
	saved := fileSources
	fileSources = append(append([]groupSource(nil), saved...), groupSource{what: what, permission: permission, groups: groups})
	return func() { fileSources = saved }
}
