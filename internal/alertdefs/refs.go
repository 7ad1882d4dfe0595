package alertdefs

import (
	"context"
	"errors"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
	"github.com/mgmtapi/mgmtapi/internal/presets"
	"github.com/mgmtapi/mgmtapi/internal/routers"
	"github.com/mgmtapi/mgmtapi/internal/slos"
)

// lockTargets takes the team's SLO, connector and preset locks, in that order (configuration as
// code applies SLOs before presets; router writers take connectors before presets): what a
// definition names, checked to exist, stays so until commit.
func lockTargets(ctx context.Context, tx *db.Tx, teamID int64) error {
	if err := slos.LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	if err := connectors.LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	return presets.LockTeam(ctx, tx, teamID)
}

// checkRefs requires every resource p names to exist in the team: destinations' connectors and
// presets (a preset of a type must be of the connector's type), the router, the SLO of an SLO
// threshold alert, and the definitions of a flow, which must not lead back to definition id (no
// cycle, no flow naming itself). path is where p is in the request.
//
// Errors: Invalid naming the field and what is missing.
func checkRefs(ctx context.Context, tx *db.Tx, teamID int64, path, id string, p *oas.AlertDefProperties) error {
	conns := map[string]connectors.Connector{}
	for _, r := range refsOf(p) {
		at := path + "." + r.path
		switch r.kind {
		case refConnector:
			c, err := connectors.Load(ctx, tx, teamID, r.id)
			if errors.Is(err, db.ErrNotFound) {
				return apierror.Invalidf("%s: no connector %q; a destination names one of the team's connectors", at, r.id)
			}
			if err != nil {
				return err
			}
			conns[r.id] = c
		case refPreset:
			if _, err := presets.Load(ctx, tx, teamID, r.id); errors.Is(err, db.ErrNotFound) {
				return apierror.Invalidf("%s: no preset %q; a destination names one of the team's presets", at, r.id)
			} else if err != nil {
				return err
			}
		case refRouter:
			ok, err := routers.Exists(ctx, tx, teamID, r.id)
			if err != nil {
				return err
			}
			if !ok {
				return apierror.Invalidf("%s: no router %q; it names one of the team's routers", at, r.id)
			}
		case refSlo:
			ok, err := slos.Exists(ctx, tx, teamID, r.id)
			if err != nil {
				return err
			}
			if !ok {
				return apierror.Invalidf("%s: no SLO %q; it names one of the team's SLOs", at, r.id)
			}
		case refWebhook:
			if _, err := outgoingwebhooks.LoadDestination(ctx, tx, teamID, r.id); err != nil {
				if _, ok := apierror.As(err); ok {
					return apierror.Invalidf("%s: no outgoing webhook of externalId %s; a webhook setting names one of the team's outgoing webhooks", at, r.id)
				}
				return err
			}
		case refAlertDef:
			if canonicalID(r.id) == id {
				return apierror.Invalidf("%s: a flow cannot name itself", at)
			}
			if _, err := getDef(ctx, tx, teamID, canonicalID(r.id)); errors.Is(err, db.ErrNotFound) {
				return apierror.Invalidf("%s: no alert definition %q; a flow names the team's definitions", at, r.id)
			} else if err != nil {
				return err
			}
			cycle, err := reaches(ctx, tx, teamID, canonicalID(r.id), id)
			if err != nil {
				return err
			}
			if cycle != nil {
				return apierror.Invalidf("%s: makes a cycle of flows: %s", at, cycle)
			}
		}
	}
	return checkPresetTypes(ctx, tx, teamID, path, p, conns)
}

// checkPresetTypes requires each destination's preset, when it has a connector type, to be of
// its connector's type.
func checkPresetTypes(ctx context.Context, tx *db.Tx, teamID int64, path string, p *oas.AlertDefProperties, conns map[string]connectors.Connector) error {
	check := func(at string, g oas.AlertDefNotificationGroup) error {
		for i, d := range g.Destinations {
			pid, ok := d.PresetId.Get()
			if !ok || pid == "" {
				continue
			}
			pr, err := presets.Load(ctx, tx, teamID, pid)
			if err != nil {
				return err
			}
			c := conns[d.ConnectorId.Or("")]
			if pt, ok := pr.ConnectorType.Get(); ok && pt != c.Type {
				return apierror.Invalidf("%s.destinations[%d].presetId: preset %q is for %s connectors, but connector %q is of type %s", at, i, pid, pt, c.ID, c.Type)
			}
		}
		return nil
	}
	if g, ok := p.NotificationGroup.Get(); ok {
		if err := check(path+".notificationGroup", g); err != nil {
			return err
		}
	}
	//lint:ignore SA1019 the deprecated groups are still stored and checked for older clients
	for i, g := range p.NotificationGroupExcess {
		if err := check(fmt.Sprintf("%s.notificationGroupExcess[%d]", path, i), g); err != nil {
			return err
		}
	}
	return nil
}

// cyclePath is the chain of definitions that leads back, for the message.
type cyclePath []string

func (c cyclePath) String() string { return joinArrows(c) }

func joinArrows(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += " → "
		}
		out += id
	}
	return out
}

// reaches reports, as the path from..target, whether the flows starting at from name target,
// directly or through other flows; nil when they do not.
func reaches(ctx context.Context, tx *db.Tx, teamID int64, from, target string) (cyclePath, error) {
	parent := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		next, err := flowRefs(ctx, tx, teamID, cur)
		if err != nil {
			return nil, err
		}
		for _, n := range next {
			if n == target {
				path := cyclePath{target}
				for c := cur; c != ""; c = parent[c] {
					path = append(cyclePath{c}, path...)
				}
				return append(cyclePath{target}, path...), nil
			}
			if _, seen := parent[n]; !seen {
				parent[n] = cur
				queue = append(queue, n)
			}
		}
	}
	return nil, nil
}

// flowRefs are the definitions the flow id names (none when it is not a flow).
func flowRefs(ctx context.Context, tx *db.Tx, teamID int64, id string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT ref_id FROM alert_def_refs WHERE team_id = $1 AND alert_def_id = $2 AND kind = $3`, teamID, id, refAlertDef)
	if err != nil {
		return nil, fmt.Errorf("read flow references: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		out = append(out, canonicalID(r))
	}
	return out, rows.Err()
}
