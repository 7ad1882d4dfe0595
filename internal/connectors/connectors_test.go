package connectors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
)

const (
	base        = "/mgmt/openapi/latest/notifications/notification-center/v1/"
	connPath    = base + "connectors"
	batchPath   = base + "connectors/all/list"
	sumBatch    = base + "connectors/all/summaries"
	sumList     = base + "connectors/list/summaries"
	typesPath   = base + "connectors/types/summaries"
	schemaPath  = base + "connector-schemas"
	slackSecret = "https://hooks.slack.com/services/T000/B000/s3cr3tT0ken"
)

type field struct {
	FieldName string `json:"fieldName"`
	Value     string `json:"value"`
}

type connectorOut struct {
	ID              string `json:"id"`
	TeamID          int64  `json:"teamId"`
	Name            string `json:"name"`
	Description     *string
	Type            string `json:"type"`
	ConnectorConfig *struct {
		Fields []field `json:"fields"`
	} `json:"connectorConfig"`
	ResolvedConnectorConfig *struct {
		Fields []field `json:"fields"`
	} `json:"resolvedConnectorConfig"`
	ConfigOverrides json.RawMessage `json:"configOverrides"`
	CreateTime      string          `json:"createTime"`
	UpdateTime      string          `json:"updateTime"`
}

func (c connectorOut) value(name string) (string, bool) {
	for _, f := range c.ConnectorConfig.Fields {
		if f.FieldName == name {
			return f.Value, true
		}
	}
	return "", false
}

func (c connectorOut) resolvedValue(name string) (string, bool) {
	for _, f := range c.ResolvedConnectorConfig.Fields {
		if f.FieldName == name {
			return f.Value, true
		}
	}
	return "", false
}

func create(t *testing.T, env *apitest.Env, key, connector string) connectorOut {
	t.Helper()
	return apitest.Decode[struct{ Connector connectorOut }](t, env.JSON(t, http.MethodPost, connPath, key, `{"connector":`+connector+`}`)).Connector
}

func get(t *testing.T, env *apitest.Env, key, id string) connectorOut {
	t.Helper()
	return apitest.Decode[struct{ Connector connectorOut }](t, env.JSON(t, http.MethodGet, connPath+"/"+id, key, "")).Connector
}

const slackBody = `{"name":"Paging","description":"d","type":"SLACK","connectorConfig":{"fields":[` +
	`{"fieldName":"webhookUrl","value":"` + slackSecret + `"},{"fieldName":"channel","value":"#ops"}]},` +
	`"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"channel","template":"#{{alertDef.priority}}"}]}]}`

