// Package connectors serves notification connectors (where notifications go: a webhook, Slack,
// PagerDuty, Microsoft Teams, email, and the other public types, which are stored and checked but
// not delivered by mgmtapi) and the connector schema, answered from the one table of connector
// types and their fields (types.go), with the field names the vendor's public clients send, that
// also checks connector bodies and presets' message fields.
//
// Credentials (passwords, API keys, tokens, and the deprecated webhook URLs that carry one) are
// stored in clear, answered as Mask in connectors, left out of summaries, never logged nor quoted
// in errors; a replace that sends Mask back keeps the stored value. Every other value (url,
// integrationKey, channels, ids) is answered as sent.
package connectors

import (
	"context"
	"errors"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Users names, in tx, what uses the team's connector (e.g. `router "Paging" (id …)`): a connector
// with users cannot be deleted, nor change type. The routers area provides one; it runs after
// LockTeam.
type Users func(ctx context.Context, tx *db.Tx, teamID int64, connectorID string) ([]string, error)

// ConnectorHandler implements the connector and connector-schema operations of oas.Handler.
type ConnectorHandler struct {
	db    *db.DB
	ints  Integrations
	users []Users
}

// NewHandler returns the connector operations. ints finds the team's integrations that
// integrationId fields name (the API wires outgoingwebhooks.Integrations; it must not be nil);
// users are asked before a connector is deleted or changes type.
func NewHandler(database *db.DB, ints Integrations, users ...Users) *ConnectorHandler {
	return &ConnectorHandler{db: database, ints: ints, users: users}
}

// usersOf names every user of the team's connector id, from every one of users.
func usersOf(ctx context.Context, tx *db.Tx, teamID int64, id string, users []Users) ([]string, error) {
	var out []string
	for _, u := range users {
		names, err := u(ctx, tx, teamID, id)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// CreateConnector stores a new connector under the id the client chose (connector.id) or, when
// it chose none, a fresh one, and answers it, credentials masked.
//
// Errors: Invalid (see checkConnector, checkIntegrations, CheckID); Conflict when the team has a
// connector of the chosen id; LimitExceeded when the team holds MaxConnectors.
func (h *ConnectorHandler) CreateConnector(ctx context.Context, req *oas.ConnectorRequest) (*oas.ConnectorResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id := req.Connector.ID.Or("")
	if id != "" {
		if err := CheckID(id); err != nil {
			return nil, apierror.Invalidf("connector.id: %v", err)
		}
	}
	c, err := checkConnector(req.Connector, nil)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if id == "" {
			id = tx.NewID()
		}
		c, err = createConnector(ctx, tx, caller.TeamID, id, c, h.ints)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.ConnectorResponse{Connector: answerOf(c, caller.TeamID)}, nil
}

// createConnector stores c, checked by checkConnector without a stored connector, as the team's
// connector id, and returns it as stored.
//
// Errors: Invalid from checkIntegrations; Conflict when the team has a connector id already;
// LimitExceeded when the team holds MaxConnectors.
func createConnector(ctx context.Context, tx *db.Tx, teamID int64, id string, c oas.Connector, ints Integrations) (oas.Connector, error) {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return c, err
	}
	if _, err := getConnector(ctx, tx, teamID, id); err == nil {
		return c, apierror.Conflictf("connector.id: the team has a connector %q already; choose another id or replace that one", id)
	} else if !errors.Is(err, db.ErrNotFound) {
		return c, err
	}
	if err := checkIntegrations(ctx, tx, ints, teamID, c); err != nil {
		return c, err
	}
	n, err := countConnectors(ctx, tx, teamID)
	if err != nil {
		return c, err
	}
	if n >= MaxConnectors {
		return c, apierror.LimitExceededf("connector: the team holds %d connectors, the most it may; delete one first", n)
	}
	c.ID = oas.NewOptString(id)
	c.CreateTime = oas.NewOptDateTime(tx.Now)
	c.UpdateTime = oas.NewOptDateTime(tx.Now)
	return c, insertConnector(ctx, tx, teamID, c)
}

// ReplaceConnector replaces the connector connector.id, keeping its createTime; a sensitive field
// sent as Mask keeps its stored value.
//
// Errors: Invalid when connector.id is missing, and see checkConnector; NotFound when the team has
// no such connector; Conflict when the type changes while something uses the connector.
func (h *ConnectorHandler) ReplaceConnector(ctx context.Context, req *oas.ConnectorRequest) (*oas.ConnectorResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id, ok := req.Connector.ID.Get()
	if !ok || id == "" {
		return nil, apierror.Invalidf("connector.id: required; it names the connector to replace")
	}
	var c oas.Connector
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		var err error
		c, err = replaceConnector(ctx, tx, caller.TeamID, id, req.Connector, h.ints, h.users)
		return err
	})
	if err != nil {
		return nil, notFoundAs(err, "connector.id", id)
	}
	return &oas.ConnectorResponse{Connector: answerOf(c, caller.TeamID)}, nil
}

