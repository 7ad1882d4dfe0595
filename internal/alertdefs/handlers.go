// Package alertdefs serves alert definitions: the 15 public types stored exactly as sent (each
// create and replace a new version, readable by its version id), checked where mgmtapi can check
// them (PromQL parses, the SLO, connectors, presets and router named exist in the team, flow
// stages name the team's definitions without a cycle), listed with the public filters, counted
// and downloaded. Metric threshold, metric anomaly and SLO threshold definitions are the ones
// mgmtapi can evaluate; logs, tracing, flow and analytics definitions are stored and checked,
// never evaluated (mgmtapi holds no logs or spans). Other areas read the current definitions
// through List and Load; a connector, preset or SLO a definition names cannot be deleted
// (ConnectorUsers, PresetUsers, SloUsers), and a router it names can, after which the definition
// routes by its labels (ReleaseRouter).
package alertdefs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Permissions of the public document.
const (
	readPermission   = "alerts:ReadConfig"
	updatePermission = "alerts:UpdateConfig"
)

// MaxDefinitions bounds a team's definitions; the next create is a 429.
const MaxDefinitions = 10000

// AlertDefHandler implements the alert-definition operations of oas.Handler.
type AlertDefHandler struct {
	db *db.DB
}

// NewHandler returns the alert-definition operations.
func NewHandler(database *db.DB) *AlertDefHandler {
	return &AlertDefHandler{db: database}
}