func TestCreateGetMasksSecrets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		res := env.JSON(t, http.MethodPost, connPath, key, `{"connector":`+slackBody+`}`)
		if strings.Contains(string(res.Body), "s3cr3t") {
			t.Fatalf("create answers the secret: %s", res.Body)
		}
		c := apitest.Decode[struct{ Connector connectorOut }](t, res).Connector
		if c.ID == "" || c.TeamID != teamID || c.Name != "Paging" || c.Type != "SLACK" || c.CreateTime == "" || c.UpdateTime != c.CreateTime {
			t.Fatalf("created %+v", c)
		}
		if v, _ := c.value("webhookUrl"); v != connectortypes.Mask {
			t.Fatalf("webhookUrl answered %q, want the mask", v)
		}
		if v, _ := c.value("channel"); v != "#ops" {
			t.Fatalf("channel %q", v)
		}
		if !strings.Contains(string(c.ConfigOverrides), `#{{alertDef.priority}}`) {
			t.Fatalf("overrides %s", c.ConfigOverrides)
		}
		env.Restart(t)
		g := get(t, env, key, c.ID)
		if g.ID != c.ID || g.CreateTime != c.CreateTime || g.Name != "Paging" {
			t.Fatalf("get %+v", g)
		}
		for _, path := range []string{connPath + "/" + c.ID, connPath, batchPath + "?connector_ids=" + c.ID, sumBatch + "?connector_ids=" + c.ID, sumList} {
			if body := string(env.JSON(t, http.MethodGet, path, key, "").Body); strings.Contains(body, "s3cr3t") || !strings.Contains(body, c.ID) {
				t.Fatalf("%s: %s", path, body)
			}
		}
		// Summaries leave the sensitive field out altogether.
		sums := apitest.Decode[struct{ Connectors []connectorOut }](t, env.JSON(t, http.MethodGet, sumList, key, "")).Connectors
		if len(sums) != 1 {
			t.Fatalf("summaries %+v", sums)
		}
		if _, ok := sums[0].value("webhookUrl"); ok {
			t.Fatalf("summary has webhookUrl: %+v", sums[0])
		}
		if v, _ := sums[0].value("channel"); v != "#ops" {
			t.Fatalf("summary channel %q", v)
		}
		// The stored value is in clear for the other areas.
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			s, err := connectors.Load(context.Background(), tx, teamID, c.ID)
			if err != nil {
				return err
			}
			if s.Type != oas.ConnectorTypeSLACK || s.Fields["webhookUrl"] != slackSecret || s.Overrides[oas.NotificationEntityTypeALERTS]["channel"] != "#{{alertDef.priority}}" {
				t.Errorf("loaded %+v", s)
			}
			_, err = connectors.Load(context.Background(), tx, teamID, "nope")
			if !errors.Is(err, db.ErrNotFound) {
				t.Errorf("load of an unknown id: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestReplaceKeepsMaskedSecret(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		c := create(t, env, key, slackBody)
		env.Clock.Advance(1e9)
		// Read-modify-write: the answer sent back with one change.
		body := `{"connector":{"id":"` + c.ID + `","name":"Renamed","type":"SLACK","connectorConfig":{"fields":[` +
			`{"fieldName":"webhookUrl","value":"` + connectortypes.Mask + `"},{"fieldName":"channel","value":"#ops2"}]}}}`
		r := apitest.Decode[struct{ Connector connectorOut }](t, env.JSON(t, http.MethodPut, connPath, key, body)).Connector
		if r.Name != "Renamed" || r.CreateTime != c.CreateTime || r.UpdateTime == c.UpdateTime || string(r.ConfigOverrides) != "[]" {
			t.Fatalf("replaced %+v", r)
		}
		var secret string
		_ = env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			s, err := connectors.Load(context.Background(), tx, teamID, c.ID)
			secret = s.Fields["webhookUrl"]
			return err
		})
		if secret != slackSecret {
			t.Fatalf("the masked value replaced the secret: %q", secret)
		}
		// A new secret replaces it.
		body = strings.Replace(body, connectortypes.Mask, "https://hooks.slack.com/services/new", 1)
		env.JSON(t, http.MethodPut, connPath, key, body)
		_ = env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			s, err := connectors.Load(context.Background(), tx, teamID, c.ID)
			secret = s.Fields["webhookUrl"]
			return err
		})
		if secret != "https://hooks.slack.com/services/new" {
			t.Fatalf("secret %q", secret)
		}
		// The mask stands for nothing on a create, nor across a change of type.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, connPath, key,
			`{"connector":{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"********"}]}}}`),
			400, "connector.connectorConfig.fields[0].value", "stands for the stored value")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, connPath, key,
			`{"connector":{"id":"`+c.ID+`","name":"n","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"********"}]}}}`),
			400, "connector.connectorConfig.fields[0].value", "stands for the stored value")
		// Unknown and missing ids.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, connPath, key, `{"connector":{"name":"n","type":"SLACK"}}`), 400, "connector.id", "required")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, connPath, key,
			`{"connector":{"id":"nope","name":"n","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"}]}}}`),
			404, "connector.id", "nope")
	})
}

