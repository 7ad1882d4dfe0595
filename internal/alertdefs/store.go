package alertdefs

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// LockTeam serialises, until the transaction ends, every writer of the team's alert definitions
// (db.Tx.Serialize): a flow's references checked to exist stay so, and a definition checked to be
// unreferenced stays so, until commit. Writers take it after the SLO, connector and preset locks.
func LockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.alertdefs:%d", teamID))
}

// Reference kinds of alert_def_refs.
const (
	refConnector = "connector"
	refPreset    = "preset"
	refRouter    = "router"
	refSlo       = "slo"
	refAlertDef  = "alertdef"
	refWebhook   = "webhook" // an outgoing webhook, by its externalId in decimal
)

// stored is a definition as stored: the answer's document and what is kept beside it.
type stored struct {
	def          oas.AlertDef
	accessPolicy sql.NullString
}

func insertDef(ctx context.Context, tx *db.Tx, teamID int64, d oas.AlertDef, policy sql.NullString) error {
	doc, err := d.MarshalJSON()
	if err != nil {
		return err
	}
	p := d.AlertDefProperties.Value
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO alert_defs (team_id, id, version_id, name, type, priority, enabled, status, document, created_at, updated_at, access_policy)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)`,
		teamID, d.ID.Or(""), d.AlertVersionId.Or(""), p.Name.Or(""), string(p.Type.Or(zeroType)), string(priorityOf(p)),
		boolInt(enabledOf(p)), string(d.Status.Or(oas.AlertDefStatusALERTDEFSTATUSUNSPECIFIED)), string(doc), tx.Now.UnixMicro(), policy); err != nil {
		return fmt.Errorf("insert alert definition: %w", db.Translate(err))
	}
	if err := insertVersion(ctx, tx, teamID, d, doc); err != nil {
		return err
	}
	return writeRefs(ctx, tx, teamID, d.ID.Or(""), &p)
}

func updateDef(ctx context.Context, tx *db.Tx, teamID int64, d oas.AlertDef, policy sql.NullString) error {
	doc, err := d.MarshalJSON()
	if err != nil {
		return err
	}
	p := d.AlertDefProperties.Value
	if _, err := tx.ExecContext(ctx,
		`UPDATE alert_defs SET version_id = $3, name = $4, type = $5, priority = $6, enabled = $7, document = $8, updated_at = $9, access_policy = $10
		 WHERE team_id = $1 AND id = $2`,
		teamID, d.ID.Or(""), d.AlertVersionId.Or(""), p.Name.Or(""), string(p.Type.Or(zeroType)), string(priorityOf(p)),
		boolInt(enabledOf(p)), string(doc), tx.Now.UnixMicro(), policy); err != nil {
		return fmt.Errorf("update alert definition: %w", err)
	}
	if err := insertVersion(ctx, tx, teamID, d, doc); err != nil {
		return err
	}
	return writeRefs(ctx, tx, teamID, d.ID.Or(""), &p)
}

func insertVersion(ctx context.Context, tx *db.Tx, teamID int64, d oas.AlertDef, doc []byte) error {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO alert_def_versions (team_id, version_id, alert_def_id, document, created_at) VALUES ($1, $2, $3, $4, $5)`,
		teamID, d.AlertVersionId.Or(""), d.ID.Or(""), string(doc), tx.Now.UnixMicro()); err != nil {
		return fmt.Errorf("insert alert definition version: %w", err)
	}
	return nil
}

// deleteDef deletes the definition (its reference rows go with it) and marks its versions as
// those of a deleted definition.
func deleteDef(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM alert_def_refs WHERE team_id = $1 AND alert_def_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete alert definition references: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM alert_defs WHERE team_id = $1 AND id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete alert definition: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE alert_def_versions SET deleted_at = $3 WHERE team_id = $1 AND alert_def_id = $2`, teamID, id, tx.Now.UnixMicro()); err != nil {
		return fmt.Errorf("mark alert definition versions: %w", err)
	}
	return nil
}

// writeRefs replaces the reference rows of definition id with what p names.
func writeRefs(ctx context.Context, tx *db.Tx, teamID int64, id string, p *oas.AlertDefProperties) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM alert_def_refs WHERE team_id = $1 AND alert_def_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("clear alert definition references: %w", err)
	}
	for _, r := range refsOf(p) {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO alert_def_refs (team_id, alert_def_id, kind, ref_id) VALUES ($1, $2, $3, $4)`,
			teamID, id, r.kind, r.id); err != nil {
			return fmt.Errorf("insert alert definition reference: %w", err)
		}
	}
	return nil
}

