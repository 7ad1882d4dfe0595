package connectors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// LockTeam serialises, until the transaction ends, every writer of the team's connectors and
// every writer that checks one exists (routers naming a connector as a target), across replicas
// (db.Tx.Serialize). A connector checked to exist stays so until commit, and a connector checked
// to be unused stays so.
func LockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.connectors:%d", teamID))
}

// Connector is a stored connector as the other areas read it: a router checks its type, a
// delivery worker reads its fields. Values are in clear: never log them.
type Connector struct {
	ID   string
	Type oas.ConnectorType
	Name string
	// Fields are the configuration values by field name, each field not sent holding its default
	// (fields with neither are absent).
	Fields map[string]string
	// Overrides are the templates of each entity type, by field name.
	Overrides map[oas.NotificationEntityType]map[string]string
	// Integration is the outgoing webhook the connector's integrationId names, once Resolve has
	// read it; nil before, and for connectors that name none.
	Integration *connectortypes.Integration
}

// Integrations finds the integrations (outgoing webhooks) of a team. The outgoing-webhooks area
// provides one; connectors check with it that an integrationId names an integration of the
// matching type, and Resolve reads a connector's through it.
type Integrations interface {
	// Integration returns the team's integration id, read in q; an error wrapping
	// db.ErrNotFound when the team has none of that id.
	Integration(ctx context.Context, q db.Querier, teamID int64, id string) (connectortypes.Integration, error)
}

// checkIntegrations checks, in q, that the integrationId of the checked connector c names an
// integration of the team of a type its field accepts (Field.Integrations). A templated
// integrationId (configOverrides) is checked when rendered, at delivery.
//
// Errors: Invalid naming the field, the id and, for an integration of another type, both types.
func checkIntegrations(ctx context.Context, q db.Querier, ints Integrations, teamID int64, c oas.Connector) error {
	ty, _ := connectortypes.Lookup(c.Type.Or(""))
	for i, sent := range c.ConnectorConfig.Or(oas.ConnectorConfig{}).Fields {
		f, _ := ty.Field(sent.FieldName.Or(""))
		if len(f.Integrations) == 0 {
			continue
		}
		id := sent.Value.Or("")
		in, err := ints.Integration(ctx, q, teamID, id)
		if errors.Is(err, db.ErrNotFound) {
			return apierror.Invalidf("connector.connectorConfig.fields[%d].value: %s %q names no integration (outgoing webhook) of the team; create one of type %s first",
				i, f.Name, id, strings.Join(f.Integrations, " or "))
		}
		if err != nil {
			return err
		}
		if !slices.Contains(f.Integrations, in.Type) {
			return apierror.Invalidf("connector.connectorConfig.fields[%d].value: %s %q names an integration of type %s; %s connectors need one of type %s",
				i, f.Name, id, in.Type, ty.Type, strings.Join(f.Integrations, " or "))
		}
	}
	return nil
}

// ErrIntegrationType is wrapped by Resolve's error when the integration is of a type the
// connector's integrationId does not accept (a connector tested with a configuration only).
var ErrIntegrationType = errors.New("integration of another type")

// Resolve reads, in q, the integration c's integrationId names (Integration) through ints (the
// team's outgoing webhooks: outgoingwebhooks.Integrations); it does nothing for a connector that
// names none or whose integrationId is only a template (resolved when rendered).
//
// Errors: those of ints.Integration, wrapping db.ErrNotFound when the integration was deleted
// since (or, for a configuration not stored, never existed); one wrapping ErrIntegrationType
// naming both types when the integration is of a type the field does not accept. Each names the
// integration's id, never its URL or settings.
func (c *Connector) Resolve(ctx context.Context, q db.Querier, teamID int64, ints Integrations) error {
	id := c.Fields["integrationId"]
	if id == "" {
		return nil
	}
	in, err := ints.Integration(ctx, q, teamID, id)
	if err != nil {
		return fmt.Errorf("integration %q: %w", id, err)
	}
	if ty, ok := connectortypes.Lookup(c.Type); ok {
		if f, ok := ty.Field("integrationId"); ok && len(f.Integrations) > 0 && !slices.Contains(f.Integrations, in.Type) {
			return fmt.Errorf("integration %q is of type %s; %s connectors need one of type %s: %w",
				id, in.Type, c.Type, strings.Join(f.Integrations, " or "), ErrIntegrationType)
		}
	}
	c.Integration = &in
	return nil
}

// WebhookUsers names, in tx, the team's connectors whose integrationId names the outgoing
// webhook id (by its id or its externalId written in decimal), as `connector "name" (id …)`: such
// a webhook may be neither deleted nor change type (an outgoingwebhooks.Users). It takes the
// team's connector lock first (LockTeam), so no connector naming the webhook is written between
// this answer and the webhook's change. A templated integrationId names no webhook until
// rendered and is not counted.
func WebhookUsers(ctx context.Context, tx *db.Tx, teamID int64, id string, externalID int64) ([]string, error) {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return nil, err
	}
	ext := strconv.FormatInt(externalID, 10)
	var out []string
	err := eachConnector(ctx, tx, teamID, func(c *oas.Connector) error {
		for _, f := range c.ConnectorConfig.Or(oas.ConnectorConfig{}).Fields {
			if v := f.Value.Or(""); f.FieldName.Or("") == "integrationId" && (v == id || v == ext) {
				out = append(out, fmt.Sprintf("connector %q (id %s)", c.Name.Or(""), c.ID.Or("")))
				break
			}
		}
		return nil
	})
	return out, err
}

