package outgoingwebhooks

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/notifiers"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// MaxWebhooks is the most outgoing webhooks a team holds.
const MaxWebhooks = 500

// maxName bounds a webhook's name (runes).
const maxName = 200

// configsOf names the settings objects data carries, by their public names.
func configsOf(d oas.OutgoingWebhookInputData) []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(d.GenericWebhook.Set, "genericWebhook")
	add(d.Slack.Set, "slack")
	add(d.PagerDuty.Set, "pagerDuty")
	add(d.SendLog.Set, "sendLog")
	add(d.EmailGroup.Set, "emailGroup")
	add(d.MicrosoftTeams != nil, "microsoftTeams")
	add(d.Jira.Set, "jira")
	add(d.Opsgenie != nil, "opsgenie")
	add(d.Demisto.Set, "demisto")
	add(d.AwsEventBridge.Set, "awsEventBridge")
	add(d.IbmEventNotifications.Set, "ibmEventNotifications")
	add(d.MsTeamsWorkflow != nil, "msTeamsWorkflow")
	return out
}

// checkInput checks a webhook as clients write it and returns its kind, the data as it is
// stored (the type's settings object always present, a generic webhook's uuid made when left
// out, the URL without surrounding spaces) and its target. The rules: data present; name
// required, not blank, at most 200 characters; type one of the public types (not UNKNOWN); no
// settings object of another type; the kind's URL rule and settings rules (package notifiers).
//
// Errors: Invalid naming the field (data.name, data.type, data.url, data.<settings>.<field>) and
// the rule; a secret is never quoted.
func checkInput(in oas.OptOutgoingWebhookInputData) (notifiers.Kind, oas.OutgoingWebhookInputData, notifiers.Target, error) {
	d, ok := in.Get()
	if !ok {
		return notifiers.Kind{}, d, notifiers.Target{}, apierror.Invalidf("data: required; it holds the webhook's name, type and settings")
	}
	name := d.Name.Or("")
	switch {
	case strings.TrimSpace(name) == "":
		return notifiers.Kind{}, d, notifiers.Target{}, apierror.Invalidf("data.name: required, and not blank")
	case utf8.RuneCountInString(name) > maxName:
		return notifiers.Kind{}, d, notifiers.Target{}, apierror.Invalidf("data.name: at most %d characters", maxName)
	}
	typ := string(d.Type.Or(""))
	kind, ok := notifiers.Lookup(typ)
	if !ok {
		return kind, d, notifiers.Target{}, apierror.Invalidf("data.type: required, one of %s", strings.Join(typeNames(), ", "))
	}
	for _, c := range configsOf(d) {
		if c != kind.Config {
			return kind, d, notifiers.Target{}, apierror.Invalidf("data.%s: a %s webhook takes its settings in data.%s and no other settings object", c, kind.Type, kind.Config)
		}
	}
	if u, ok := d.URL.Get(); ok {
		if t := strings.TrimSpace(u); t == "" {
			d.URL = oas.OptString{}
		} else {
			d.URL = oas.NewOptString(t)
		}
	}
	withSettings(&d, kind)
	t := targetOf(d)
	if err := kind.Check(t); err != nil {
		var fe *notifiers.FieldError
		if errors.As(err, &fe) {
			return kind, d, t, apierror.Invalidf("data.%s: %s", fe.Field, fe.Rule)
		}
		return kind, d, t, err
	}
	return kind, d, t, nil
}

// typeNames are the public type names a webhook may have.
func typeNames() []string {
	var out []string
	for _, k := range notifiers.Kinds() {
		out = append(out, k.Type)
	}
	return out
}