func TestBadBodiesNameFieldAndRule(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		cases := []struct {
			body      string
			fragments []string
		}{
			{`{"type":"SLACK"}`, []string{"connector.name", "required"}},
			{`{"name":"n"}`, []string{"connector.type", "required", "GENERIC_HTTPS"}},
			{`{"name":"n","type":"CONNECTOR_TYPE_UNSPECIFIED"}`, []string{"connector.type", "required"}},
			{`{"name":"n","type":"SLACK"}`, []string{"connector.connectorConfig.fields", "required field integrationId"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"ftp://x"}]}}`,
				[]string{"connector.connectorConfig.fields[0].value", "webhookUrl", "http or https URL"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://u:p@x.example/s3cr3t"}]}}`,
				[]string{"connector.connectorConfig.fields[0].value", "user information"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"},{"fieldName":"colour","value":"red"}]}}`,
				[]string{"connector.connectorConfig.fields[1].fieldName", `"colour" is not a field of SLACK connectors`, "integrationId, channel, fallbackChannel, webhookUrl, username"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"},{"fieldName":"webhookUrl","value":"https://y.example"}]}}`,
				[]string{"connector.connectorConfig.fields[1].fieldName", "twice"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"value":"https://x.example"}]}}`,
				[]string{"connector.connectorConfig.fields[0].fieldName", "required"}},
			{`{"name":"n","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://x.example"},{"fieldName":"method","value":"DELETE"}]}}`,
				[]string{"connector.connectorConfig.fields[1].value", "must be one of POST, PUT"}},
			{`{"name":"n","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://x.example"},{"fieldName":"additionalHeaders","value":"{\"a\":1}"}]}}`,
				[]string{"connector.connectorConfig.fields[1].value", "JSON object whose values are strings"}},
			{`{"name":"n","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://x.example"},{"fieldName":"additionalBodyFields","value":"[1]"}]}}`,
				[]string{"connector.connectorConfig.fields[1].value", "JSON object"}},
			{`{"name":"n","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"a@example.com"}]}}`,
				[]string{"connector.connectorConfig.fields[0].value", "JSON array of strings"}},
			{`{"name":"n","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"[\"ops@example.com\",\"ops\"]"}]}}`,
				[]string{"connector.connectorConfig.fields[0].value", "emailAddresses", `must hold email addresses: [1] "ops" is not one`}},
			{`{"name":"n","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"[]"}]}}`,
				[]string{"connector.connectorConfig.fields[0].value", "emailAddresses", "at least one address"}},
			{`{"name":"n","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"  "}]}}`,
				[]string{"connector.connectorConfig.fields[0].value", "must not be empty"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"}]},"configOverrides":[{"fields":[]}]}`,
				[]string{"connector.configOverrides[0].entityType", "required"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"}]},"configOverrides":[{"entityType":"CASES"},{"entityType":"CASES"}]}`,
				[]string{"connector.configOverrides[1].entityType", "one per entity type"}},
			{`{"name":"n","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"k"}]},"configOverrides":[{"entityType":"OLLY_SCHEDULED_TASKS"}]}`,
				[]string{"connector.configOverrides[0].entityType", "do not carry OLLY_SCHEDULED_TASKS"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"}]},"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"webhookUrl","template":"{{x}}"}]}]}`,
				[]string{"connector.configOverrides[0].fields[0].fieldName", "takes no template", "integrationId, channel, fallbackChannel"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"}]},"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"nope"}]}]}`,
				[]string{"connector.configOverrides[0].fields[0].fieldName", `"nope" is not a field`}},
			{`{"name":"","type":"SLACK"}`, []string{"connector.name"}},
			{`{"name":"n","type":"TELEGRAM"}`, []string{"connector.type"}},
		}
		for _, c := range cases {
			res := env.JSON(t, http.MethodPost, connPath, key, `{"connector":`+c.body+`}`)
			apitest.ExpectError(t, res, 400, c.fragments...)
			if strings.Contains(string(res.Body), "s3cr3t") {
				t.Errorf("%s: the error quotes a secret: %s", c.body, res.Body)
			}
		}
		// Nothing was stored.
		if got := apitest.Decode[struct{ Connectors []connectorOut }](t, env.JSON(t, http.MethodGet, connPath, key, "")).Connectors; len(got) != 0 {
			t.Fatalf("refused bodies stored %+v", got)
		}
		// Bounds of the public schema.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, connPath, key,
			`{"connector":{"name":"`+strings.Repeat("n", 201)+`","type":"SLACK"}}`), 400, "name")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, connPath+"/"+strings.Repeat("a", 129), key, ""), 400, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, connPath+"/-a", key, ""), 400, "id")
	})
}

