package connectors

import (
	"bytes"
	"context"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the notification connectors' part of a team's configuration document
// (teamconfig.Area): each connector as GetConnector answers it without what the server sets
// (teamId, resolvedConnectorConfig, createTime, updateTime), checked by checkConnector and stored
// by createConnector, replaceConnector and removeConnector, as the HTTP operations do (the
// MaxConnectors limit; a connector with users is not deleted and does not change type).
//
// Secrets: the export holds Mask for every sensitive value, never the value, since documents go
// into version control. In a document, Mask on a connector the team has (same id) keeps the
// stored value, as ReplaceConnector does; on a connector the team lacks it is a 400 naming the
// field, since nothing is stored to keep. A connector is unchanged when storing the document's
// would leave it as stored: Mask stands for the stored value, and a value given in clear is
// compared with the stored one (so re-applying an export is unchanged, and a document that gives
// a rotated secret is an update).
type Configuration struct {
	// Users are asked before a connector is deleted or changes type (see Users).
	Users []Users
	// Integrations finds the integrations integrationId fields name (see NewHandler; not nil).
	Integrations Integrations
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "connectors" }

// Permissions implements teamconfig.Area: those of GetConnector and ReplaceConnector.
func (Configuration) Permissions() (read, write string) {
	return "notification-center-connectors:ReadConfig", "notification-center-connectors:UpdateConfig"
}

// withoutServerFields clears what the server sets on a connector.
func withoutServerFields(c oas.Connector) oas.Connector {
	c.TeamId.Reset()
	c.ResolvedConnectorConfig.Reset()
	c.CreateTime.Reset()
	c.UpdateTime.Reset()
	if c.ConfigOverrides == nil {
		c.ConfigOverrides = []oas.ConnectorConfigOverride{}
	}
	return c
}

// Export implements teamconfig.Area: the document holds the connector as answered (sensitive
// values masked); Value holds it as stored, values in clear, for Unchanged only.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachConnector(ctx, q, teamID, func(c *oas.Connector) error {
		exported := withoutServerFields(answerOf(*c, teamID))
		doc, err := exported.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: c.ID.Or(""), Name: c.Name.Or(""), Doc: doc, Value: withoutServerFields(*c)})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the connector of ReplaceConnector's body (one without an id
// gets a fresh one; an id is a notification-center id, as the connector's path takes), checked by
// checkConnector but for sensitive values sent as connectortypes.Mask, which Put resolves against the stored
// connector.
//
// Errors: Invalid naming the field under connector and the rule.
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.ConnectorRequest
	if err := teamconfig.DecodeBodyOf(oas.ReplaceConnectorOperation, "connector", doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := NotificationCenterIDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	c, err := checkConnectorKeepingMasks(in.Connector)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	c.ID = oas.NewOptString(id)
	c = withoutServerFields(c)
	encoded, err := c.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: c.Name.Or(""), Doc: encoded, Value: c}, err
}

// Unchanged implements teamconfig.Comparer: want, its masked values taken from current (the
// stored connector, values in clear), is current. A masked value current lacks is a change (which
// Put refuses).
func (Configuration) Unchanged(current, want teamconfig.Resource) bool {
	cur, ok1 := current.Value.(oas.Connector)
	w, ok2 := want.Value.(oas.Connector)
	if !ok1 || !ok2 || cur.Type.Or("") != w.Type.Or("") {
		return false
	}
	ty, _ := connectortypes.Lookup(w.Type.Or(""))
	stored := valuesOf(cur)
	cfg := w.ConnectorConfig.Or(oas.ConnectorConfig{})
	fields := make([]oas.ConnectorConfigField, len(cfg.Fields))
	for i, f := range cfg.Fields {
		name := f.FieldName.Or("")
		if def, _ := ty.Field(name); def.Sensitive && f.Value.Or("") == connectortypes.Mask {
			v, ok := stored[name]
			if !ok {
				return false
			}
			f.Value = oas.NewOptString(v)
		}
		fields[i] = f
	}
	w.ConnectorConfig = oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: fields})
	a, err1 := cur.MarshalJSON()
	b, err2 := w.MarshalJSON()
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// Put implements teamconfig.Area: replaceConnector for a connector the team has (Mask keeps the
// stored value), createConnector after checkConnector without a stored one (Mask is refused)
// otherwise.
//
// Errors: Invalid naming the field (a Mask with nothing stored to keep among them); Conflict
// when the type changes while used; LimitExceeded past MaxConnectors.
func (c Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	in := r.Value.(oas.Connector)
	if exists {
		_, err := replaceConnector(ctx, tx, teamID, r.ID, in, c.Integrations, c.Users)
		return err
	}
	checked, err := checkConnector(in, nil)
	if err != nil {
		return err
	}
	_, err = createConnector(ctx, tx, teamID, r.ID, checked, c.Integrations)
	return err
}

// Delete implements teamconfig.Area.
//
// Errors: Conflict naming the users while something uses the connector.
func (c Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return removeConnector(ctx, tx, teamID, id, c.Users)
}

// NotificationCenterIDOf is teamconfig.IDOf for the notification center's resources (connectors,
// routers), whose ids name them in paths: a document's id must be a notification-center id.
//
// Errors: Invalid naming "id".
func NotificationCenterIDOf(doc []byte, newID func() string) (string, error) {
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return "", err
	}
	if err := oas.NotificationCenterID(id).Validate(); err != nil {
		return "", teamconfig.Invalidf("id: %q is not a notification-center id (1–128 characters, a letter or digit first, then letters, digits, _ or -)", id)
	}
	return id, nil
}
