package api

import (
	"github.com/mgmtapi/mgmtapi/internal/access"
	"github.com/mgmtapi/mgmtapi/internal/alertdefs"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
	"github.com/mgmtapi/mgmtapi/internal/presets"
	"github.com/mgmtapi/mgmtapi/internal/roles"
	"github.com/mgmtapi/mgmtapi/internal/routers"
	"github.com/mgmtapi/mgmtapi/internal/slos"
)

// areaLinks are the ways the areas depend on one another, in one place: who uses a preset, a
// connector, an outgoing webhook, an SLO or a custom role (a resource in use is not deleted), and
// what a deleted router releases. The operations' handlers (New) and the configuration document's
// areas (configurationAreas) are both wired from it, so that an operation and an applied
// document refuse and release alike.
var areaLinks = struct {
	presetUsers    []presets.Users
	connectorUsers []connectors.Users
	// connectorIntegrations resolves a connector's outgoing-webhook destination.
	connectorIntegrations connectors.Integrations
	webhookUsers          []outgoingwebhooks.Users
	sloUsers              []slos.Users
	roleUsers             []roles.Users
	routerReleases        []routers.Release
}{
	presetUsers:           []presets.Users{routers.PresetUsers, alertdefs.PresetUsers},
	connectorUsers:        []connectors.Users{routers.ConnectorUsers, alertdefs.ConnectorUsers},
	connectorIntegrations: outgoingwebhooks.Integrations{},
	webhookUsers:          []outgoingwebhooks.Users{connectors.WebhookUsers, alertdefs.WebhookUsers},
	sloUsers:              []slos.Users{alertdefs.SloUsers},
	roleUsers:             []roles.Users{access.RoleUsers},
	routerReleases:        []routers.Release{alertdefs.ReleaseRouter},
}
