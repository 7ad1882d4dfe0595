package alertdefs

import (
	"context"
	"database/sql"
	"regexp"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the alert definitions' part of a team's configuration document
// (teamconfig.Area): each definition as GetAlertDef answers its current version, without what
// the server sets (alertVersionId, createdTime, updatedTime, lastTriggeredTime, status), that is
// {id, alertDefProperties}, and with accessPolicy, the access policy as CreateAlertDef takes it
// (left out when the definition has none). A definition is checked as CreateAlertDef's body
// (checkProperties, which settles its type) and stored by create and replace, as the HTTP
// operations do: what it names (SLO, connectors, presets, router, flow definitions) must be the
// team's once the earlier areas are applied, a replace is a new version, and a delete leaves the
// versions readable. A flow is stored after the definitions of the document it names, and
// deleted before them (teamconfig.PutOrderer, teamconfig.DeleteOrderer).
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "alertDefinitions" }

// Permissions implements teamconfig.Area: those of GetAlertDef and CreateAlertDef.
func (Configuration) Permissions() (read, write string) { return readPermission, updatePermission }

// configured is a definition of a document, checked, or one of the team's.
type configured struct {
	props  oas.AlertDefProperties
	policy sql.NullString
}

// resource is the definition id in the document's form; the same definition is always the same
// JSON value, whether exported or prepared.
func (c configured) resource(id string) (teamconfig.Resource, error) {
	d := oas.AlertDef{ID: oas.NewOptString(id), AlertDefProperties: oas.NewOptAlertDefProperties(c.props)}
	doc, err := d.MarshalJSON()
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if c.policy.Valid {
		if doc, err = teamconfig.WithFields(doc, map[string]any{"accessPolicy": c.policy.String}); err != nil {
			return teamconfig.Resource{}, err
		}
	}
	return teamconfig.Resource{ID: id, Name: c.props.Name.Or(""), Doc: doc, Value: c}, nil
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachDef(ctx, q, teamID, func(s *stored) error {
		r, err := configured{props: s.def.AlertDefProperties.Value, policy: s.accessPolicy}.resource(s.def.ID.Or(""))
		out = append(out, r)
		return err
	})
	return out, err
}

// definitionID is the form of a definition's id (alertDef.id), as stored: a lowercase UUID.
var definitionID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Prepare implements teamconfig.Area: CreateAlertDef's body ({alertDefProperties, accessPolicy})
// with the definition's id, a UUID (lowercased; a fresh one when the document gives none),
// checked by checkProperties.
//
// Errors: Invalid naming id or the field of alertDefProperties and the rule.
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	id = canonicalID(id)
	if !definitionID.MatchString(id) {
		return teamconfig.Resource{}, teamconfig.Invalidf("id: %q is not a UUID; an alert definition's id is one", id)
	}
	body, err := teamconfig.WithoutFields(doc, "id")
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.AlertDefToCreate
	if err := teamconfig.DecodeBody(oas.CreateAlertDefOperation, body, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	c := configured{props: in.AlertDefProperties, policy: policyOf(in.AccessPolicy)}
	if err := checkProperties("alertDefProperties", &c.props); err != nil {
		return teamconfig.Resource{}, err
	}
	return c.resource(id)
}

// Put implements teamconfig.Area: CreateAlertDef under the document's id, or ReplaceAlertDef (a
// new version) whose access policy becomes the document's.
//
// Errors: those of create and replace (Invalid naming what the definition names and the team
// lacks; LimitExceeded).
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	c := r.Value.(configured)
	if err := lock(ctx, tx, teamID); err != nil {
		return err
	}
	if !exists {
		_, err := create(ctx, tx, teamID, "alertDefProperties", r.ID, c.props, c.policy)
		return err
	}
	action := oas.AlertDefAccessPolicyAction{Delete: &oas.EmptyObject{}}
	if c.policy.Valid {
		action = oas.AlertDefAccessPolicyAction{Upsert: oas.NewOptString(c.policy.String)}
	}
	_, err := replace(ctx, tx, teamID, "id", "alertDefProperties", r.ID, c.props, oas.NewOptAlertDefAccessPolicyAction(action))
	return err
}

// Delete implements teamconfig.Area, as DeleteAlertDef: the definition's versions stay readable.
//
// Errors: Conflict naming the flow definitions that name it.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	return remove(ctx, tx, teamID, "id", id, nil)
}

// OrderPuts implements teamconfig.PutOrderer: definitions that name no definition first, then
// flows by how deep they nest, so that the definitions a flow names are stored before it.
func (Configuration) OrderPuts(want []teamconfig.Resource) []int {
	level := flowLevels(want)
	order := make([]int, len(want))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return level[want[x].ID] - level[want[y].ID] })
	return order
}

// OrderDeletes implements teamconfig.DeleteOrderer: the deepest flows first, so that a prune
// deletes a flow before the definitions it names.
func (Configuration) OrderDeletes(deletes []teamconfig.Change, current []teamconfig.Resource) {
	level := flowLevels(current)
	slices.SortStableFunc(deletes, func(x, y teamconfig.Change) int { return level[y.ID] - level[x.ID] })
}

// flowLevels answers, for each definition of list, 0 when it names no definition of list, and
// otherwise one more than the highest level of those it names (a cycle, which checkRefs
// refuses, is cut where it closes).
func flowLevels(list []teamconfig.Resource) map[string]int {
	named := make(map[string][]string, len(list))
	inList := make(map[string]bool, len(list))
	for _, r := range list {
		inList[r.ID] = true
	}
	for _, r := range list {
		c, ok := r.Value.(configured)
		if !ok {
			continue
		}
		for _, ref := range refsOf(&c.props) {
			if ref.kind == refAlertDef && inList[ref.id] { // others are stored already, or missing (checkRefs says so)
				named[r.ID] = append(named[r.ID], ref.id)
			}
		}
	}
	level := map[string]int{}
	visiting := map[string]bool{}
	var visit func(id string) int
	visit = func(id string) int {
		if l, ok := level[id]; ok {
			return l
		}
		if visiting[id] {
			return 0
		}
		visiting[id] = true
		l := 0
		for _, n := range named[id] {
			l = max(l, visit(n)+1)
		}
		visiting[id] = false
		level[id] = l
		return l
	}
	for _, r := range list {
		visit(r.ID)
	}
	return level
}