func TestDefaultsListsFiltersAndTypes(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		h := create(t, env, key, `{"name":"hook","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"http://receiver.example/x?token=s3cr3t"}]}}`)
		if v, ok := h.resolvedValue("method"); !ok || v != "POST" {
			t.Fatalf("resolved method %q %v: %+v", v, ok, h.ResolvedConnectorConfig)
		}
		if _, ok := h.value("method"); ok {
			t.Fatalf("the default is in connectorConfig: %+v", h.ConnectorConfig)
		}
		if v, _ := h.resolvedValue("url"); v != "http://receiver.example/x?token=s3cr3t" {
			t.Fatalf("resolved url %q, want it as sent (only credentials are masked)", v)
		}
		if h.Description == nil || *h.Description != "" || string(h.ConfigOverrides) != "[]" {
			t.Fatalf("defaults %+v", h)
		}
		pd := create(t, env, key, `{"name":"pd","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"R0UT1NG"}]}}`)
		if v, _ := pd.resolvedValue("eventsUrl"); v != "https://events.pagerduty.com/v2/enqueue" {
			t.Fatalf("pagerduty eventsUrl %q", v)
		}
		sn := create(t, env, key, `{"name":"sn","type":"SERVICE_NOW","connectorConfig":{"fields":[{"fieldName":"instanceUrl","value":"https://x.service-now.com"},`+
			`{"fieldName":"username","value":"u"},{"fieldName":"password","value":"pw"}]}}`)
		list := func(path string) []string {
			var ids []string
			for _, c := range apitest.Decode[struct{ Connectors []connectorOut }](t, env.JSON(t, http.MethodGet, path, key, "")).Connectors {
				ids = append(ids, c.ID)
			}
			return ids
		}
		if got := strings.Join(list(connPath), ","); got != h.ID+","+pd.ID+","+sn.ID {
			t.Fatalf("list %s", got)
		}
		if got := strings.Join(list(connPath+"?connector_type=PAGERDUTY"), ","); got != pd.ID {
			t.Fatalf("by type %s", got)
		}
		if got := strings.Join(list(sumList+"?supported_by_entity_type=OLLY_SCHEDULED_TASKS"), ","); got != h.ID {
			t.Fatalf("by entity type %s", got)
		}
		if got := list(connPath + "?connector_type=CONNECTOR_TYPE_UNSPECIFIED&supported_by_entity_type=ENTITY_TYPE_UNSPECIFIED"); len(got) != 3 {
			t.Fatalf("unspecified filters %v", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, connPath+"?connector_type=TELEGRAM", key, ""), 400, "connector_type")
		// Batch reads: found by id, the others once each in request order.
		b := apitest.Decode[struct {
			Connectors  map[string]connectorOut
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchPath+"?connector_ids=x&connector_ids="+pd.ID+"&connector_ids=x&connector_ids=y", key, ""))
		if len(b.Connectors) != 1 || b.Connectors[pd.ID].Name != "pd" || strings.Join(b.NotFoundIds, ",") != "x,y" {
			t.Fatalf("batch %+v", b)
		}
		if v, _ := b.Connectors[pd.ID].value("integrationKey"); v != "R0UT1NG" {
			t.Fatalf("batch integrationKey %q, want it as sent", v)
		}
		sb := apitest.Decode[struct {
			ConnectorSummaries map[string]connectorOut
			NotFoundIds        []string
		}](t, env.JSON(t, http.MethodGet, sumBatch+"?connector_ids="+sn.ID+"&connector_ids=z", key, ""))
		if len(sb.ConnectorSummaries) != 1 || strings.Join(sb.NotFoundIds, ",") != "z" {
			t.Fatalf("summary batch %+v", sb)
		}
		if _, ok := sb.ConnectorSummaries[sn.ID].value("password"); ok {
			t.Fatalf("summary has the password")
		}
		if v, _ := sb.ConnectorSummaries[sn.ID].value("username"); v != "u" {
			t.Fatalf("summary username %q", v)
		}
		empty := apitest.Decode[struct {
			Connectors  map[string]connectorOut
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchPath, key, ""))
		if len(empty.Connectors) != 0 || empty.NotFoundIds == nil {
			t.Fatalf("empty batch %+v", empty)
		}
		// Type summaries count the stored connectors.
		type typeSummary struct {
			Type               string
			Count              int
			DeliveredByMgmtapi bool
		}
		ts := apitest.Decode[struct{ ConnectorTypeSummaries []typeSummary }](t, env.JSON(t, http.MethodGet, typesPath, key, "")).ConnectorTypeSummaries
		if len(ts) != 9 {
			t.Fatalf("type summaries %+v", ts)
		}
		want := map[string]typeSummary{
			"GENERIC_HTTPS": {"GENERIC_HTTPS", 1, true}, "PAGERDUTY": {"PAGERDUTY", 1, true}, "SERVICE_NOW": {"SERVICE_NOW", 1, true},
			"SLACK": {"SLACK", 0, true}, "MICROSOFT_TEAMS": {"MICROSOFT_TEAMS", 0, true}, "EMAIL": {"EMAIL", 0, true},
		}
		for _, s := range ts {
			if w, ok := want[s.Type]; ok && w != s {
				t.Errorf("type summary %+v, want %+v", s, w)
			}
		}
		ts = apitest.Decode[struct{ ConnectorTypeSummaries []typeSummary }](t, env.JSON(t, http.MethodGet, typesPath+"?supported_by_entity_type=OLLY_SCHEDULED_TASKS", key, "")).ConnectorTypeSummaries
		if len(ts) != 4 {
			t.Fatalf("olly type summaries %+v", ts)
		}
		// Delete: gone, then 404.
		if res := env.JSON(t, http.MethodDelete, connPath+"/"+pd.ID, key, ""); res.Status != 200 || strings.TrimSpace(string(res.Body)) != "{}" {
			t.Fatalf("delete %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, connPath+"/"+pd.ID, key, ""), 404, "id", pd.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, connPath+"/"+pd.ID, key, ""), 404, "id", pd.ID)
	})
}

