package outgoingwebhooks

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// Destination is what a connector or a delivery needs of a stored webhook.
type Destination struct {
	ID, Type, URL string
	Settings      map[string]string
}

// LoadDestination returns the team's webhook id (its id, or its numeric externalId written in
// decimal), read in q (a *db.Tx holds it until commit): its public type name (SLACK, PAGERDUTY,
// …), its URL (empty when it has none) and its settings by their public field names
// (PAGERDUTY serviceKey; AWS_EVENT_BRIDGE eventBusArn, detailType, source, roleName, detail;
// JIRA email, apiToken, projectKey; GENERIC method, payload, uuid and headers as a JSON object;
// EMAIL_GROUP emailAddresses as a JSON array; …). Values are secrets: never log them.
//
// Errors: NotFound (the area's, naming the id) when the team has no such webhook.
func LoadDestination(ctx context.Context, q db.Querier, teamID int64, id string) (Destination, error) {
	s, err := getWebhook(ctx, q, teamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return Destination{}, notFound(id)
	}
	if err != nil {
		return Destination{}, err
	}
	t := targetOf(s.Data)
	return Destination{ID: s.ID, Type: string(s.Data.Type.Or("")), URL: t.URL, Settings: settingsOf(t)}, nil
}

// Integrations are the team's outgoing webhooks as connectors name them in their integrationId
// field (connectors.Integrations): the API wires it, so a connector's check and its deliveries
// read the same stored webhooks as this area's operations.
type Integrations struct{}

// Integration returns the team's webhook id (its id or its externalId), read in q.
//
// Errors: one wrapping db.ErrNotFound when the team has no such webhook.
func (Integrations) Integration(ctx context.Context, q db.Querier, teamID int64, id string) (connectortypes.Integration, error) {
	s, err := getWebhook(ctx, q, teamID, id)
	if err != nil {
		return connectortypes.Integration{}, err
	}
	t := targetOf(s.Data)
	return connectortypes.Integration{ID: s.ID, Type: string(s.Data.Type.Or("")), URL: t.URL, Settings: settingsOf(t)}, nil
}