// replaceConnector replaces the team's connector id with in, checked by checkConnector against
// the stored one (a sensitive value sent as Mask keeps the stored value) and checkIntegrations,
// keeping its createTime, and returns it as stored.
//
// Errors: those of checkConnector and checkIntegrations; db.ErrNotFound when the team has no such connector; Conflict
// naming the users when the type changes while users name the connector.
func replaceConnector(ctx context.Context, tx *db.Tx, teamID int64, id string, in oas.Connector, ints Integrations, users []Users) (oas.Connector, error) {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return in, err
	}
	old, err := getConnector(ctx, tx, teamID, id)
	if err != nil {
		return in, err
	}
	c, err := checkConnector(in, &old)
	if err != nil {
		return c, err
	}
	if err := checkIntegrations(ctx, tx, ints, teamID, c); err != nil {
		return c, err
	}
	if c.Type.Or("") != old.Type.Or("") {
		names, err := usersOf(ctx, tx, teamID, id, users)
		if err != nil {
			return c, err
		}
		if len(names) > 0 {
			return c, apierror.Conflictf("connector.type: connector %q is used by %s; it cannot change type (%s) while used",
				id, strings.Join(names, ", "), old.Type.Or(""))
		}
	}
	c.ID = oas.NewOptString(id)
	c.CreateTime = old.CreateTime
	c.UpdateTime = oas.NewOptDateTime(tx.Now)
	return c, updateConnector(ctx, tx, teamID, c)
}

// DeleteConnector deletes a connector.
//
// Errors: NotFound when the team has no such connector; Conflict naming the users while something
// uses it.
func (h *ConnectorHandler) DeleteConnector(ctx context.Context, params oas.DeleteConnectorParams) error {
	caller := auth.PrincipalFrom(ctx)
	id := string(params.ID)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return removeConnector(ctx, tx, caller.TeamID, id, h.users)
	})
	return notFoundAs(err, "id", id)
}

// removeConnector deletes the team's connector id.
//
// Errors: db.ErrNotFound when the team has no such connector; Conflict naming the users while
// users name it.
func removeConnector(ctx context.Context, tx *db.Tx, teamID int64, id string, users []Users) error {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	if _, err := getConnector(ctx, tx, teamID, id); err != nil {
		return err
	}
	names, err := usersOf(ctx, tx, teamID, id, users)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return apierror.Conflictf("id: connector %q is used by %s; remove it from them first", id, strings.Join(names, ", "))
	}
	return deleteConnector(ctx, tx, teamID, id)
}

// GetConnector answers one connector, sensitive values masked.
//
// Errors: NotFound when the team has no such connector.
func (h *ConnectorHandler) GetConnector(ctx context.Context, params oas.GetConnectorParams) (*oas.ConnectorResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	c, err := getConnector(ctx, h.db.Read(), caller.TeamID, string(params.ID))
	if err != nil {
		return nil, notFoundAs(err, "id", string(params.ID))
	}
	return &oas.ConnectorResponse{Connector: answerOf(c, caller.TeamID)}, nil
}