type ref struct{ kind, id, path string }

// refsOf lists, once each, the resources p names: destinations' connectors and presets, the
// router, the SLO, and the definitions of a flow, each with where it was first named.
func refsOf(p *oas.AlertDefProperties) []ref {
	var out []ref
	seen := map[[2]string]bool{}
	add := func(kind, id, path string) {
		if kind == refAlertDef || kind == refSlo {
			id = canonicalID(id)
		}
		if id == "" || seen[[2]string{kind, id}] {
			return
		}
		seen[[2]string{kind, id}] = true
		out = append(out, ref{kind, id, path})
	}
	groups := func(path string, g oas.AlertDefNotificationGroup) {
		for i, d := range g.Destinations {
			add(refConnector, d.ConnectorId.Or(""), fmt.Sprintf("%s.destinations[%d].connectorId", path, i))
			add(refPreset, d.PresetId.Or(""), fmt.Sprintf("%s.destinations[%d].presetId", path, i))
		}
		if r, ok := g.Router.Get(); ok {
			add(refRouter, r.ID.Or(""), path+".router.id")
		}
		for i, w := range g.Webhooks {
			if in, ok := w.Integration.Get(); ok {
				if ext, ok := in.IntegrationId.Get(); ok {
					add(refWebhook, strconv.FormatInt(ext, 10), fmt.Sprintf("%s.webhooks[%d].integration.integrationId", path, i))
				}
			}
		}
	}
	if g, ok := p.NotificationGroup.Get(); ok {
		groups("notificationGroup", g)
	}
	//lint:ignore SA1019 the deprecated groups are still stored and checked for older clients
	for i, g := range p.NotificationGroupExcess {
		groups(fmt.Sprintf("notificationGroupExcess[%d]", i), g)
	}
	if s, ok := p.SloThreshold.Get(); ok {
		add(refSlo, s.SloDefinition.Value.SloId.Or(""), "sloThreshold.sloDefinition.sloId")
	}
	if f, ok := p.Flow.Get(); ok {
		for i, s := range f.Stages {
			for j, g := range s.FlowStagesGroups.Value.Groups {
				for k, a := range g.AlertDefs {
					add(refAlertDef, a.ID.Or(""), fmt.Sprintf("flow.stages[%d].flowStagesGroups.groups[%d].alertDefs[%d].id", i, j, k))
				}
			}
		}
	}
	return out
}

const selectDef = `SELECT document, created_at, updated_at, last_triggered_at, status, access_policy FROM alert_defs`

type scanner interface{ Scan(dest ...any) error }

func scanDef(row scanner) (stored, error) {
	var s stored
	var doc, status string
	var created, updated int64
	var triggered sql.NullInt64
	if err := row.Scan(&doc, &created, &updated, &triggered, &status, &s.accessPolicy); err != nil {
		return s, db.Translate(err)
	}
	if err := s.def.UnmarshalJSON([]byte(doc)); err != nil {
		return s, fmt.Errorf("alert definition document: %w", err)
	}
	s.def.CreatedTime = oas.NewOptDateTime(time.UnixMicro(created).UTC())
	s.def.UpdatedTime = oas.NewOptDateTime(time.UnixMicro(updated).UTC())
	s.def.LastTriggeredTime = oas.OptDateTime{}
	if triggered.Valid {
		s.def.LastTriggeredTime = oas.NewOptDateTime(time.UnixMicro(triggered.Int64).UTC())
	}
	s.def.Status = oas.NewOptAlertDefStatus(oas.AlertDefStatus(status))
	return s, nil
}

