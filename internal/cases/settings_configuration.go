package cases

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// SettingsConfiguration is the case settings' part of a team's configuration document
// (teamconfig.Area, teamconfig.Single): the team's configuration as GetCaseSettings answers it
// without its times, checked as CreateCaseSettings' body by checkSettings. A team holds at most
// one: the document's replaces the team's whatever their ids, and takes the document's id (a
// lowercase UUID; a fresh one when the document gives none).
type SettingsConfiguration struct{}

// Key implements teamconfig.Area.
func (SettingsConfiguration) Key() string { return "caseSettings" }

// Single implements teamconfig.Single.
func (SettingsConfiguration) Single() {}

// Permissions implements teamconfig.Area.
func (SettingsConfiguration) Permissions() (read, write string) {
	return "case-config:Read", "case-config:Update"
}

// preparedSettings is a configuration of a document, checked.
type preparedSettings struct {
	id  string
	doc settingsDoc
}

func settingsResource(id string, doc settingsDoc) (teamconfig.Resource, error) {
	w := doc.wire(id, time.Time{}, time.Time{})
	b, err := w.MarshalJSON()
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if b, err = teamconfig.WithoutFields(b, "createTime", "updateTime"); err != nil {
		return teamconfig.Resource{}, err
	}
	return teamconfig.Resource{ID: id, Name: string(doc.Name.Value), Doc: b, Value: preparedSettings{id, doc}}, nil
}

// Export implements teamconfig.Area.
func (SettingsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	s, err := loadSettings(ctx, q, teamID, "")
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := settingsResource(s.id, s.doc)
	return []teamconfig.Resource{r}, err
}

var lowerUUIDText = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Prepare implements teamconfig.Area: CreateCaseSettings' body with the configuration's id.
func (SettingsConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if !lowerUUIDText.MatchString(id) {
		return teamconfig.Resource{}, apierror.Invalidf("id: %q is not a lowercase UUID", id)
	}
	body, err := teamconfig.WithoutFields(doc, "id")
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.CaseSettingsCreateInput
	if err := teamconfig.DecodeBody(oas.CreateCaseSettingsOperation, body, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	d := settingsDoc{Name: in.Name, GlobalIndicatorSettings: in.GlobalIndicatorSettings, CaseLifecycle: in.CaseLifecycle}
	if err := checkSettings(&d); err != nil {
		return teamconfig.Resource{}, err
	}
	return settingsResource(id, d)
}

// Put implements teamconfig.Area.
func (SettingsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	p := r.Value.(preparedSettings)
	if exists {
		cur, err := loadSettings(ctx, tx, teamID, "")
		if err != nil {
			return err
		}
		if cur.id == p.id {
			return updateSettings(ctx, tx, teamID, p.id, p.doc)
		}
		if err := deleteSettings(ctx, tx, teamID, cur.id); err != nil {
			return err
		}
	}
	created, existing, err := insertSettings(ctx, tx, teamID, p.id, p.doc)
	if err == nil && !created {
		return apierror.Conflictf("caseSettings: the team already has case settings %s", existing)
	}
	return err
}

// Delete implements teamconfig.Area.
func (SettingsConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteSettings(ctx, tx, teamID, id)
}