// ListConnectors answers the team's connectors, oldest first, filtered by type and supported
// entity type.
func (h *ConnectorHandler) ListConnectors(ctx context.Context, params oas.ListConnectorsParams) (*oas.ConnectorList, error) {
	caller := auth.PrincipalFrom(ctx)
	out := &oas.ConnectorList{Connectors: []oas.Connector{}}
	t := params.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED)
	e := params.SupportedByEntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	err := eachConnector(ctx, h.db.Read(), caller.TeamID, func(c *oas.Connector) error {
		if matches(*c, t, e) {
			out.Connectors = append(out.Connectors, answerOf(*c, caller.TeamID))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListConnectorSummaries answers ListConnectors' connectors as summaries.
func (h *ConnectorHandler) ListConnectorSummaries(ctx context.Context, params oas.ListConnectorSummariesParams) (*oas.ConnectorSummaryList, error) {
	caller := auth.PrincipalFrom(ctx)
	out := &oas.ConnectorSummaryList{Connectors: []oas.ConnectorSummary{}}
	t := params.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED)
	e := params.SupportedByEntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	err := eachConnector(ctx, h.db.Read(), caller.TeamID, func(c *oas.Connector) error {
		if matches(*c, t, e) {
			out.Connectors = append(out.Connectors, summaryOf(*c, caller.TeamID))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batch reads each requested id once, in request order, calling found for those the team has and
// answering the others.
func (h *ConnectorHandler) batch(ctx context.Context, ids []string, found func(id string, c oas.Connector)) ([]string, error) {
	caller := auth.PrincipalFrom(ctx)
	notFound := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		c, err := getConnector(ctx, h.db.Read(), caller.TeamID, id)
		switch {
		case errors.Is(err, db.ErrNotFound):
			notFound = append(notFound, id)
		case err != nil:
			return nil, err
		default:
			found(id, c)
		}
	}
	return notFound, nil
}

// BatchGetConnectors answers the connectors found, by id, and the ids that name none.
func (h *ConnectorHandler) BatchGetConnectors(ctx context.Context, params oas.BatchGetConnectorsParams) (*oas.ConnectorBatch, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	out := &oas.ConnectorBatch{Connectors: oas.ConnectorBatchConnectors{}}
	nf, err := h.batch(ctx, params.ConnectorIds, func(id string, c oas.Connector) { out.Connectors[id] = answerOf(c, teamID) })
	if err != nil {
		return nil, err
	}
	out.NotFoundIds = nf
	return out, nil
}

// BatchGetConnectorSummaries answers the summaries found, by id, and the ids that name none.
func (h *ConnectorHandler) BatchGetConnectorSummaries(ctx context.Context, params oas.BatchGetConnectorSummariesParams) (*oas.ConnectorSummaryBatch, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	out := &oas.ConnectorSummaryBatch{ConnectorSummaries: oas.ConnectorSummaryBatchConnectorSummaries{}}
	nf, err := h.batch(ctx, params.ConnectorIds, func(id string, c oas.Connector) { out.ConnectorSummaries[id] = summaryOf(c, teamID) })
	if err != nil {
		return nil, err
	}
	out.NotFoundIds = nf
	return out, nil
}

// GetConnectorTypeSummaries answers every connector type that supports the entity type (all when
// it is left out or UNSPECIFIED), with the number of the team's connectors of that type; preview
// types (Type.Preview) are left out.
func (h *ConnectorHandler) GetConnectorTypeSummaries(ctx context.Context, params oas.GetConnectorTypeSummariesParams) (*oas.ConnectorTypeSummaryList, error) {
	caller := auth.PrincipalFrom(ctx)
	counts, err := countByType(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	e := params.SupportedByEntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	out := &oas.ConnectorTypeSummaryList{ConnectorTypeSummaries: []oas.ConnectorTypeSummary{}}
	for _, t := range connectortypes.Kinds() {
		if t.Supports(e) && !t.Preview {
			out.ConnectorTypeSummaries = append(out.ConnectorTypeSummaries,
				oas.ConnectorTypeSummary{Type: t.Type, Count: counts[t.Type], DeliveredByMgmtapi: t.Delivered()})
		}
	}
	return out, nil
}

// GetConnectorSchema answers the fields of a connector type and of its messages.
//
// Errors: Invalid when type is left out or UNSPECIFIED.
func (h *ConnectorHandler) GetConnectorSchema(_ context.Context, params oas.GetConnectorSchemaParams) (*oas.ConnectorSchemaResponse, error) {
	t, ok := connectortypes.Lookup(params.Type.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED))
	if !ok {
		return nil, apierror.Invalidf("type: required; one of %s", typeNames())
	}
	return &oas.ConnectorSchemaResponse{ConnectorSchema: t.Schema()}, nil
}

func notFoundAs(err error, field, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no connector %q", field, id)
	}
	return err
}