// getDef returns the team's definition; db.ErrNotFound when there is none.
func getDef(ctx context.Context, q db.Querier, teamID int64, id string) (stored, error) {
	return scanDef(q.QueryRowContext(ctx, selectDef+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// getVersion returns a version of one of the team's definitions, marked deleted when its
// definition is gone; db.ErrNotFound when there is none.
func getVersion(ctx context.Context, q db.Querier, teamID int64, versionID string) (oas.AlertDef, error) {
	var d oas.AlertDef
	var doc string
	var deleted sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT document, deleted_at FROM alert_def_versions WHERE team_id = $1 AND version_id = $2`, teamID, versionID).Scan(&doc, &deleted)
	if err != nil {
		return d, db.Translate(err)
	}
	if err := d.UnmarshalJSON([]byte(doc)); err != nil {
		return d, fmt.Errorf("alert definition version document: %w", err)
	}
	if deleted.Valid && d.AlertDefProperties.Set {
		d.AlertDefProperties.Value.Deleted = oas.NewOptBool(true)
	}
	return d, nil
}

// eachDef calls yield with each of the team's definitions, oldest first; it stops at yield's
// first error and returns it.
func eachDef(ctx context.Context, q db.Querier, teamID int64, yield func(*stored) error) error {
	rows, err := q.QueryContext(ctx, selectDef+` WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return fmt.Errorf("list alert definitions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanDef(rows)
		if err != nil {
			return err
		}
		if err := yield(&s); err != nil {
			return err
		}
	}
	return rows.Err()
}

// maxUsersNamed bounds the definitions a 409 names.
const maxUsersNamed = 20

// usersOf names the team's definitions whose current version names (kind, id), at most
// maxUsersNamed and then how many more, leaving out those in except.
func usersOf(ctx context.Context, q db.Querier, teamID int64, kind, id string, except map[string]bool) ([]string, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT d.id, d.name FROM alert_def_refs r JOIN alert_defs d ON d.team_id = r.team_id AND d.id = r.alert_def_id
		 WHERE r.team_id = $1 AND r.kind = $2 AND r.ref_id = $3 ORDER BY d.id`, teamID, kind, id)
	if err != nil {
		return nil, fmt.Errorf("find alert definitions using a %s: %w", kind, err)
	}
	defer rows.Close()
	var out []string
	n := 0
	for rows.Next() {
		var did, name string
		if err := rows.Scan(&did, &name); err != nil {
			return nil, fmt.Errorf("find alert definitions using a %s: %w", kind, err)
		}
		if except[did] {
			continue
		}
		n++
		if n <= maxUsersNamed {
			out = append(out, fmt.Sprintf("alert definition %q (id %s)", name, did))
		}
	}
	if n > maxUsersNamed {
		out = append(out, fmt.Sprintf("%d more alert definitions", n-maxUsersNamed))
	}
	return out, rows.Err()
}

// ConnectorUsers names the team's alert definitions whose notification destinations use the
// connector (a connectors.Users).
func ConnectorUsers(ctx context.Context, tx *db.Tx, teamID int64, connectorID string) ([]string, error) {
	return usersOf(ctx, tx, teamID, refConnector, connectorID, nil)
}

// PresetUsers names the team's alert definitions whose notification destinations use the preset
// (a presets.Users).
func PresetUsers(ctx context.Context, tx *db.Tx, teamID int64, presetID string) ([]string, error) {
	return usersOf(ctx, tx, teamID, refPreset, presetID, nil)
}

// WebhookUsers names the team's alert definitions whose notification webhooks name the outgoing
// webhook (by its externalId, as definitions do): such a webhook may be neither deleted nor change
// type (an outgoingwebhooks.Users). It takes the team's connector lock, which definition writers
// take before they check what they name, so none names the webhook between this answer and the
// webhook's change.
func WebhookUsers(ctx context.Context, tx *db.Tx, teamID int64, _ string, externalID int64) ([]string, error) {
	if err := connectors.LockTeam(ctx, tx, teamID); err != nil {
		return nil, err
	}
	return usersOf(ctx, tx, teamID, refWebhook, strconv.FormatInt(externalID, 10), nil)
}

// SloUsers names the team's SLO threshold alert definitions on the SLO.
func SloUsers(ctx context.Context, tx *db.Tx, teamID int64, sloID string) ([]string, error) {
	return usersOf(ctx, tx, teamID, refSlo, sloID, nil)
}

func priorityOf(p oas.AlertDefProperties) oas.AlertDefPriority {
	return p.Priority.Or(oas.AlertDefPriorityALERTDEFPRIORITYP5ORUNSPECIFIED)
}

// enabledOf is the definition's enabled state; not set is false, as proto3 reads it.
func enabledOf(p oas.AlertDefProperties) bool { return p.Enabled.Or(false) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// List returns the current version of every alert definition of the team, oldest first, as the
// API answers them (for the Prometheus rule export and other readers). q may be a *db.Tx.
func List(ctx context.Context, q db.Querier, teamID int64) ([]oas.AlertDef, error) {
	out := []oas.AlertDef{}
	err := eachDef(ctx, q, teamID, func(s *stored) error {
		out = append(out, s.def)
		return nil
	})
	return out, err
}

// Load returns the current version of the team's definition id; db.ErrNotFound when there is
// none.
func Load(ctx context.Context, q db.Querier, teamID int64, id string) (oas.AlertDef, error) {
	s, err := getDef(ctx, q, teamID, id)
	return s.def, err
}

// LoadVersion returns the version versionID of one of the team's definitions (deleted ones
// included, marked deleted); db.ErrNotFound when there is none.
func LoadVersion(ctx context.Context, q db.Querier, teamID int64, versionID string) (oas.AlertDef, error) {
	return getVersion(ctx, q, teamID, versionID)
}

// ReleaseRouter makes the team's definitions that name router routerID stop naming it (a
// routers.Release, run in the transaction that deletes the router). In each notification group
// that names it, the router keeps its notifyOn and loses its id, which sends the definition's
// alerts through the team's routers that take its labels, as a router sent without an id does.
// Each definition so changed is stored as a new version (a new alertVersionId, updatedTime now).
//
// Errors: only the database's.
func ReleaseRouter(ctx context.Context, tx *db.Tx, teamID int64, routerID string) error {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT alert_def_id FROM alert_def_refs WHERE team_id = $1 AND kind = $2 AND ref_id = $3 ORDER BY alert_def_id`,
		teamID, refRouter, routerID)
	if err != nil {
		return fmt.Errorf("find alert definitions naming the router: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("find alert definitions naming the router: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("find alert definitions naming the router: %w", err)
	}
	for _, id := range ids {
		s, err := getDef(ctx, tx, teamID, id)
		if err != nil {
			return err
		}
		p := s.def.AlertDefProperties.Value
		release := func(g *oas.AlertDefNotificationGroup) {
			if r, ok := g.Router.Get(); ok && r.ID.Or("") == routerID {
				r.ID = oas.OptString{}
				g.Router = oas.NewOptAlertDefNotificationRouter(r)
			}
		}
		if g, ok := p.NotificationGroup.Get(); ok {
			release(&g)
			p.NotificationGroup = oas.NewOptAlertDefNotificationGroup(g)
		}
		//lint:ignore SA1019 the deprecated groups are still stored and checked for older clients
		excess := slices.Clone(p.NotificationGroupExcess)
		for i := range excess {
			release(&excess[i])
		}
		//lint:ignore SA1019 as above
		p.NotificationGroupExcess = excess
		d := s.def
		d.AlertDefProperties = oas.NewOptAlertDefProperties(p)
		d.AlertVersionId = oas.NewOptString(tx.NewID())
		d.UpdatedTime = oas.NewOptDateTime(tx.Now)
		if err := updateDef(ctx, tx, teamID, d, s.accessPolicy); err != nil {
			return err
		}
	}
	return nil
}

// VersionsWhileFiring answers the versions of the team's definition id that were current at
// some time since the oldest of its incidents that its source (Alertmanager) has not resolved
// opened, oldest first, but the current version; none when it has no such incident, or was not
// edited since. The Prometheus rule file keeps their rules, retired, so that Prometheus resolves
// an alert of an older version that the current one no longer makes at its next evaluation
// (issue 37; internal/promrules). q may be a *db.Tx.
//
// Errors: only the database's.
func VersionsWhileFiring(ctx context.Context, q db.Querier, teamID int64, current oas.AlertDef) ([]oas.AlertDef, error) {
	id := current.ID.Or("")
	if !current.CreatedTime.Set || !current.UpdatedTime.Set || !current.UpdatedTime.Value.After(current.CreatedTime.Value) {
		return nil, nil // never edited
	}
	var opened sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT MIN(i.created_at) FROM incident_labels l JOIN incidents i
		ON i.team_id = l.team_id AND i.id = l.incident_id
		WHERE l.team_id = $1 AND l.key = 'alert_def_id' AND l.value = $2 AND i.source_resolved_at IS NULL`, teamID, id).Scan(&opened)
	if err != nil {
		return nil, fmt.Errorf("open incidents of the definition: %w", db.Translate(err))
	}
	if !opened.Valid {
		return nil, nil
	}
	// The version current when the incident opened (the latest created before), and every one after.
	rows, err := q.QueryContext(ctx, `SELECT version_id, document FROM alert_def_versions
		WHERE team_id = $1 AND alert_def_id = $2 AND created_at >= COALESCE((SELECT MAX(created_at) FROM alert_def_versions
			WHERE team_id = $1 AND alert_def_id = $2 AND created_at <= $3), 0)
		ORDER BY created_at, version_id`, teamID, id, opened.Int64)
	if err != nil {
		return nil, fmt.Errorf("versions of the definition: %w", db.Translate(err))
	}
	defer rows.Close()
	var out []oas.AlertDef
	for rows.Next() {
		var version, doc string
		if err := rows.Scan(&version, &doc); err != nil {
			return nil, err
		}
		if version == current.AlertVersionId.Or("") {
			continue
		}
		var d oas.AlertDef
		if err := d.UnmarshalJSON([]byte(doc)); err != nil {
			return nil, fmt.Errorf("alert definition version document: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