func TestConnectorSchema(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		type schemaField struct {
			FieldName, Description, FieldType string
			Required, AllowOverrides          bool
			AllowedValues                     []string
			Default                           string
		}
		type schema struct {
			Type                  string
			ConnectorConfigSchema struct{ Fields []schemaField }
			MessageConfigSchemas  []struct {
				PayloadType string
				Fields      []schemaField
			}
			SupportedPayloadTypes []string
		}
		for _, ty := range connectortypes.Kinds() {
			if ty.Preview {
				continue // not in the public documents' enumeration; see TestPreviewType
			}
			s := apitest.Decode[struct{ ConnectorSchema schema }](t, env.JSON(t, http.MethodGet, schemaPath+"?type="+string(ty.Type), key, "")).ConnectorSchema
			if s.Type != string(ty.Type) || len(s.ConnectorConfigSchema.Fields) != len(ty.Config) || len(s.MessageConfigSchemas) != len(ty.Payloads) ||
				len(s.SupportedPayloadTypes) != len(ty.Payloads) || len(s.MessageConfigSchemas) == 0 {
				t.Fatalf("%s: %+v", ty.Type, s)
			}
			for i, f := range s.ConnectorConfigSchema.Fields {
				d := ty.Config[i]
				if f.FieldName != d.Name || f.FieldType != string(d.Kind) || f.Required != d.Required || f.AllowOverrides != d.AllowOverrides || f.Default != d.Default || f.Description == "" {
					t.Errorf("%s field %d: %+v", ty.Type, i, f)
				}
			}
			if !ty.Delivered() && !strings.Contains(s.ConnectorConfigSchema.Fields[0].Description, "does not send") {
				t.Errorf("%s: the schema does not say it is not delivered", ty.Type)
			}
		}
		s := apitest.Decode[struct{ ConnectorSchema schema }](t, env.JSON(t, http.MethodGet, schemaPath+"?type=GENERIC_HTTPS", key, "")).ConnectorSchema
		if s.ConnectorConfigSchema.Fields[0].FieldName != "url" || s.ConnectorConfigSchema.Fields[0].FieldType != "URL" ||
			strings.Join(s.ConnectorConfigSchema.Fields[1].AllowedValues, ",") != "POST,PUT" {
			t.Fatalf("https schema %+v", s)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, schemaPath, key, ""), 400, "type", "required")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, schemaPath+"?type=CONNECTOR_TYPE_UNSPECIFIED", key, ""), 400, "type")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, schemaPath+"?type=FAX", key, ""), 400, "type")
	})
}

func TestTeamIsolationAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, a := env.MustTeam(t, "a")
		_, b := env.MustTeam(t, "b")
		c := create(t, env, a, slackBody)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, connPath+"/"+c.ID, b, ""), 404, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, connPath+"/"+c.ID, b, ""), 404, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, connPath, b,
			`{"connector":{"id":"`+c.ID+`","name":"x","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://x.example"}]}}}`), 404, "connector.id")
		if got := apitest.Decode[struct{ Connectors []connectorOut }](t, env.JSON(t, http.MethodGet, connPath, b, "")).Connectors; len(got) != 0 {
			t.Fatalf("team b lists %+v", got)
		}
		bb := apitest.Decode[struct{ NotFoundIds []string }](t, env.JSON(t, http.MethodGet, batchPath+"?connector_ids="+c.ID, b, ""))
		if len(bb.NotFoundIds) != 1 {
			t.Fatalf("team b batch %+v", bb)
		}
		type typeSummary struct {
			Type  string
			Count int
		}
		for _, s := range apitest.Decode[struct{ ConnectorTypeSummaries []typeSummary }](t, env.JSON(t, http.MethodGet, typesPath, b, "")).ConnectorTypeSummaries {
			if s.Count != 0 {
				t.Fatalf("team b counts %+v", s)
			}
		}
		if g := get(t, env, a, c.ID); g.Name != "Paging" {
			t.Fatalf("team a lost its connector: %+v", g)
		}
		// Permissions: summaries need ReadSummary only; full connectors ReadConfig; writes UpdateConfig.
		summary := env.MustKey(t, a, "notification-center-connectors:ReadSummary")
		if res := env.JSON(t, http.MethodGet, sumList, summary, ""); res.Status != 200 {
			t.Fatalf("summary key on summaries: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodGet, schemaPath+"?type=SLACK", summary, ""); res.Status != 200 {
			t.Fatalf("summary key on the schema: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, connPath+"/"+c.ID, summary, ""), 403, "notification-center-connectors:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, connPath, summary, ""), 403, "notification-center-connectors:ReadConfig")
		reader := env.MustKey(t, a, "notification-center-connectors:ReadConfig")
		if res := env.JSON(t, http.MethodGet, connPath+"/"+c.ID, reader, ""); res.Status != 200 {
			t.Fatalf("reader: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, connPath, reader, `{"connector":`+slackBody+`}`), 403, "notification-center-connectors:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, connPath+"/"+c.ID, reader, ""), 403, "notification-center-connectors:UpdateConfig")
	})
}

// TestDeleteAsksTheUsers checks the Users hook the routers area fills: a used connector is a 409
// naming its users, and cannot change type.
func TestDeleteAsksTheUsers(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		c := create(t, env, key, slackBody)
		h := connectors.NewHandler(env.DB, outgoingwebhooks.Integrations{}, func(_ context.Context, _ *db.Tx, team int64, id string) ([]string, error) {
			if team == teamID && id == c.ID {
				return []string{`router "Paging" (id r1)`}, nil
			}
			return nil, nil
		})
		ctx := auth.WithPrincipal(context.Background(), &auth.Principal{TeamID: teamID})
		err := h.DeleteConnector(ctx, oas.DeleteConnectorParams{ID: oas.NotificationCenterID(c.ID)})
		if e, ok := apierror.As(err); !ok || e.Kind != apierror.Conflict || !strings.Contains(e.Message, `router "Paging" (id r1)`) {
			t.Fatalf("delete of a used connector: %v", err)
		}
		req := &oas.ConnectorRequest{Connector: oas.Connector{
			ID: oas.NewOptString(c.ID), Name: oas.NewOptString("x"), Type: oas.NewOptConnectorType(oas.ConnectorTypeMICROSOFTTEAMS),
			ConnectorConfig: oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: []oas.ConnectorConfigField{
				{FieldName: oas.NewOptString("webhookUrl"), Value: oas.NewOptString("https://teams.example/hook")}}}),
		}}
		_, err = h.ReplaceConnector(ctx, req)
		if e, ok := apierror.As(err); !ok || e.Kind != apierror.Conflict || !strings.Contains(e.Message, "cannot change type") {
			t.Fatalf("type change of a used connector: %v", err)
		}
		if g := get(t, env, key, c.ID); g.Type != "SLACK" {
			t.Fatalf("changed: %+v", g)
		}
	})
}