// withSettings sets the settings object of kind in d when it is absent (an empty one), and a
// generic webhook's uuid when it has none.
func withSettings(d *oas.OutgoingWebhookInputData, kind notifiers.Kind) {
	switch kind.Config {
	case "genericWebhook":
		g := d.GenericWebhook.Or(oas.GenericWebhookConfig{})
		if g.UUID.Or("") == "" {
			g.UUID = oas.NewOptString(uuid.NewString())
		}
		d.GenericWebhook = oas.NewOptGenericWebhookConfig(g)
	case "slack":
		d.Slack = oas.NewOptSlackConfig(d.Slack.Or(oas.SlackConfig{}))
	case "pagerDuty":
		d.PagerDuty = oas.NewOptPagerDutyConfig(d.PagerDuty.Or(oas.PagerDutyConfig{}))
	case "sendLog":
		d.SendLog = oas.NewOptSendLogConfig(d.SendLog.Or(oas.SendLogConfig{}))
	case "emailGroup":
		d.EmailGroup = oas.NewOptEmailGroupConfig(d.EmailGroup.Or(oas.EmailGroupConfig{}))
	case "microsoftTeams":
		if d.MicrosoftTeams == nil {
			d.MicrosoftTeams = &oas.MicrosoftTeamsConfig{}
		}
	case "jira":
		d.Jira = oas.NewOptJiraConfig(d.Jira.Or(oas.JiraConfig{}))
	case "opsgenie":
		if d.Opsgenie == nil {
			d.Opsgenie = &oas.OpsgenieConfig{}
		}
	case "demisto":
		d.Demisto = oas.NewOptDemistoConfig(d.Demisto.Or(oas.DemistoConfig{}))
	case "awsEventBridge":
		d.AwsEventBridge = oas.NewOptAwsEventBridgeConfig(d.AwsEventBridge.Or(oas.AwsEventBridgeConfig{}))
	case "ibmEventNotifications":
		d.IbmEventNotifications = oas.NewOptIbmEventNotificationsConfig(d.IbmEventNotifications.Or(oas.IbmEventNotificationsConfig{}))
	case "msTeamsWorkflow":
		if d.MsTeamsWorkflow == nil {
			d.MsTeamsWorkflow = &oas.MSTeamsWorkflowConfig{}
		}
	}
}

// targetOf is the stored data as a notifier reads it: the URL and the settings by their public
// names (a generic webhook's headers and an email group's addresses apart).
func targetOf(d oas.OutgoingWebhookInputData) notifiers.Target {
	t := notifiers.Target{URL: d.URL.Or(""), Settings: map[string]string{}}
	set := func(name string, v oas.OptString) {
		if s, ok := v.Get(); ok && s != "" {
			t.Settings[name] = s
		}
	}
	if g, ok := d.GenericWebhook.Get(); ok {
		set("uuid", g.UUID)
		if m, ok := g.Method.Get(); ok {
			t.Settings["method"] = string(m)
		}
		set("payload", g.Payload)
		if h, ok := g.Headers.Get(); ok {
			t.Headers = map[string]string(h)
		}
	}
	if p, ok := d.PagerDuty.Get(); ok {
		set("serviceKey", p.ServiceKey)
	}
	if s, ok := d.SendLog.Get(); ok {
		set("uuid", s.UUID)
		set("payload", s.Payload)
	}
	if e, ok := d.EmailGroup.Get(); ok {
		t.Emails = e.EmailAddresses
	}
	if j, ok := d.Jira.Get(); ok {
		set("apiToken", j.ApiToken)
		set("email", j.Email)
		set("projectKey", j.ProjectKey)
	}
	if x, ok := d.Demisto.Get(); ok {
		set("uuid", x.UUID)
		set("payload", x.Payload)
	}
	if a, ok := d.AwsEventBridge.Get(); ok {
		set("eventBusArn", a.EventBusArn)
		set("detail", a.Detail)
		set("detailType", a.DetailType)
		set("source", a.Source)
		set("roleName", a.RoleName)
	}
	if i, ok := d.IbmEventNotifications.Get(); ok {
		set("eventNotificationsInstanceId", i.EventNotificationsInstanceId)
		set("regionId", i.RegionId)
		set("sourceId", i.SourceId)
		set("sourceName", i.SourceName)
		if e, ok := i.EndpointType.Get(); ok {
			t.Settings["endpointType"] = string(e)
		}
	}
	return t
}

// settingsOf is t's settings as Destination answers them: the settings, and a generic webhook's
// headers as a JSON object and an email group's addresses as a JSON array (the forms connectors'
// fields use).
func settingsOf(t notifiers.Target) map[string]string {
	out := make(map[string]string, len(t.Settings)+2)
	for k, v := range t.Settings {
		out[k] = v
	}
	if t.Headers != nil {
		b, _ := json.Marshal(t.Headers)
		out["headers"] = string(b)
	}
	if t.Emails != nil {
		b, _ := json.Marshal(t.Emails)
		out["emailAddresses"] = string(b)
	}
	return out
}