// CreateAlertDef stores a new definition under a fresh id and version id.
//
// Errors: Invalid (see checkProperties, checkRefs); LimitExceeded when the team holds
// MaxDefinitions.
func (h *AlertDefHandler) CreateAlertDef(ctx context.Context, req *oas.AlertDefToCreate) (*oas.AlertDefWritten, error) {
	caller := auth.PrincipalFrom(ctx)
	p := req.AlertDefProperties
	if err := checkProperties("alertDefProperties", &p); err != nil {
		return nil, err
	}
	var d oas.AlertDef
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lock(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		var err error
		d, err = create(ctx, tx, caller.TeamID, "alertDefProperties", "", p, policyOf(req.AccessPolicy))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AlertDefWritten{AlertDef: oas.NewOptAlertDef(d)}, nil
}

// policyOf is a create's access policy: an empty one is none.
func policyOf(p oas.OptString) sql.NullString {
	if s := p.Or(""); s != "" {
		return sql.NullString{String: s, Valid: true}
	}
	return sql.NullString{}
}

// lock takes the team's SLO, connector, preset and definition locks, in that order.
func lock(ctx context.Context, tx *db.Tx, teamID int64) error {
	if err := lockTargets(ctx, tx, teamID); err != nil {
		return err
	}
	return LockTeam(ctx, tx, teamID)
}

// create stores p (already through checkProperties) as a new definition, under id (a lowercase
// UUID; a fresh one when id is "").
//
// Errors: see checkRefs; LimitExceeded when the team holds MaxDefinitions.
func create(ctx context.Context, tx *db.Tx, teamID int64, path, id string, p oas.AlertDefProperties, policy sql.NullString) (oas.AlertDef, error) {
	n, err := countDefs(ctx, tx, teamID)
	if err != nil {
		return oas.AlertDef{}, err
	}
	if n >= MaxDefinitions {
		return oas.AlertDef{}, apierror.LimitExceededf("alertDefProperties: the team holds %d alert definitions, the most it may; delete one first", n)
	}
	if id == "" {
		id = tx.NewID()
	}
	if err := checkRefs(ctx, tx, teamID, path, id, &p); err != nil {
		return oas.AlertDef{}, err
	}
	d := oas.AlertDef{
		ID:                 oas.NewOptString(id),
		AlertVersionId:     oas.NewOptString(tx.NewID()),
		AlertDefProperties: oas.NewOptAlertDefProperties(p),
		CreatedTime:        oas.NewOptDateTime(tx.Now),
		UpdatedTime:        oas.NewOptDateTime(tx.Now),
		Status:             oas.NewOptAlertDefStatus(oas.AlertDefStatusALERTDEFSTATUSUNSPECIFIED),
	}
	return d, insertDef(ctx, tx, teamID, d, policy)
}

// replace stores p (already through checkProperties) as the new version of definition id.
//
// Errors: NotFound naming idPath when the team has no such definition; see checkRefs.
func replace(ctx context.Context, tx *db.Tx, teamID int64, idPath, path, id string, p oas.AlertDefProperties, action oas.OptAlertDefAccessPolicyAction) (oas.AlertDef, error) {
	old, err := getDef(ctx, tx, teamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return oas.AlertDef{}, apierror.NotFoundf("%s: no alert definition %q", idPath, id)
	}
	if err != nil {
		return oas.AlertDef{}, err
	}
	if err := checkRefs(ctx, tx, teamID, path, id, &p); err != nil {
		return oas.AlertDef{}, err
	}
	policy := old.accessPolicy
	if a, ok := action.Get(); ok {
		switch {
		case a.Upsert.Set:
			policy = sql.NullString{String: a.Upsert.Value, Valid: a.Upsert.Value != ""}
		case a.Delete != nil:
			policy = sql.NullString{}
		}
	}
	d := old.def
	d.AlertDefProperties = oas.NewOptAlertDefProperties(p)
	d.AlertVersionId = oas.NewOptString(tx.NewID())
	d.UpdatedTime = oas.NewOptDateTime(tx.Now)
	if err := updateDef(ctx, tx, teamID, d, policy); err != nil {
		return oas.AlertDef{}, err
	}
	return d, recordEditWhileFiring(ctx, tx, teamID, old.def, d)
}

// recordEditWhileFiring writes on the open cases where an alert of the definition fires (its
// incidents, by their alert_def_id label, still TRIGGERED) that it was edited: the version
// before and after and the new conditions (issue 37: the incident and case stay open across an
// edit).
func recordEditWhileFiring(ctx context.Context, tx *db.Tx, teamID int64, before, after oas.AlertDef) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT i.case_id FROM incidents i JOIN incident_labels l
		ON l.team_id = i.team_id AND l.incident_id = i.id
		WHERE i.team_id = $1 AND l.key = 'alert_def_id' AND l.value = $2 AND i.state = $3 AND i.case_id <> ''
		ORDER BY i.case_id`, teamID, after.ID.Or(""), string(oas.IncidentStateINCIDENTSTATETRIGGERED))
	if err != nil {
		return fmt.Errorf("cases of the definition's firing alerts: %w", err)
	}
	var caseIDs []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		caseIDs = append(caseIDs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(caseIDs) == 0 {
		return err
	}
	p := after.AlertDefProperties.Value
	text := fmt.Sprintf("Alert definition %q (%s) was edited while its alert fires: version %s is now %s.%s",
		p.Name.Or(""), after.ID.Or(""), before.AlertVersionId.Or(""), after.AlertVersionId.Or(""), conditionWords(p))
	return cases.RecordDefinitionEdited(ctx, tx, teamID, caseIDs, text)
}

var comparisonWords = map[oas.AlertDefMetricThresholdConditionType]string{
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEMORETHANORUNSPECIFIED: "more than",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPELESSTHAN:              "less than",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEMORETHANOREQUALS:      "at least",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPELESSTHANOREQUALS:      "at most",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEEQUALS:                "equal to",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPENOTEQUALS:             "not equal to",
}

// conditionWords states a definition's metric conditions for a case event: " Rule 0: more than
// 0.1 for 100% of 1m." per rule (nothing for other types).
func conditionWords(p oas.AlertDefProperties) string {
	var b strings.Builder
	if m, ok := p.MetricThreshold.Get(); ok {
		for i, r := range m.Rules {
			c := r.Condition.Value
			window := c.OfTheLast.Value.MetricTimeWindowDynamicDuration.Or("")
			if window == "" {
				specific := c.OfTheLast.Value.MetricTimeWindowSpecificValue.Or(oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES1ORUNSPECIFIED)
				window = strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(string(specific), "METRIC_TIME_WINDOW_VALUE_"), "_OR_UNSPECIFIED"), "_", " "))
			}
			fmt.Fprintf(&b, " Rule %d: %s %s for %d%% of %s.", i,
				comparisonWords[c.ConditionType.Or(oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEMORETHANORUNSPECIFIED)],
				strconv.FormatFloat(c.Threshold.Or(0), 'g', -1, 64), c.ForOverPct.Or(0), window)
		}
	}
	if m, ok := p.MetricAnomaly.Get(); ok {
		for i, r := range m.Rules {
			c := r.Condition.Value
			fmt.Fprintf(&b, " Rule %d: threshold %s for %d%%.", i, strconv.FormatFloat(c.Threshold.Or(0), 'g', -1, 64), c.ForOverPct.Or(0))
		}
	}
	return b.String()
}

// ReplaceAlertDef replaces the properties of definition id under a new version id.
//
// Errors: Invalid when id is missing, and see checkProperties, checkRefs; NotFound when the team
// has no such definition.
func (h *AlertDefHandler) ReplaceAlertDef(ctx context.Context, req *oas.AlertDefReplacement) (*oas.AlertDefWritten, error) {
	caller := auth.PrincipalFrom(ctx)
	id := req.ID.Or("")
	if id == "" {
		return nil, apierror.Invalidf("id: required; it names the alert definition to replace")
	}
	p, ok := req.AlertDefProperties.Get()
	if !ok {
		return nil, apierror.Invalidf("alertDefProperties: required")
	}
	if err := checkAccessPolicyAction("accessPolicy", req.AccessPolicy); err != nil {
		return nil, err
	}
	if err := checkProperties("alertDefProperties", &p); err != nil {
		return nil, err
	}
	var d oas.AlertDef
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lock(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		var err error
		d, err = replace(ctx, tx, caller.TeamID, "id", "alertDefProperties", canonicalID(id), p, req.AccessPolicy)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AlertDefWritten{AlertDef: oas.NewOptAlertDef(d)}, nil
}

// GetAlertDef answers the current version of a definition.
//
// Errors: NotFound when the team has no such definition.
func (h *AlertDefHandler) GetAlertDef(ctx context.Context, params oas.GetAlertDefParams) (*oas.AlertDefRead, error) {
	caller := auth.PrincipalFrom(ctx)
	id := canonicalID(params.ID)
	s, err := getDef(ctx, h.db.Read(), caller.TeamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, apierror.NotFoundf("id: no alert definition %q", params.ID)
	}
	if err != nil {
		return nil, err
	}
	out := &oas.AlertDefRead{AlertDef: oas.NewOptAlertDef(s.def)}
	if params.IncludeAccessPermissions.Or(false) {
		out.Access = oas.NewOptAlertDefAccess(accessOf(caller, s.accessPolicy))
	}
	return out, nil
}

// GetAlertDefByVersionId answers one version of one of the team's definitions, deleted ones
// included.
//
// Errors: NotFound when the team has no such version.
func (h *AlertDefHandler) GetAlertDefByVersionId(ctx context.Context, params oas.GetAlertDefByVersionIdParams) (*oas.AlertDefRead, error) {
	caller := auth.PrincipalFrom(ctx)
	vid := canonicalID(params.AlertVersionID)
	d, err := getVersion(ctx, h.db.Read(), caller.TeamID, vid)
	if errors.Is(err, db.ErrNotFound) {
		return nil, apierror.NotFoundf("alert_version_id: no alert definition version %q", params.AlertVersionID)
	}
	if err != nil {
		return nil, err
	}
	out := &oas.AlertDefRead{AlertDef: oas.NewOptAlertDef(d)}
	if params.IncludeAccessPermissions.Or(false) {
		policy := sql.NullString{}
		if s, err := getDef(ctx, h.db.Read(), caller.TeamID, d.ID.Or("")); err == nil {
			policy = s.accessPolicy
		} else if !errors.Is(err, db.ErrNotFound) {
			return nil, err
		}
		out.Access = oas.NewOptAlertDefAccess(accessOf(caller, policy))
	}
	return out, nil
}

// DeleteAlertDef deletes a definition; its versions stay readable.
//
// Errors: NotFound when the team has no such definition; Conflict naming the flow definitions
// that name it.
func (h *AlertDefHandler) DeleteAlertDef(ctx context.Context, params oas.DeleteAlertDefParams) error {
	caller := auth.PrincipalFrom(ctx)
	id := canonicalID(params.ID)
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := LockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		return remove(ctx, tx, caller.TeamID, "id", id, nil)
	})
}

// remove deletes definition id unless a flow definition outside except names it.
func remove(ctx context.Context, tx *db.Tx, teamID int64, path, id string, except map[string]bool) error {
	if _, err := getDef(ctx, tx, teamID, id); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return apierror.NotFoundf("%s: no alert definition %q", path, id)
		}
		return err
	}
	users, err := usersOf(ctx, tx, teamID, refAlertDef, id, except)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return apierror.Conflictf("%s: alert definition %s is used by %s; change or delete those first", path, id, joinNames(users))
	}
	return deleteDef(ctx, tx, teamID, id)
}

// accessOf is what the caller may do with a definition, and its access policy.
func accessOf(caller *auth.Principal, policy sql.NullString) oas.AlertDefAccess {
	read, manage := caller.Can(readPermission), caller.Can(updatePermission)
	a := oas.AlertDefAccess{Permissions: oas.NewOptAlertDefPermissions(oas.AlertDefPermissions{
		CanRead: oas.NewOptBool(read), CanManage: oas.NewOptBool(manage),
		CanReadAccessPolicy: oas.NewOptBool(read), CanUpdateAccessPolicy: oas.NewOptBool(manage),
	})}
	if policy.Valid {
		a.AccessPolicy = oas.NewOptString(policy.String)
	}
	return a
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

func countDefs(ctx context.Context, q db.Querier, teamID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM alert_defs WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count alert definitions: %w", err)
	}
	return n, nil
}

// canonicalID is an id as stored: UUIDs are lowercase, and a lookup matches either case.
func canonicalID(id string) string { return strings.ToLower(id) }