func TestMessageFieldsOfPresets(t *testing.T) {
	if err := connectortypes.CheckMessageField(oas.ConnectorTypeSLACK, "", "title"); err != nil {
		t.Fatal(err)
	}
	if err := connectortypes.CheckMessageField(oas.ConnectorTypeSLACK, "raw", "payload"); err != nil {
		t.Fatal(err)
	}
	if err := connectortypes.CheckMessageField(oas.ConnectorTypeSLACK, "raw", "title"); err == nil || !strings.Contains(err.Error(), "payload") {
		t.Fatalf("raw title: %v", err)
	}
	if err := connectortypes.CheckMessageField(oas.ConnectorTypePAGERDUTY, "fancy", "summary"); err == nil || !strings.Contains(err.Error(), "pagerduty_default") {
		t.Fatalf("unknown payload: %v", err)
	}
	if err := connectortypes.CheckMessageField(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED, "x", "y"); err != nil {
		t.Fatalf("unspecified: %v", err)
	}
}

// TestTeamBound checks that a team holds at most MaxConnectors connectors (the rows before the
// last are written directly, to keep the test short) and that another team is not bounded by it.
func TestTeamBound(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		doc := `{"name":"n","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"[]"}]}}`
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			for i := range connectors.MaxConnectors - 1 {
				if _, err := tx.ExecContext(context.Background(),
					`INSERT INTO notification_connectors (team_id, id, connector_type, document, created_at, updated_at) VALUES ($1, $2, 'EMAIL', $3, $4, $4)`,
					teamID, fmt.Sprintf("c%04d", i), doc, int64(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		body := `{"connector":{"name":"n","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"[\"a@example.com\"]"}]}}}`
		if res := env.JSON(t, http.MethodPost, connPath, key, body); res.Status != 200 {
			t.Fatalf("the %dth: %d %s", connectors.MaxConnectors, res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, connPath, key, body), 429, "800 connectors")
		if n := len(apitest.Decode[struct{ Connectors []connectorOut }](t, env.JSON(t, http.MethodGet, sumList, key, "")).Connectors); n != connectors.MaxConnectors {
			t.Fatalf("%d connectors listed", n)
		}
		if res := env.JSON(t, http.MethodPost, connPath, other, body); res.Status != 200 {
			t.Fatalf("another team: %d %s", res.Status, res.Body)
		}
	})
}

// TestDestination checks where a delivery through each delivered type goes, read from the stored
// connector with its defaults, and that the other types have none.
func TestDestination(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		hook := create(t, env, key, `{"name":"h","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://r.example/a"}]}}`)
		slack := create(t, env, key, slackBody)
		teams := create(t, env, key, `{"name":"t","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[{"fieldName":"webhookUrl","value":"https://t.example/w"}]}}`)
		pd := create(t, env, key, `{"name":"p","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"RK"}]}}`)
		email := create(t, env, key, `{"name":"e","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"[\"a@example.com\"]"}]}}`)
		want := map[string][3]string{
			hook.ID:  {"https://r.example/a", "", "true"},
			slack.ID: {slackSecret, "", "true"},
			teams.ID: {"https://t.example/w", "", "true"},
			pd.ID:    {"https://events.pagerduty.com/v2/enqueue", "RK", "true"},
			email.ID: {"", "", "true"},
		}
		for id, w := range want {
			c, err := connectors.Load(context.Background(), env.DB.Read(), teamID, id)
			if err != nil {
				t.Fatal(err)
			}
			u, rk, ok := destination(c)
			if got := [3]string{u, rk, fmt.Sprint(ok)}; got != w {
				t.Errorf("%s: %v, want %v", c.Type, got, w)
			}
		}
	})
}

// destination is where a notification through c goes and its routing key, as its type composes
// one (no templates); ok is false when the type does not compose one.
func destination(c connectors.Connector) (url, routingKey string, ok bool) {
	k, _ := connectortypes.Lookup(c.Type)
	out, err := k.Compose(context.Background(), c.Fields, nil, c.Integration, connectortypes.Message{Fields: map[string]string{"title": "t"}}, map[string]any{})
	if err != nil {
		return "", "", false
	}
	return out.URL, out.RoutingKey, true
}

// TestEmailAddressesSayWhichFormIsWanted: an EMAIL connector's emailAddresses is a JSON array
// written in a string; a bare address and an array sent as JSON are both refused with a message
// that shows the form wanted.
func TestEmailAddressesSayWhichFormIsWanted(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, value := range []string{`"a@example.com"`, `["a@example.com"]`} {
			body := `{"connector":{"name":"e","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"emailAddresses","value":` + value + `}]}}}`
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, connPath, key, body), 400,
				"connector.connectorConfig.fields[0].value", `"[\"ops@example.com\"]"`)
		}
	})
}
