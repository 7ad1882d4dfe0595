package alertschedules

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the alert scheduler rules' part of a team's configuration document
// (teamconfig.Area): each rule as GetAlertSchedulerRule answers it without what the server sets
// (the version id, createdAt, updatedAt), identified by its uniqueIdentifier. A rule is checked
// by check, as CreateAlertSchedulerRule's body is, and stored by createIn, replaceIn and removeIn,
// as the HTTP operations store it (a replace gives the rule a new version id and keeps its
// createdAt; the team holds at most MaxRules).
//
// A rule's zone and times are stored as written, and check is the only rewriting (the operation
// filled in, enabled false when left out, an empty endTime dropped): the exported rule, applied
// again, is the same document, so the plan leaves it unchanged.
//
// The alert definition ids of a filter's alertUniqueIds are not looked up, as the HTTP
// operations do not look them up: a rule may name a definition the team does not have (yet).
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "alertSchedulerRules" }

// Permissions implements teamconfig.Area: those of GetAlertSchedulerRule and of the writing
// operations.
func (Configuration) Permissions() (read, write string) {
	return "suppression-rules:ReadConfig", "suppression-rules:UpdateConfig"
}

// configured is a rule in the document's form: without its version id and times.
func configured(r oas.AlertSchedulerRule) (teamconfig.Resource, error) {
	r.ID.Reset()
	r.CreatedAt.Reset()
	r.UpdatedAt.Reset()
	doc, err := r.MarshalJSON()
	return teamconfig.Resource{ID: r.UniqueIdentifier.Or(""), Name: r.Name.Or(""), Doc: doc, Value: r}, err
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachRule(ctx, q, teamID, false, func(rec record) error {
		r, err := configured(rec.rule)
		out = append(out, r)
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the rule of CreateAlertSchedulerRule's body, checked by
// check, under the document's uniqueIdentifier (a fresh one when it gives none). The document's
// id (the version id), createdAt and updatedAt are ignored, as the create ignores them.
//
// Errors: Invalid naming the field (uniqueIdentifier as teamconfig.CheckID words it).
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.AlertSchedulerRule
	if err := teamconfig.DecodeBody(oas.CreateAlertSchedulerRuleOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id := in.UniqueIdentifier.Or("")
	if id == "" {
		id = newID()
	} else if err := teamconfig.CheckID(id); err != nil {
		// CheckID names the field "id"; here the id is the rule's uniqueIdentifier.
		return teamconfig.Resource{}, teamconfig.Invalidf("uniqueIdentifier: %s", strings.TrimPrefix(err.Error(), "id: "))
	}
	r, _, err := check("", in)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	r.UniqueIdentifier = oas.NewOptString(id)
	return configured(r)
}

// Put implements teamconfig.Area: a replace as UpdateAlertSchedulerRule's, or a create as
// CreateAlertSchedulerRule's under the document's uniqueIdentifier.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, res teamconfig.Resource, exists bool) error {
	r := res.Value.(oas.AlertSchedulerRule)
	var err error
	if exists {
		_, err = replaceIn(ctx, tx, teamID, []oas.AlertSchedulerRule{r}, []string{res.ID}, []string{"uniqueIdentifier"})
	} else {
		_, err = createIn(ctx, tx, teamID, []oas.AlertSchedulerRule{r})
	}
	return err
}

// Delete implements teamconfig.Area, as DeleteAlertSchedulerRule.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return removeIn(ctx, tx, teamID, "uniqueIdentifier", id)
}
