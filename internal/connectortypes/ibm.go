package connectortypes

import "github.com/mgmtapi/mgmtapi/internal/oas"

// ibmEventNotificationsKind is stored and checked; mgmtapi sends nothing through it (no Sender).
var ibmEventNotificationsKind = Kind{
	Type: oas.ConnectorTypeIBMEVENTNOTIFICATIONS, EntityTypes: alertEntities,
	Config: []Field{
		{Name: "instanceCrn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
			Description: "The CRN of the IBM Cloud Event Notifications instance." + notDelivered},
		{Name: "region", Kind: oas.ConnectorFieldTypeSTRING, Required: true,
			AllowedValues: []string{"us-south", "us-east", "eu-de", "eu-gb", "eu-es", "au-syd", "jp-tok", "jp-osa", "ca-tor", "br-sao"},
			Description:   "The instance's region."},
		{Name: "sourceId", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
			Description: "The id of the API source the events are sent as."},
		{Name: "apiKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Sensitive: true,
			Description: "An IBM Cloud API key allowed to send to the instance."},
	},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypeIBMEVENTNOTIFICATIONS,
		Field{Name: "payload", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The event's data, a JSON object."},
	)},
}
