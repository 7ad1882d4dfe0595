package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/prometheus/common/model"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
)

// The labels of an alert definition's alert (internal/promrules) that an edit of the definition
// may change without changing what is alerting: they are left out of its identity.
var editableLabels = []string{
	"alertname", "alert_def_name", "alert_def_priority", "severity",
	versionKey, // on alerts of rule files written before issue 37
}

// versionKey names the definition's version: an annotation, or a label on older alerts.
const versionKey = "alert_def_version_id"

// definitionIdentity answers the identity of an alert of an alert definition (labels holding
// alert_def_id), and "" for any other alert: the fingerprint, as Alertmanager computes one, of its
// labels but those an edit of the definition changes (name, priority, severity, version). The
// definition's id, its rule's index, its entity labels, and the labels of the series (or of the
// groupByKeys group) that alerts remain: an alert of service=a and one of service=b are two.
func definitionIdentity(labels map[string]string) string {
	if labels["alert_def_id"] == "" {
		return ""
	}
	set := model.LabelSet{}
	for k, v := range labels {
		set[model.LabelName(k)] = model.LabelValue(v)
	}
	for _, k := range editableLabels {
		delete(set, model.LabelName(k))
	}
	return "def:" + set.Fingerprint().String()
}

// settleIdentity keys a's incident by its definition identity (issue 37), in tx: an alert whose
// incident was recorded under its own fingerprint before keeps it (alerts of older rule files,
// which carry the version as a label, go on working); otherwise the incident's fingerprint is the
// identity, and the alert takes the start time of the identity's open incident, so that one
// incident (and its case) stays open across edits of the definition. A resolution of an alert
// that another alert of the identity replaced since (a rename: Alertmanager times out the old
// one) is superseded: it answers false and must change nothing.
func (n notification) settleIdentity(ctx context.Context, tx *db.Tx, a *alert) (apply bool, err error) {
	if a.identity == "" {
		return true, nil
	}
	if _, found, err := incidents.CaseOfAlert(ctx, tx, n.teamID, a.raw, a.rawStartsAt); err != nil || found {
		a.incident.Fingerprint, a.incident.StartsAt = a.raw, a.rawStartsAt
		return true, err
	}
	a.incident.Fingerprint, a.incident.StartsAt = a.identity, a.rawStartsAt
	var last string
	var lastStart int64
	err = tx.QueryRowContext(ctx, `SELECT fingerprint, starts_at FROM alert_def_identities WHERE team_id = $1 AND identity = $2`,
		n.teamID, a.identity).Scan(&last, &lastStart)
	known := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("alert identity: %w", err)
	}
	if !a.firing && known && last != a.raw && lastStart >= a.rawStartsAt.UnixMicro() {
		return false, nil
	}
	if start, open, err := incidents.OpenStartOf(ctx, tx, n.teamID, a.identity); err != nil {
		return false, err
	} else if open {
		a.incident.StartsAt = start
	}
	if a.firing && (!known || last == a.raw || a.rawStartsAt.UnixMicro() >= lastStart) {
		_, err = tx.ExecContext(ctx, `INSERT INTO alert_def_identities (team_id, identity, fingerprint, starts_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT (team_id, identity) DO UPDATE SET fingerprint = $3, starts_at = $4`,
			n.teamID, a.identity, a.raw, a.rawStartsAt.UnixMicro())
		if err != nil {
			return false, fmt.Errorf("record alert identity: %w", err)
		}
	}
	return true, nil
}
