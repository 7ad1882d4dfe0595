package connectortypes

import (
	"errors"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DefaultIBMTokenURL is IBM Cloud IAM's token endpoint, where an API key is exchanged for the
// bearer token Event Notifications takes.
const DefaultIBMTokenURL = "https://iam.cloud.ibm.com/identity/token"

// ibmEventNotificationsKind sends CloudEvents notifications to an IBM Cloud Event Notifications
// instance, through the IBM_EVENT_NOTIFICATIONS outgoing webhook type's delivery
// (internal/notifiers), authorised by an IAM token exchanged for the connector's API key.
var ibmEventNotificationsKind = Kind{
	Type: oas.ConnectorTypeIBMEVENTNOTIFICATIONS, EntityTypes: alertEntities, Sender: ibmEventNotifications{},
	Config: []Field{
		{Name: "instanceCrn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Rule: checkCRN,
			Description: "The CRN of the IBM Cloud Event Notifications instance (crn:v1:bluemix:public:event-notifications:<region>:a/<account>:<instance id>::)."},
		{Name: "region", Kind: oas.ConnectorFieldTypeSTRING, Required: true,
			AllowedValues: []string{"us-south", "us-east", "eu-de", "eu-gb", "eu-es", "au-syd", "jp-tok", "jp-osa", "ca-tor", "br-sao"},
			Description:   "The instance's region: notifications are sent to https://<region>.event-notifications.cloud.ibm.com."},
		{Name: "sourceId", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
			Description: "The id of the API source the events are sent as."},
		{Name: "apiKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Sensitive: true,
			Description: "An IBM Cloud API key allowed to send to the instance: exchanged at IAM for the bearer token of each notification. Without it, notifications are sent without credentials (for a gateway that adds them)."},
		{Name: "notificationsUrl", Kind: oas.ConnectorFieldTypeURL,
			Description: "Where the notifications are posted instead of the region's endpoint (an mgmtapi setting, for a gateway or a test receiver)."},
		{Name: "iamUrl", Kind: oas.ConnectorFieldTypeURL, Default: DefaultIBMTokenURL,
			Description: "The IAM token endpoint the API key is exchanged at (an mgmtapi setting, for a test receiver)."},
	},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypeIBMEVENTNOTIFICATIONS,
		Field{Name: "payload", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The event's data, a JSON object."},
	)},
}

type ibmEventNotifications struct{}

// checkCRN requires an Event Notifications instance's CRN: its service name and an instance id.
func checkCRN(v string) error {
	if _, ok := crnInstance(v); !ok {
		return errors.New("must be the CRN of an Event Notifications instance (crn:v1:<cloud>:<type>:event-notifications:<region>:a/<account>:<instance id>::, its instance id in the eighth part)")
	}
	return nil
}

// crnInstance is the instance id of an Event Notifications CRN.
func crnInstance(crn string) (string, bool) {
	parts := strings.Split(crn, ":")
	if len(parts) < 8 || parts[0] != "crn" || parts[4] != "event-notifications" || parts[7] == "" {
		return "", false
	}
	return parts[7], true
}

// Compose: a notification of the IBM_EVENT_NOTIFICATIONS webhook type, to the connector's
// instance, region and source; resolved when the entity's status is Resolved (else triggered),
// the entity's labels as its fields, the rendered payload (a JSON object) as its data when set.
func (ibmEventNotifications) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	values := map[string]string{}
	for _, name := range []string{"instanceCrn", "region", "sourceId", "notificationsUrl", "iamUrl"} {
		v, err := c.Value(name, entity) // each one's template for the entity type wins
		if err != nil {
			return Outgoing{}, err
		}
		values[name] = v
	}
	instance, _ := crnInstance(values["instanceCrn"])
	settings := map[string]string{"eventNotificationsInstanceId": instance, "regionId": values["region"], "sourceId": values["sourceId"]}
	if k := c.Fields["apiKey"]; k != "" {
		settings["apiKey"], settings["iamUrl"] = k, values["iamUrl"]
	}
	status, severity := alertStatus(entity)
	if p := strings.TrimSpace(m.Fields["payload"]); p != "" {
		if _, err := jsonObject("payload", p); err != nil {
			return Outgoing{}, err
		}
		settings["data"] = p
	}
	return Outgoing{Webhook: &WebhookMessage{Type: "IBM_EVENT_NOTIFICATIONS", URL: values["notificationsUrl"], Settings: settings,
		Title: orEmpty(m.Fields["title"]), Text: m.Fields["description"], Status: status, Severity: severity,
		Fields: labelsOf(entity)}}, nil
}