// Load returns the team's connector id, read in q (a *db.Tx to hold it until commit with
// LockTeam); db.ErrNotFound when the team has none of that id.
func Load(ctx context.Context, q db.Querier, teamID int64, id string) (Connector, error) {
	c, err := getConnector(ctx, q, teamID, id)
	if err != nil {
		return Connector{}, err
	}
	out := Connector{
		ID: c.ID.Or(""), Type: c.Type.Or(""), Name: c.Name.Or(""),
		Fields: map[string]string{}, Overrides: map[oas.NotificationEntityType]map[string]string{},
	}
	for _, f := range resolved(c) {
		out.Fields[f.FieldName.Or("")] = f.Value.Or("")
	}
	for _, o := range c.ConfigOverrides {
		m := map[string]string{}
		for _, f := range o.Fields {
			m[f.FieldName.Or("")] = f.Template.Or("")
		}
		out.Overrides[o.EntityType.Or("")] = m
	}
	return out, nil
}

func insertConnector(ctx context.Context, tx *db.Tx, teamID int64, c oas.Connector) error {
	doc, err := c.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO notification_connectors (team_id, id, connector_type, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $5)`,
		teamID, c.ID.Or(""), string(c.Type.Or("")), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert connector: %w", err)
	}
	return nil
}

func updateConnector(ctx context.Context, tx *db.Tx, teamID int64, c oas.Connector) error {
	doc, err := c.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`UPDATE notification_connectors SET connector_type = $3, document = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
		teamID, c.ID.Or(""), string(c.Type.Or("")), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("update connector: %w", err)
	}
	return nil
}

func deleteConnector(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM notification_connectors WHERE team_id = $1 AND id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete connector: %w", err)
	}
	return nil
}

const selectConnector = `SELECT document, created_at, updated_at FROM notification_connectors`

type scanner interface{ Scan(dest ...any) error }

// scanConnector reads a stored connector: its document (values in clear) and its times.
func scanConnector(row scanner) (oas.Connector, error) {
	var c oas.Connector
	var doc string
	var created, updated int64
	if err := row.Scan(&doc, &created, &updated); err != nil {
		return c, db.Translate(err)
	}
	if err := c.UnmarshalJSON([]byte(doc)); err != nil {
		return c, fmt.Errorf("connector document: %w", err)
	}
	c.CreateTime = oas.NewOptDateTime(time.UnixMicro(created).UTC())
	c.UpdateTime = oas.NewOptDateTime(time.UnixMicro(updated).UTC())
	return c, nil
}

// getConnector returns the team's stored connector; db.ErrNotFound when there is none.
func getConnector(ctx context.Context, q db.Querier, teamID int64, id string) (oas.Connector, error) {
	return scanConnector(q.QueryRowContext(ctx, selectConnector+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// eachConnector calls yield with each of the team's stored connectors, oldest first; it stops at
// yield's first error and returns it.
func eachConnector(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.Connector) error) error {
	rows, err := q.QueryContext(ctx, selectConnector+` WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return fmt.Errorf("list connectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanConnector(rows)
		if err != nil {
			return err
		}
		if err := yield(&c); err != nil {
			return err
		}
	}
	return rows.Err()
}

// countConnectors returns the number of the team's connectors.
func countConnectors(ctx context.Context, q db.Querier, teamID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_connectors WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count connectors: %w", err)
	}
	return n, nil
}

// countByType returns the number of the team's connectors of each type.
func countByType(ctx context.Context, q db.Querier, teamID int64) (map[oas.ConnectorType]int64, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT connector_type, COUNT(*) FROM notification_connectors WHERE team_id = $1 GROUP BY connector_type`, teamID)
	if err != nil {
		return nil, fmt.Errorf("count connectors by type: %w", err)
	}
	defer rows.Close()
	out := map[oas.ConnectorType]int64{}
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, fmt.Errorf("count connectors by type: %w", err)
		}
		out[oas.ConnectorType(t)] = n
	}
	return out, rows.Err()
}

// FromConfig checks a connector configuration not stored (a test of one: connectors:testConfig)
// with the rules a create applies, and returns it as Load would: every field not sent holding its
// default. Mask stands for no stored value here and is refused.
//
// Errors: Invalid naming type or fields[i] and the rule; a sensitive value is never quoted.
func FromConfig(t oas.ConnectorType, fields []oas.ConnectorConfigField) (Connector, error) {
	c, err := checkConnector(oas.Connector{
		Name: oas.NewOptString("test"), Type: oas.NewOptConnectorType(t),
		ConnectorConfig: oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: fields}),
	}, nil)
	if err != nil {
		if e, ok := apierror.As(err); ok {
			msg := strings.Replace(e.Message, "connector.connectorConfig.", "", 1)
			msg = strings.Replace(msg, "connector.type", "type", 1)
			return Connector{}, apierror.Invalidf("%s", msg)
		}
		return Connector{}, err
	}
	out := Connector{Type: c.Type.Or(""), Name: "test", Fields: map[string]string{},
		Overrides: map[oas.NotificationEntityType]map[string]string{}}
	for _, f := range resolved(c) {
		out.Fields[f.FieldName.Or("")] = f.Value.Or("")
	}
	return out, nil
}

// CheckTemplatedField checks that the field of the connector type takes a template per entity
// type (a connector's configOverrides, a router destination's connectorConfigFields). The error
// is the rule broken, to follow the field's path in a message.
func CheckTemplatedField(t oas.ConnectorType, name string) error {
	ty, ok := connectortypes.Lookup(t)
	if !ok {
		return fmt.Errorf("connector type %q is unknown", t)
	}
	f, ok := ty.Field(name)
	if !ok {
		return fmt.Errorf("%q is not a field of %s connectors (%s)", name, ty.Type, ty.ConfigNames())
	}
	if !f.AllowOverrides {
		return fmt.Errorf("field %s of %s connectors takes no template (%s)", name, ty.Type, overridable(ty))
	}
	return nil
}
